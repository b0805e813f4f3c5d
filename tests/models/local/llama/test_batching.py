"""Continuous batching on a tiny random Llama model: greedy tokens as transformers' argmax, and a row's
tokens independent of the batch, the workers and the shared prompt prefix."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.real_model]

torch = pytest.importorskip("torch")

PREFIX = [1, 12, 40, 7, 7, 19, 3, 88, 51, 2, 64, 30, 30, 9, 71, 5, 44, 23, 16, 8]  # 20 tokens


def _prompts(n: int, prefix: list[int] = PREFIX) -> list[list[int]]:
    return [prefix + [(11 * i + 3 * j) % 97 for j in range(1 + i % 5)] for i in range(n)]


def _generate(engine, prompts, *, max_tokens=5, temperature=0.0, stop_ids=frozenset(), seeds=None, **kw):
    from biaslab.models.local.sampling import Decoding

    out: dict[int, tuple[list[int], str, int]] = {}
    seeds = seeds or [100 + i for i in range(len(prompts))]
    decodings = [Decoding(temperature, 1.0 if temperature == 0 else 0.9, max_tokens, seed) for seed in seeds]
    engine.generate(
        prompts, decodings, set(stop_ids), lambda i, toks, reason, n: out.__setitem__(i, (list(toks), reason, n)), **kw
    )
    assert sorted(out) == list(range(len(prompts)))
    return [out[i] for i in range(len(prompts))]


def _hf_greedy(model, prompt: list[int], n: int) -> list[int]:
    ids = list(prompt)
    with torch.inference_mode():
        for _ in range(n):
            ids.append(int(model(torch.tensor([ids])).logits[0, -1].argmax()))
    return ids[len(prompt) :]


@pytest.fixture(scope="module")
def engine(tiny_llama):
    from biaslab.models.local.llama.engine import LlamaEngine

    return LlamaEngine(tiny_llama)


def test_shared_prefix_length():
    from biaslab.models.local.llama.batching import _shared_prefix

    prompts = _prompts(6)
    assert _shared_prefix(prompts, range(6)) == 16  # 20 shared tokens, cut to whole blocks of 8
    assert _shared_prefix(prompts, [2]) == 0  # one prompt: nothing to share
    assert _shared_prefix(prompts + [[1, 2, 3] * 10], range(7)) == 0  # under 16 tokens in common
    assert _shared_prefix([PREFIX[:17]] * 3, range(3)) == 16  # every prompt keeps a token of its own


def test_prompts_of_very_different_lengths_are_read_in_separate_passes():
    """A pass pads every prompt to its longest: prompts longer than twice the group's shortest plus 32 tokens
    start a group of their own (slots kept, shortest first)."""
    from biaslab.models.local.llama.batching import _length_groups

    assert _length_groups([5, 6, 7], [8, 4, 587]) == [[6, 5], [7]]  # 587 > 2 * 4 + 32
    assert _length_groups([0, 1, 2, 3], [40, 30, 92, 93]) == [[1, 0, 2], [3]]  # 92 = 2 * 30 + 32: still in
    assert _length_groups([3, 1], [50, 50]) == [[3, 1]]
    assert _length_groups([], []) == []


def test_greedy_tokens_are_the_model_argmax(engine, tiny_llama):
    long = [1] + [(7 * j) % 97 for j in range(60)]  # read apart from the short ones (other lengths)
    prompts = _prompts(10) + [[1, 4, 4, 60], [1, 90], long]  # with and without the shared prefix
    with torch.inference_mode():
        shared = _generate(engine, prompts[:10], max_slots=8, workers=1)
        mixed = _generate(engine, prompts, max_slots=8, workers=1)
    for p, (toks, reason, n_prompt) in zip(prompts, mixed):
        assert toks == _hf_greedy(tiny_llama, p, 5) and reason == "length" and n_prompt == len(p)
    assert [r[0] for r in shared] == [r[0] for r in mixed[:10]]


def test_rows_do_not_depend_on_batch_or_workers(engine):
    from biaslab.models.local.llama.batching import ContinuousBatcher

    prompts = _prompts(20)
    with torch.inference_mode():
        one = _generate(engine, prompts, temperature=1.0, max_tokens=7, max_slots=16, workers=1)
        two = _generate(engine, prompts, temperature=1.0, max_tokens=7, max_slots=16, workers=2)
        alone = [
            _generate(engine, [prompts[k]], temperature=1.0, max_tokens=7, seeds=[100 + k], workers=1)[0]
            for k in (0, 7, 19)
        ]
        # the engine's generate is its batcher's
        direct = _generate(ContinuousBatcher(engine), prompts, temperature=1.0, max_tokens=7, max_slots=16, workers=1)
    assert one == two == direct
    assert alone == [one[k] for k in (0, 7, 19)]
    assert len({tuple(t) for t, _, _ in one}) > 1
    assert engine.stats["decode_steps"] > 0 and engine.stats["prefill_tokens"] > 0


def test_stop_tokens_and_limits(engine, tiny_llama):
    prompts = _prompts(4)
    first = _hf_greedy(tiny_llama, prompts[0], 1)[0]
    with torch.inference_mode():
        res = _generate(engine, prompts, stop_ids={first}, workers=1)
        none = _generate(engine, prompts[:2], max_tokens=0, workers=1)
        near_end = _generate(engine, [list(range(1, 95))], max_tokens=5, workers=1)  # 94 of 96 positions
    assert res[0] == ([first], "stop", len(prompts[0]))  # the stop token is reported, the row freed
    assert all(reason == "length" or toks[-1] == first for toks, reason, _ in res)
    assert none == [([], "length", len(prompts[0])), ([], "length", len(prompts[1]))]
    assert len(near_end[0][0]) == 2 and near_end[0][1] == "length"
    with pytest.raises(ValueError, match="empty prompt"):
        _generate(engine, [[]], workers=1)
