"""Reproducible per-request sampling for the local backends.

Every generation request owns its random stream: a ``torch.Generator`` seeded from the
request's seed draws exactly one uniform number per generated token, and the token is the
inverse-CDF pick of that number in the (temperature-scaled, nucleus-truncated)
distribution. A row's text therefore depends only on its own prompt, parameters and seed,
never on which other requests share its batch or in what order they run, so a run resumed
after a crash (which batches differently) reproduces the same texts.

(Batched matrix products may round the last bit differently for different batch shapes; a
token can only change when its uniform number falls within ~1e-7 of a boundary between two
tokens, which in practice does not happen.)

Defaults, used when a :class:`~biaslab.models.base.GenerationParams` field is ``None``:

* ``temperature``: the checkpoint's ``generation_config.json`` value if it ships one that
  samples; otherwise :data:`DEFAULT_TEMPERATURE` (0.7). ``temperature == 0`` is greedy.
* ``top_p``: likewise, else :data:`DEFAULT_TOP_P` (0.95).
* ``max_tokens``: :data:`DEFAULT_MAX_TOKENS` (512).
* ``seed``: derived from the request itself (sha256 of its prompt, parameters and
  repetition index), so unseeded requests are reproducible too and repetitions differ.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from biaslab.models.base import GenerateRequest, stable_json

if TYPE_CHECKING:  # pragma: no cover
    import torch

DEFAULT_TEMPERATURE = 0.7
DEFAULT_TOP_P = 0.95
DEFAULT_MAX_TOKENS = 512


@dataclass(frozen=True)
class Decoding:
    """Fully resolved decoding settings of one request."""

    temperature: float
    top_p: float
    max_tokens: int
    seed: int


def default_seed(request: GenerateRequest) -> int:
    digest = hashlib.sha256(stable_json(request.as_key()).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "little") & ((1 << 63) - 1)


def resolve(
    request: GenerateRequest,
    *,
    temperature: float | None = None,
    top_p: float | None = None,
    max_tokens: int | None = None,
) -> Decoding:
    """Fill the request's ``None`` parameters with the model's (given) or biaslab's defaults."""
    p = request.params
    t = (
        p.temperature
        if p.temperature is not None
        else (temperature if temperature is not None else DEFAULT_TEMPERATURE)
    )
    tp = p.top_p if p.top_p is not None else (top_p if top_p is not None else DEFAULT_TOP_P)
    n = p.max_tokens if p.max_tokens is not None else (max_tokens if max_tokens is not None else DEFAULT_MAX_TOKENS)
    if t < 0:
        raise ValueError(f"temperature must be >= 0, got {t}")
    if not 0 < tp <= 1:
        raise ValueError(f"top_p must be in (0, 1], got {tp}")
    if n < 0:
        raise ValueError(f"max_tokens must be >= 0, got {n}")
    seed = p.seed if p.seed is not None else default_seed(request)
    return Decoding(float(t), float(tp), int(n), int(seed) & ((1 << 63) - 1))


def model_defaults(generation_config: object | None) -> tuple[float | None, float | None]:
    """``(temperature, top_p)`` from a checkpoint's own generation config, if it samples.

    A config transformers derived from the model config (no generation_config.json, e.g.
    for GGUF files) carries no decoding choice, so biaslab's defaults apply.
    """
    gc = generation_config
    if gc is None or getattr(gc, "_from_model_config", True):
        return None, None
    if not getattr(gc, "do_sample", False):
        return 0.0, None
    return getattr(gc, "temperature", None), getattr(gc, "top_p", None)


class RowRandom:
    """One generator per request; ``draw()`` advances it by exactly one uniform number."""

    __slots__ = ("gen",)

    def __init__(self, seed: int) -> None:
        import torch

        self.gen = torch.Generator(device="cpu")
        self.gen.manual_seed(seed)

    def draw(self) -> float:
        import torch

        return float(torch.rand((), generator=self.gen, dtype=torch.float64))


_TOPK_STEPS = (128, 2048)  # candidate-set sizes tried before sorting the whole vocabulary


def sample_rows(
    logits: torch.Tensor, temperatures: list[float], top_ps: list[float], uniforms: list[float]
) -> list[int]:
    """Pick one token per row of ``logits`` ([rows, vocab], any float dtype).

    Rows with temperature 0 take the argmax. Other rows draw by inverse CDF with their
    uniform number: with ``top_p == 1`` over the whole vocabulary in token-id order, else
    over the nucleus (the smallest set of most probable tokens, ties broken by token id,
    whose mass reaches ``top_p``) in descending order of probability. Every row is computed
    from its own values only, so the result does not depend on the other rows.
    """
    import torch

    n = logits.shape[0]
    out = [0] * n
    greedy = [i for i in range(n) if temperatures[i] <= 0]
    if greedy:
        gi = torch.tensor(greedy, dtype=torch.long, device=logits.device)
        for i, t in zip(greedy, logits.index_select(0, gi).argmax(dim=-1).tolist()):
            out[i] = int(t)
    rows = [i for i in range(n) if temperatures[i] > 0]
    if not rows:
        return out
    dev = logits.device
    sub = logits if len(rows) == n else logits.index_select(0, torch.tensor(rows, dtype=torch.long, device=dev))
    temps = torch.tensor([temperatures[i] for i in rows], dtype=torch.float32, device=dev)
    probs = torch.softmax(sub.float() / temps[:, None], dim=-1)
    us = torch.tensor([uniforms[i] for i in rows], dtype=torch.float64, device=dev)
    tps = torch.tensor([top_ps[i] for i in rows], dtype=torch.float64, device=dev)
    full = [j for j, i in enumerate(rows) if top_ps[i] >= 1.0]
    if full:  # whole vocabulary, token-id order
        fj = torch.tensor(full, dtype=torch.long, device=dev)
        cum = probs.index_select(0, fj).double().cumsum(-1)
        for j, t in zip(full, _pick(cum, us.index_select(0, fj), None)):
            out[rows[j]] = t
    todo = [j for j, i in enumerate(rows) if top_ps[i] < 1.0]
    vocab = probs.shape[-1]
    for k in _TOPK_STEPS + (vocab,):
        if not todo:
            break
        k = min(k, vocab)
        tj = torch.tensor(todo, dtype=torch.long, device=dev)
        vals, order = _sorted_top(probs if len(todo) == len(rows) else probs.index_select(0, tj), k)
        cum = vals.double().cumsum(-1)
        tp = tps.index_select(0, tj)
        covered = (cum[:, -1] >= tp) if k < vocab else torch.ones(len(todo), dtype=torch.bool, device=dev)
        # nucleus size: first index whose cumulative mass reaches top_p, plus one
        n_keep = (torch.searchsorted(cum, tp[:, None]).squeeze(1) + 1).clamp(max=k)
        picks = _pick(cum, us.index_select(0, tj), n_keep)
        toks = order.gather(1, torch.tensor(picks, dtype=torch.long, device=dev)[:, None]).squeeze(1).tolist()
        left = []
        for r, j in enumerate(todo):
            if bool(covered[r]):
                out[rows[j]] = int(toks[r])
            else:
                left.append(j)  # the nucleus is wider than the candidates: widen
        todo = left
    return out


def _pick(cum: torch.Tensor, us: torch.Tensor, n_keep: torch.Tensor | None) -> list[int]:
    """Per row, the index ``i < n_keep`` with ``cum[i-1] <= u * cum[n_keep-1] < cum[i]``."""
    import torch

    if n_keep is None:
        n_keep = torch.full((cum.shape[0],), cum.shape[-1], dtype=torch.long, device=cum.device)
    total = cum.gather(1, (n_keep - 1)[:, None])
    i = torch.searchsorted(cum, us[:, None] * total, right=True).squeeze(1)
    return torch.minimum(i, n_keep - 1).tolist()


def _sorted_top(values: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Top ``k`` values per row in descending order, ties by ascending index."""
    import torch

    if k >= values.shape[-1]:
        return torch.sort(values, dim=-1, descending=True, stable=True)
    vals, order = torch.topk(values, k, dim=-1, largest=True, sorted=True)
    # topk's order among equal values is unspecified: re-sort by (value desc, index asc).
    order, perm = torch.sort(order, dim=-1, stable=True)
    vals = vals.gather(1, perm)
    vals, perm = torch.sort(vals, dim=-1, descending=True, stable=True)
    return vals, order.gather(1, perm)
