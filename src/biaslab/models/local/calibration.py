"""How fast a local model runs on this machine: measured once, kept in the model store, used to estimate how long
a run will take before it starts (``--dry-run``, and the suite's estimate and ETA).

:func:`calibrate` loads the model (as a run would) and times, on the model's own engine with no stop token:

* decoding steps with 1, 8 and 32 sequences in flight (``step_seconds``: seconds per step, every sequence
  getting one new token per step): 17 new tokens from a 40-token prompt less 1 new token from it, over 16;
* what a longer context adds to a step (``context_seconds``: 8 sequences decoding from 256-token prompts
  against the short ones, per sequence and token of context);
* reading prompts (``prefill_tokens_per_s``: 8 prompts with nothing in common, 1 new token) and log-likelihood
  scoring (``score_tokens_per_s``: every token's distribution over the vocabulary, slower per token);
* the model's load (``load_seconds``: what a run pays before its first answer, with the model converted).

The step timings use prompts that differ only in their last token, whose common prefix the engine reads once: a
step costs what it costs with different prompts of that length, and the measurement reads a quarter of the
prompt tokens it would otherwise.

The result is kept in ``<model store>/calibration/`` under the model's identity, the thread count, the CPU and
the versions of biaslab and torch: another machine, thread count or version is measured anew. :func:`predict`
turns it into seconds for a run's requests by replaying the continuous engine's schedule (sequences enter as
slots free, each step costs the measured time of the sequences then in flight, interpolated between the measured
counts, and what their contexts add), plus the prompts' and the scored texts' tokens at the scoring rate.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

STEP_ROWS = (1, 8, 32)
STEP_TOKENS = 16
# Each step timing is taken this many times and the least kept (other work only slows a timing down): one timing of
# the 32-row steps taken here while the machine was busy for a moment (271 ms a step, 153 ms when measured again
# minutes later) made the quickstart's estimate 2 min 03 s, against 1 min 02 s and a real run of 68 s.
REPEATS = 2
METHOD = 3  # how the measurement is taken: a new method measures again (2: steps from shared prompt prefixes; 3: the
# engine's laid-out weights, whose steps cost less below 8 rows, and the least of REPEATS timings)
PREFILL_ROWS = 8  # prompts read together to measure the prefill rate
LONG_CONTEXT, LONG_ROWS = 256, 8  # the context at which a step's cost per token of context is measured
PROMPT = (
    "I am writing a novel and I need a character who works as a nurse. Please write a profile for such character. "
    "Describe the character's background, appearance and personality in a few paragraphs."
)


@dataclass
class Calibration:
    step_seconds: dict[int, float]  # sequences in flight -> seconds per decoding step, at short_context tokens
    score_tokens_per_s: float
    prefill_tokens_per_s: float
    load_seconds: float
    threads: int
    slots: int  # the engine's concurrent sequences (its max_slots)
    kv_bytes_per_token: int  # of the engine's KV cache, to size its slots for long requests
    kv_budget_bytes: int
    default_max_tokens: int = 512  # new tokens of a request that sets no max_tokens
    context_seconds: float = 0.0  # a step's further seconds per sequence and token of context past short_context
    short_context: int = 0
    others: float | None = None  # other processes' demand (cores) when measured
    measured_at: str = ""

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "step_seconds": {str(k): v for k, v in self.step_seconds.items()}}

    @classmethod
    def from_json(cls, row: dict[str, Any]) -> Calibration:
        return cls(**{**row, "step_seconds": {int(k): float(v) for k, v in row["step_seconds"].items()}})

    def step(self, rows: int) -> float:
        """Seconds per decoding step with ``rows`` sequences in flight (linear between the measured counts)."""
        return cal_step(self.step_seconds, rows)


def cal_step(step_seconds: dict[int, float], rows: int) -> float:
    """Seconds per step with ``rows`` sequences in flight, linear between (and past) the measured counts."""
    pts = sorted(step_seconds.items())
    if rows <= pts[0][0] or len(pts) == 1:
        return pts[0][1] if rows <= pts[0][0] else pts[0][1] * rows / pts[0][0]
    for (r0, s0), (r1, s1) in zip(pts, pts[1:]):
        if rows <= r1:
            return s0 + (s1 - s0) * (rows - r0) / (r1 - r0)
    (r0, s0), (r1, s1) = pts[-2], pts[-1]
    return s1 + (s1 - s0) * (rows - r1) / (r1 - r0)  # past the largest: the last slope


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def calibration_file(identity: dict[str, Any], threads: int) -> Path:
    """Where the calibration of a model (its identity) at ``threads`` threads on this machine is kept."""
    import torch

    from biaslab import __version__
    from biaslab.models.store import models_dir

    key = json.dumps(
        [identity, threads, _cpu_name(), os.cpu_count(), __version__, torch.__version__, METHOD],
        sort_keys=True,
        default=str,
    )
    return models_dir() / "calibration" / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"


def cached(identity: dict[str, Any], threads: int) -> Calibration | None:
    try:
        return Calibration.from_json(json.loads(calibration_file(identity, threads).read_text()))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def calibrate(backend: Any, identity: dict[str, Any], load_seconds: float) -> Calibration:
    """Measure ``backend`` (a loaded :class:`~.backend.TransformersBackend` of the model ``identity``) and keep the
    result (see the module)."""
    import torch

    from biaslab.io import atomic_write_text
    from biaslab.models.base import GenerateRequest
    from biaslab.models.local.llama.engine import LlamaEngine
    from biaslab.models.local.sampling import Decoding
    from biaslab.models.local.static_generation import generate_static

    choice = backend.threads
    tok = backend._m.tokenizer
    prompt = list(tok(PROMPT)["input_ids"])
    engine: LlamaEngine | None = backend._engine()

    def run(rows: int, new: int, length: int = 0, shared: bool = True) -> float:
        """Seconds to answer ``rows`` requests of ``new`` tokens each from prompts of ``length`` tokens (default:
        the sample prompt's). ``shared``: the prompts differ only in their last token, so the engine reads their
        common prefix once (a step costs the same: every sequence attends to its whole context); otherwise they
        differ from their second token on, and every prompt is read in full."""
        base = (prompt * (1 + length // len(prompt)))[: max(length, len(prompt))]
        if shared:
            prompts = [[*base[:-1], 1000 + i] for i in range(rows)]
        else:
            prompts = [[base[0], 1000 + i, *base[2:]] for i in range(rows)]
        decodings = [Decoding(0.7, 0.95, new, 1000 + i) for i in range(rows)]
        t0 = time.perf_counter()
        with torch.inference_mode():
            if engine is not None:
                engine.generate(prompts, decodings, set(), lambda *a: None, max_slots=backend.max_slots,
                                kv_budget_bytes=backend.kv_budget_bytes, workers=backend.workers)  # fmt: skip
            else:
                generate_static(backend._m.model, backend._m.device, prompts, decodings, lambda *a: None,
                                batch_size=backend.batch_size, stop_ids=set(), pad_id=backend._pad_id)  # fmt: skip
        return time.perf_counter() - t0

    def fastest(rows: int, new: int, length: int = 0) -> float:
        """The least of :data:`REPEATS` timings of ``run``: other work slows a timing down, never speeds it up."""
        return min(run(rows, new, length) for _ in range(REPEATS))

    run(1, 2)  # warm-up: kernels, caches
    texts = [prompt[: 8 + (i * 7) % len(prompt)] + prompt for i in range(8)]
    rate = _score_rate(backend, texts)
    steps = {}
    for rows in sorted({min(r, backend.max_slots) for r in STEP_ROWS}):
        first = fastest(rows, 1)  # the prompts read and one token
        steps[rows] = max(1e-4, (fastest(rows, 1 + STEP_TOKENS) - first) / STEP_TOKENS)
    rows = min(PREFILL_ROWS, backend.max_slots)  # prompts with nothing in common, read together
    prefill = rows * len(prompt) / max(1e-6, run(rows, 1, shared=False) - cal_step(steps, rows))
    long, rows = LONG_CONTEXT, min(LONG_ROWS, backend.max_slots)  # the cost of attending to a longer context
    at_long = (fastest(rows, 1 + STEP_TOKENS, long) - fastest(rows, 1, long)) / STEP_TOKENS
    short = len(prompt) + STEP_TOKENS // 2
    per_token = max(0.0, (at_long - cal_step(steps, rows)) / (rows * (long - len(prompt))))
    cfg = backend._m.model.config
    layers = int(getattr(cfg, "num_hidden_layers", 0) or 0)
    kv_heads = int(getattr(cfg, "num_key_value_heads", 0) or getattr(cfg, "num_attention_heads", 0) or 0)
    head_dim = int(getattr(cfg, "head_dim", 0) or (cfg.hidden_size // max(1, cfg.num_attention_heads)))
    cal = Calibration(
        step_seconds=steps,
        score_tokens_per_s=rate,
        context_seconds=per_token,
        short_context=short,
        prefill_tokens_per_s=max(rate, prefill),
        others=choice.others,
        load_seconds=round(load_seconds, 2),
        threads=choice.torch_threads,
        slots=backend.max_slots,
        kv_bytes_per_token=2 * layers * kv_heads * head_dim * torch.finfo(backend._m.dtype).bits // 8,
        kv_budget_bytes=backend.kv_budget_bytes,
        default_max_tokens=backend._decoding(GenerateRequest.chat("Hi")).max_tokens,
        measured_at=time.strftime("%Y-%m-%d %H:%M"),
    )
    try:
        path = calibration_file(identity, choice.torch_threads)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps(cal.to_json(), indent=1) + "\n")
    except OSError:  # a read-only store: measured again next time
        pass
    return cal


def _score_rate(backend: Any, texts: list[list[int]]) -> float:
    """Tokens per second of scoring ``texts`` with the backend's scoring path."""
    from biaslab.models.base import LoglikelihoodRequest

    tok = backend._m.tokenizer
    requests = [LoglikelihoodRequest(tok.decode(t[1:] if t and t[0] == tok.bos_token_id else t)) for t in texts]
    t0 = time.perf_counter()
    backend.loglikelihood(requests)
    return sum(len(t) for t in texts) / max(1e-6, time.perf_counter() - t0)


def predict(cal: Calibration, generations: list[tuple[int, int]], scored_tokens: int) -> float:
    """Seconds to answer ``generations`` ((prompt tokens, new tokens) each, in the order sent) and to score
    ``scored_tokens`` tokens, on the calibrated model: the continuous engine's schedule replayed."""
    seconds = scored_tokens / cal.score_tokens_per_s
    if not generations:
        return seconds
    longest = max(p + n for p, n in generations)
    slots = max(1, min(cal.slots, cal.kv_budget_bytes // max(1, cal.kv_bytes_per_token * longest)))
    seconds += sum(p for p, _ in generations) / cal.prefill_tokens_per_s
    queue = [(max(1, n), p) for p, n in generations]
    active: list[list[int]] = []  # [steps left, context length] of each sequence in flight
    nxt = 0
    while nxt < len(queue) or active:
        while len(active) < slots and nxt < len(queue):
            active.append(list(queue[nxt]))
            nxt += 1
        run = min(a[0] for a in active)  # steps until the next sequence ends
        rows, context = len(active), sum(a[1] for a in active)  # each step adds a token to every context
        extra = run * (context - rows * cal.short_context) + rows * run * (run - 1) / 2
        seconds += run * cal.step(rows) + cal.context_seconds * max(0.0, extra)
        active = [[a[0] - run, a[1] + run] for a in active if a[0] > run]
    return seconds
