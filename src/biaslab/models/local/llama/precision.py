"""Reduced precision for the engine's log-likelihood path (the ``precision=bf16`` model option).

With ``precision=bf16`` the engine's layer matrix products take bfloat16 inputs and weights
(:func:`.decoder._mixed`), and the LM head of the scoring path is :class:`ReducedHead`: the
vocabulary-sized product in bfloat16, its few large logits recomputed exactly. The residual stream,
norms, attention and the log-normaliser stay in float32. On a CPU with AVX512-BF16 (or AMX) a
bfloat16 product runs about 2.2x faster than float32 (single-threaded oneDNN: 8.7 ms against
19-21 ms for 512 x 576 x 3072, 72-77 ms against 175-183 ms for the 256 x 576 x 49,152 head).
torch's bfloat16 products round their outputs to bfloat16 as well; no torch operator on this
kind of CPU returns their float32 sums (MKL's ``cblas_gemm_bf16bf16f32`` does, but on AMD CPUs it
runs slower than float32; oneDNN's bf16 "fpmath" mode for float32 products is ignored without
AMX). Tried and left out: int8 products (``torch._int_mm``, about 4x float32) round activations
to 7 bits of their row's largest value, far coarser than bfloat16; keeping the gate/up outputs in
bfloat16 through the activation (one conversion less, about 5 % faster) made the error's tail
heavier (largest error of a pair's difference over 2,000 pairs 0.71 against 0.52 nats).

Where the error comes from (SmolLM2-135M, 400 WinoSemitism pairs, each rounding emulated on its own
in float32; the standard deviation of the error of a pair's score difference, in nats):
activations rounded to bfloat16 0.045, weights 0.015, products' outputs 0.062, all three 0.074
(spread over the four products of every layer: q/k/v 0.036, o 0.022, gate/up 0.047, down 0.037 each
alone; no layer or product dominates). The head below adds 0.014. Near-ties are common in paired
benchmarks (16 of those 400 pairs differ by less than 0.05 nats at float32), so about 9 of 400
decisions flip: reduced precision alone cannot promise float32's decisions. The probes that decide
pairs therefore re-score their close pairs with the model at float32 (:mod:`biaslab.probing.recheck`).

The LM head (:class:`ReducedHead`): the logits of a row in bfloat16 are off by up to 2^-9 of their
size (0.04 for a logit of 20), which moves a log-probability through its own logit and through the
log-normaliser, where the largest logits dominate. So the target token's logit and the ``top_k``
largest logits of each row (by their bfloat16 values) are recomputed in float32 from the float32
weights (a gathered dot product per entry); the others, each contributing little to the normaliser,
keep their bfloat16 values. The flag "target is the argmax" comes from the recomputed logits.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

REDUCED_DTYPES = {"bf16": torch.bfloat16}  # the matrix-product dtype of each reduced ``precision`` value
TOP_K = 16  # logits per row recomputed exactly in the reduced head
PACK_ROWS = 512  # the batch size oneDNN's weight layout is chosen for (any number of rows works)
_MKLDNN = getattr(torch.ops, "mkldnn", None)
# oneDNN's operators (internal to torch; None where this torch lacks them): lay a weight out, and multiply by one
REORDER: Callable[..., Any] | None = getattr(_MKLDNN, "_reorder_linear_weight", None)
LINEAR_POINTWISE: Callable[..., Any] | None = getattr(_MKLDNN, "_linear_pointwise", None)


def pack_weight(w: torch.Tensor) -> torch.Tensor:
    """A reduced-precision weight [out, in] in oneDNN's blocked layout (an opaque ``torch._mkldnn``
    tensor), which :func:`reduced_linear` multiplies without re-laying it out on every call: the
    same products, 2-8 % faster for hundreds of rows and 2.6x for one (bfloat16, 576 x 3,072). The
    weight as it is where torch lacks these internal ops or they do not give F.linear's numbers."""
    if w.device.type != "cpu" or not _packing_works(w.dtype):
        return w
    assert REORDER is not None  # _packing_works checked it
    return REORDER(w, PACK_ROWS)


@functools.cache
def _packing_works(dtype: torch.dtype) -> bool:
    """Whether this torch has the internal ops :func:`pack_weight` uses, and they multiply as F.linear does."""
    if REORDER is None or LINEAR_POINTWISE is None or not torch.backends.mkldnn.is_available():
        return False
    try:
        g = torch.Generator().manual_seed(0)
        w, x = torch.randn(24, 16, generator=g).to(dtype), torch.randn(3, 16, generator=g).to(dtype)
        got = LINEAR_POINTWISE(x, REORDER(w, PACK_ROWS), None, "none", [], "")
        return bool(torch.allclose(got.float(), F.linear(x, w).float(), rtol=1e-2, atol=1e-3))
    except Exception:
        return False


def reduced_linear(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """``x @ w.T`` for ``x`` already in ``w``'s (reduced) dtype, ``w`` plain or from :func:`pack_weight`."""
    if w.is_mkldnn:
        assert LINEAR_POINTWISE is not None  # only pack_weight makes such weights, after _packing_works
        return LINEAR_POINTWISE(x, w, None, "none", [], "")
    return F.linear(x, w)


class ReducedHead:
    """Log-probabilities of target tokens from a bfloat16 LM head, the large logits recomputed in float32."""

    def __init__(
        self, weight: torch.Tensor, dtype: torch.dtype, top_k: int = TOP_K, softcap: float | None = None
    ) -> None:
        self.weight = weight.detach()  # [vocab, hidden], float32
        self.low = pack_weight(self.weight.to(dtype))
        self.top_k = min(top_k, self.weight.shape[0])
        self.softcap = softcap

    def _cap(self, logits: torch.Tensor) -> torch.Tensor:
        c = self.softcap
        return logits if c is None else torch.tanh(logits / c) * c

    def logprobs(self, h: torch.Tensor, rows: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``h`` [R, hidden] (normalised hidden states, float32); for each entry ``(rows[e], targets[e])``:
        log P(target | row) and whether the target is the row's most likely token."""
        approx = reduced_linear(h.to(self.low.dtype), self.low)  # [R, vocab]
        top = approx.topk(self.top_k, dim=-1).indices  # [R, k]: the logits the normaliser depends on most
        exact_top = self._cap(torch.bmm(self.weight[top], h[:, :, None])[..., 0])  # [R, k], float32
        shift = exact_top.max(dim=-1).values
        total = (exact_top - shift[:, None]).exp().sum(dim=-1)
        if self.top_k < approx.shape[-1]:  # the other logits' terms, at their rounded values
            rounded_lse, rounded_top = self._rounded_lse(approx, top)
            rest = (rounded_lse - shift).exp() - (rounded_top - shift[:, None]).exp().sum(dim=-1)
            total += rest.clamp_min(0.0)
        lse = shift + total.log()
        picked = self._cap((h[rows] * self.weight[targets]).sum(dim=-1))
        best = top.gather(1, exact_top.argmax(dim=-1, keepdim=True))[:, 0]
        return picked - lse[rows], best[rows] == targets

    def _rounded_lse(self, approx: torch.Tensor, top: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """log sum exp of each row of the (capped) reduced-precision logits ``approx``, and their values at
        ``top`` (float32). Without a softcap, from the softmax kernel on ``approx`` as it is (it sums in
        float32, with no float32 copy of the logits: 2.4x faster than one): a row's log normaliser is
        ``logit - log p`` at any entry, which the rounding of ``p`` moves by up to 2^-8; averaged over the
        ``top`` entries, whose errors are independent (those whose ``p`` is too small to hold that
        precision left out)."""
        if self.softcap is None:
            rounded_top = approx.gather(1, top).float()
            p_top = torch.softmax(approx, dim=-1).gather(1, top).float()
            usable = p_top >= torch.finfo(approx.dtype).tiny  # the largest always is (p >= 1/vocab)
            estimates = torch.where(usable, rounded_top - p_top.clamp_min(1e-38).log(), 0.0)
            return estimates.sum(dim=-1) / usable.sum(dim=-1), rounded_top
        logits = self._cap(approx.float())
        return torch.logsumexp(logits, dim=-1), logits.gather(1, top)
