"""Continuous-batching generation for Llama-architecture checkpoints (SmolLM2, Llama, ...), Mistral, Qwen2/2.5,
Qwen3 and Gemma 3 text models.

``transformers``' ``generate`` runs static batches: every row waits for the longest one, and
a batch pays Python overhead on every layer for every step. For the small models biaslab
ships, generation is dominated by that waste, so this engine runs the decoder itself on the
weights of the already loaded ``LlamaForCausalLM`` (or ``MistralForCausalLM``, ``Qwen2ForCausalLM``,
``Qwen3ForCausalLM``, ``Gemma3ForCausalLM``: what differs is described by an
:class:`.architecture.Architecture`, which the shared decoder layer follows):

* a fixed number of *slots*, each with its own row of a preallocated KV cache (sized from
  ``kv_budget_bytes`` and the longest prompt + max_tokens of the call);
* every step decodes one token for all busy slots together (one matrix product per weight);
* a finished request frees its slot, and waiting requests are prefilled into free slots,
  so the batch stays full until the queue is empty (continuous batching);
* the prompt prefix that all requests of a call share (chat template, system prompt, the
  probe's fixed wording) is prefilled once and copied into each new slot;
* on CPU the slots are split between ``workers`` decoding loops (one per core), each in its
  own Python thread running single-threaded torch ops: a 2-thread torch synchronises its
  threads on every small operation and slows down 5-10x whenever another process takes a
  core, independent loops do not;
* q/k/v and gate/up projections are fused into single matrix products (the model's own
  Linear layers are re-pointed at views of the fused weights, so memory is not doubled and
  the transformers model keeps working, e.g. for log-likelihood scoring).

Reproducibility: sampling is per request (:mod:`..sampling`), and matrix products
always get whole blocks of rows (:data:`ROW_MULTIPLE`), so a row's numbers are bit-identical
whatever else shares the batch. The attention over a longer padded cache or a differently
grouped prefill can still move the last bits (~1e-7 relative); a sampled token changes only
if its uniform number falls that close to a boundary between two tokens, which we have not
observed. The engine is checked against the transformers forward pass in the tests.

This module holds :class:`LlamaEngine`: a :class:`.decoder.Decoder` (the weights, fused, the math the
decoding and scoring paths share and the decoder over the KV cache, :mod:`.decoder`) composed with the two
loops that use it, each given the decoder: :class:`.batching.ContinuousBatcher`
(slots, queue, workers, prefill and decode steps: :meth:`LlamaEngine.generate`) and
:class:`.scoring.PackedScorer` (teacher-forced scoring of whole texts in packed prefix trees, the
log-likelihood path: :meth:`LlamaEngine.score`). The KV cache is :class:`.kv_cache.KVCache`; worker
threads, heap settings and :data:`.runtime.ROW_MULTIPLE` are in :mod:`.runtime`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import torch

from biaslab.models.local.llama.architecture import MODEL_TYPES
from biaslab.models.local.llama.architecture import supports as supports
from biaslab.models.local.llama.batching import KV_BUDGET_BYTES, MAX_SLOTS, ContinuousBatcher, OnFinish
from biaslab.models.local.llama.decoder import Decoder
from biaslab.models.local.llama.scoring import BATCH_TOKENS, PACK_TOKENS, OnScored, PackedScorer
from biaslab.models.local.sampling import Decoding

SUPPORTED_MODEL_TYPES = MODEL_TYPES


class LlamaEngine(Decoder):
    """Runs a loaded causal LM of an architecture in :data:`SUPPORTED_MODEL_TYPES` on its own weights:
    generation and scoring (see the module)."""

    def __init__(self, model: torch.nn.Module, matmul_dtype: torch.dtype | None = None, *, pack: bool = True) -> None:
        super().__init__(model, matmul_dtype, pack=pack)
        self.batcher = ContinuousBatcher(self)
        self.scorer = PackedScorer(self)

    # -- generation and scoring (the loops that use the engine) ------------------------------
    def generate(
        self,
        prompts: Sequence[list[int]],
        decodings: Sequence[Decoding],
        stop_ids: set[int],
        on_finish: OnFinish,
        *,
        max_slots: int = MAX_SLOTS,
        kv_budget_bytes: int = KV_BUDGET_BYTES,
        workers: int | None = None,
    ) -> None:
        """Generate for all prompts by continuous batching (:meth:`.batching.ContinuousBatcher.generate`)."""
        self.batcher.generate(
            prompts,
            decodings,
            stop_ids,
            on_finish,
            max_slots=max_slots,
            kv_budget_bytes=kv_budget_bytes,
            workers=workers,
        )

    def score(
        self,
        texts: Sequence[list[int]],
        on_scored: OnScored,
        *,
        batch_tokens: int = BATCH_TOKENS,
        workers: int | None = None,
        pack_tokens: int = PACK_TOKENS,
        skip: Collection[int] = (),
    ) -> None:
        """Score every token of every text in packed prefix trees (:meth:`.scoring.PackedScorer.score`)."""
        self.scorer.score(
            texts, on_scored, batch_tokens=batch_tokens, workers=workers, pack_tokens=pack_tokens, skip=skip
        )
