"""Generation with transformers' ``generate``, for the architectures the Llama engine does not run.

Prompts are sorted by length and left-padded into static batches of ``batch_size`` rows.
``generate`` runs greedily with :class:`SamplerProcessor` plugged in as a logits processor:
it samples each row with the row's own random stream (:mod:`.sampling`, the same sampler as the
continuous-batching engine) and forces the pick, so a request's text does not depend on the
other requests of its batch. A row that reaches its own token limit is forced to a stop token,
which is dropped from its result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from biaslab.models.local import sampling as local_sampling

OnFinish = Callable[[int, list[int], str, int], None]  # (request index, new tokens, finish reason, n_prompt)


def generate_static(
    model: Any,
    device: torch.device,
    prompts: list[list[int]],
    decodings: list[local_sampling.Decoding],
    finish: OnFinish,
    *,
    batch_size: int,
    stop_ids: set[int],
    pad_id: int,
) -> None:
    """Generate for every prompt with ``model.generate``, calling ``finish`` as each batch completes."""
    from transformers import GenerationConfig, LogitsProcessorList

    max_pos = getattr(model.config, "max_position_embeddings", None) or 1 << 30
    order = sorted(range(len(prompts)), key=lambda i: (-len(prompts[i]), i))
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        limits = [max(0, min(decodings[i].max_tokens, max_pos - len(prompts[i]))) for i in rows]
        for i, n in zip(rows, limits):
            if n == 0:
                finish(i, [], "length", len(prompts[i]))
        live = [(i, n) for i, n in zip(rows, limits) if n > 0]
        if not live:
            continue
        width = max(len(prompts[i]) for i, _ in live)
        ids = torch.full((len(live), width), pad_id, dtype=torch.long)
        mask = torch.zeros((len(live), width), dtype=torch.long)
        for r, (i, _) in enumerate(live):
            p = prompts[i]
            ids[r, width - len(p) :] = torch.tensor(p, dtype=torch.long)
            mask[r, width - len(p) :] = 1
        sampler = SamplerProcessor([decodings[i] for i, _ in live], [n for _, n in live], width, stop_ids, pad_id)
        config = GenerationConfig(
            do_sample=False,
            max_new_tokens=max(n for _, n in live) + 1,
            eos_token_id=sorted(stop_ids) or [pad_id],
            pad_token_id=pad_id,
        )
        out = model.generate(
            input_ids=ids.to(device),
            attention_mask=mask.to(device),
            generation_config=config,
            logits_processor=LogitsProcessorList([sampler]),
        )
        new = out[:, width:].tolist()
        for r, (i, n) in enumerate(live):
            toks: list[int] = []
            reason = "length"
            for t in new[r]:
                if t in stop_ids:
                    if len(toks) < n:
                        toks.append(t)
                        reason = "stop"
                    break
                toks.append(t)
                if len(toks) >= n:
                    break
            finish(i, toks, reason, len(prompts[i]))


class SamplerProcessor:
    """A logits processor that samples each row with its own generator and forces the pick.

    ``generate`` then runs greedily, so it only ever takes the token chosen here. A row that
    reaches its own token limit is forced to a stop token (dropped afterwards).
    """

    def __init__(
        self,
        decodings: list[local_sampling.Decoding],
        limits: list[int],
        prompt_width: int,
        stop_ids: set[int],
        pad_id: int,
    ) -> None:
        self.decodings = decodings
        self.limits = limits
        self.width = prompt_width
        self.rngs = [local_sampling.RowRandom(d.seed) for d in decodings]
        self.stop = min(stop_ids) if stop_ids else pad_id

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        step = input_ids.shape[1] - self.width
        temps = [d.temperature for d in self.decodings]
        tps = [d.top_p for d in self.decodings]
        us = [g.draw() for g in self.rngs]
        toks = local_sampling.sample_rows(scores, temps, tps, us)
        toks = [self.stop if step >= lim else t for t, lim in zip(toks, self.limits)]
        forced = torch.full_like(scores, float("-inf"))
        forced[torch.arange(len(toks), device=scores.device), torch.tensor(toks, device=scores.device)] = 0.0
        return forced
