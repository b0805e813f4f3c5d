"""Reduced precision for the engine's log-likelihood path (the ``precision=bf16`` model option).

With ``precision=bf16`` the engine's layer matrix products take bfloat16 inputs and weights
(:func:`.engine._mixed`), and the LM head of the scoring path is :class:`ReducedHead`: the
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

import torch
import torch.nn.functional as F

REDUCED_DTYPES = {"bf16": torch.bfloat16}  # the matrix-product dtype of each reduced ``precision`` value
TOP_K = 16  # logits per row recomputed exactly in the reduced head


class ReducedHead:
    """Log-probabilities of target tokens from a bfloat16 LM head, the large logits recomputed in float32."""

    def __init__(self, weight: torch.Tensor, dtype: torch.dtype, top_k: int = TOP_K,
                 softcap: float | None = None) -> None:
        self.weight = weight.detach()  # [vocab, hidden], float32
        self.low = self.weight.to(dtype)
        self.top_k = min(top_k, self.weight.shape[0])
        self.softcap = softcap

    def _cap(self, logits: torch.Tensor) -> torch.Tensor:
        c = self.softcap
        return logits if c is None else torch.tanh(logits / c) * c

    def logprobs(self, h: torch.Tensor, rows: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``h`` [R, hidden] (normalised hidden states, float32); for each entry ``(rows[e], targets[e])``:
        log P(target | row) and whether the target is the row's most likely token."""
        approx = F.linear(h.to(self.low.dtype), self.low)  # [R, vocab]
        top = approx.topk(self.top_k, dim=-1).indices  # [R, k]: the logits the normaliser depends on most
        exact_top = self._cap(torch.bmm(self.weight[top], h[:, :, None])[..., 0])  # [R, k], float32
        logits = self._cap(approx.float())
        shift = exact_top.max(dim=-1).values[:, None]
        rounded_top = logits.gather(1, top)
        total = logits.sub_(shift).exp_().sum(dim=-1)
        # the top-k terms: their exact values in place of the rounded ones
        total += (exact_top - shift).exp().sum(dim=-1) - (rounded_top - shift).exp().sum(dim=-1)
        lse = shift[:, 0] + total.log()
        picked = self._cap((h[rows] * self.weight[targets]).sum(dim=-1))
        best = top.gather(1, exact_top.argmax(dim=-1, keepdim=True))[:, 0]
        return picked - lse[rows], best[rows] == targets
