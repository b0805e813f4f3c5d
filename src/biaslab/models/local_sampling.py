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

from .base import GenerateRequest, stable_json

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


def resolve(request: GenerateRequest, *, temperature: float | None = None, top_p: float | None = None,
            max_tokens: int | None = None) -> Decoding:
    """Fill the request's ``None`` parameters with the model's (given) or biaslab's defaults."""
    p = request.params
    t = p.temperature if p.temperature is not None else (temperature if temperature is not None else DEFAULT_TEMPERATURE)
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


_TOPK_STEPS = (256, 4096)  # candidate-set sizes tried before sorting the whole vocabulary


def sample_rows(logits: "torch.Tensor", temperatures: list[float], top_ps: list[float],
                uniforms: list[float]) -> list[int]:
    """Pick one token per row of ``logits`` ([rows, vocab], any float dtype).

    Rows with temperature 0 take the argmax. Other rows draw by inverse CDF with their
    uniform number: with ``top_p == 1`` over the whole vocabulary in token-id order, else
    over the nucleus (the smallest set of most probable tokens, ties broken by token id,
    whose mass reaches ``top_p``) in descending order of probability. Every row is computed
    from its own values only, so the result does not depend on the other rows.
    """
    import torch

    out = logits.argmax(dim=-1).tolist()
    rows = [i for i, t in enumerate(temperatures) if t > 0]
    if not rows:
        return out
    idx = torch.tensor(rows, dtype=torch.long, device=logits.device)
    temps = torch.tensor([temperatures[i] for i in rows], dtype=torch.float32, device=logits.device)
    scaled = logits.index_select(0, idx).float()
    scaled /= temps[:, None]
    lse = torch.logsumexp(scaled, dim=-1, keepdim=True)
    todo = []
    for j, i in enumerate(rows):
        if top_ps[i] >= 1.0:
            probs = torch.exp(scaled[j].double() - lse[j].double())
            out[i] = _inverse_cdf(probs, uniforms[i])
        else:
            todo.append(j)
    vocab = scaled.shape[-1]
    for k in _TOPK_STEPS + (vocab,):
        if not todo:
            break
        k = min(k, vocab)
        sub = torch.tensor(todo, dtype=torch.long, device=logits.device)
        vals, order = _sorted_top(scaled.index_select(0, sub), k)
        probs = torch.exp(vals.double() - lse.index_select(0, sub).double())
        cum = probs.cumsum(-1)
        left = []
        for r, j in enumerate(todo):
            tp = top_ps[rows[j]]
            if k < vocab and float(cum[r, -1]) < tp:
                left.append(j)  # the nucleus is wider than the candidates: widen
                continue
            n_keep = int(torch.searchsorted(cum[r], torch.tensor([tp], dtype=torch.float64))[0]) + 1
            n_keep = min(n_keep, k)
            out[rows[j]] = int(order[r, _inverse_cdf(probs[r, :n_keep], uniforms[rows[j]])])
        todo = left
    return out


def _inverse_cdf(probs: "torch.Tensor", u: float) -> int:
    """Index ``i`` with ``cum[i-1] <= u * total < cum[i]`` (probs: 1-D, float64)."""
    import torch

    cum = probs.cumsum(0)
    target = torch.tensor([u * float(cum[-1])], dtype=torch.float64)
    i = int(torch.searchsorted(cum, target, right=True)[0])
    last = int((probs > 0).nonzero().max()) if i >= len(probs) else i
    return min(i, last)


def _sorted_top(values: "torch.Tensor", k: int) -> tuple["torch.Tensor", "torch.Tensor"]:
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
