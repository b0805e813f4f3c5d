"""Checks of the engine against transformers on the same model, shared by the architecture tests."""

from __future__ import annotations


def hf_logits(model, ids):
    """transformers' logits [len(ids), vocab] of the whole sequence ``ids``."""
    import torch

    with torch.inference_mode():
        return model(torch.tensor([ids])).logits[0]


def assert_greedy_is_the_model_argmax(model, engine, prefix: list[int], n_prompts: int, steps: int = 8) -> None:
    """``n_prompts`` prompts sharing ``prefix`` (prefilled once) and two short ones, generated greedily by the
    engine with one and two workers, give the tokens of transformers' argmax recomputed at every step."""
    import torch

    from biaslab.models.local.sampling import Decoding

    prompts = [prefix + [(11 * i + 3 * j) % 97 for j in range(1 + i % 4)] for i in range(n_prompts)]
    prompts += [[1, 4, 60], [1, 90]]
    want = []
    for p in prompts:
        ids = list(p)
        for _ in range(steps):
            ids.append(int(hf_logits(model, ids)[-1].argmax()))
        want.append(ids[len(p) :])
    for kw in (dict(workers=1, max_slots=8), dict(workers=2, max_slots=16)):
        out: dict[int, list[int]] = {}
        with torch.inference_mode():
            engine.generate(
                prompts,
                [Decoding(0.0, 1.0, steps, 7 + i) for i in range(len(prompts))],
                set(),
                lambda i, toks, reason, n, out=out: out.__setitem__(i, list(toks)),
                **kw,
            )
        assert [out[i] for i in range(len(prompts))] == want, kw


def assert_packed_scoring_matches(model, engine, texts: list[list[int]]) -> None:
    """The engine's packed scoring of ``texts`` (one worker, and two with tiny batches and packs) gives
    transformers' log-probability (to 1e-4) and argmax flag of every token after the first."""
    import pytest
    import torch

    from biaslab.models.local.llama.scoring import PackedScorer

    want = []
    for ids in texts:
        logp = torch.log_softmax(hf_logits(model, ids).float(), -1)
        want.append(
            (
                [float(logp[p - 1, ids[p]]) for p in range(1, len(ids))],
                [int(logp[p - 1].argmax()) == ids[p] for p in range(1, len(ids))],
            )
        )
    for kw in (dict(workers=1), dict(workers=2, batch_tokens=8, pack_tokens=6)):
        got: dict[int, tuple[list[float], list[bool]]] = {}
        PackedScorer(engine).score(texts, lambda i, lp, top, got=got: got.__setitem__(i, (lp, top)), **kw)
        for i, (lp, top) in enumerate(want):
            assert got[i][0] == pytest.approx(lp, abs=1e-4) and got[i][1] == top, (i, kw)
