"""Close pairs re-scored at the reference precision, so paired decisions match float32's.

A model run at reduced precision (a local model's ``precision=bf16``) scores every sentence with a
small error, and a pair's decision (which of its two sentences scores higher) flips wherever the
error of the pair's score difference is larger than the difference itself. Paired benchmarks have
many near-ties (SmolLM2-135M on 400 WinoSemitism pairs: 16 pairs closer than 0.05 nats at float32),
so reduced precision alone flips about 9 of 400 decisions (error of a pair's difference: standard
deviation 0.073 nats, largest 0.35). The probes that decide pairs therefore re-score their close
pairs with the model's reference-precision twin (:meth:`biaslab.models.base.ModelBackend.reference`)
and use those scores; all others keep their reduced-precision scores.

How close is close enough to re-score (:func:`recheck_close`), measured on the run itself, since the
error differs between models:

1. the :data:`MIN_CHECKED` pairs nearest a tie (by their reduced-precision difference) are re-scored;
   each gives one error sample, the reduced minus the reference difference;
2. the bound: an upper 95 % confidence bound on the errors' standard deviation (their root mean
   square over n samples, divided by the 5 % quantile of chi-square with n degrees of freedom, the
   Wilson-Hilferty approximation), times :data:`SAFETY`;
3. every pair whose reduced-precision difference is smaller than the bound is re-scored as well, and
   the bound recomputed from all re-scored pairs, until no pair below the bound is left.

A decision the reference would not share then needs an error larger than the bound plus the pair's
distance from it. Modelled with SmolLM2 on 2,000 H-WS pairs (each scored at both precisions), pairing
every pair's float32 difference with every measured error: with ``SAFETY`` 2 (the default) 9 % of
the pairs are re-scored and 2.1 decisions in 2,000 are expected to differ from float32's (0.4 in
400, 99.9 % agreement, above the 99.5 % the fast path is held to); with 2.5, 11 % and 0.9 in
2,000, for about 0.4 s more per 400 pairs (a re-scored pair is two sentences at float32). Observed
at 2 (``bench/bench_wino.py precision``): SmolLM2 2,000 of 2,000 (154 re-scored) and 400 of 400 (36);
gemma3-270m 399 of 400 (28 re-scored; 400 at 2.5). The errors of the pairs near a tie are 15-20 %
smaller than those of all pairs (root mean square 0.057 below 0.1 nats of difference, 0.074 over
all), and choosing pairs by their reduced-precision difference favours small errors, so the bound is
an underestimate that ``SAFETY`` has to cover. Which pairs were
re-scored is recorded (each attempt's ``precision``; results.json ``run.recheck``), and the
reference's answers are cached under its own identity, apart from the reduced-precision ones.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from biaslab.models.base import LoglikelihoodRequest

if TYPE_CHECKING:
    from biaslab.models.base import LoglikelihoodResult
    from biaslab.models.cache import CachedModel
    from biaslab.probing.core import PlannedRequest, ProbeItem

MIN_CHECKED = 16  # pairs nearest a tie that are always re-scored (the first error samples)
SAFETY = 2.0  # the margin: this many times the upper bound on the error's standard deviation
_Z_05 = -1.6448536269514722  # the 5 % quantile of the standard normal


@dataclass
class Recheck:
    """The outcome of :func:`recheck_close`: the re-scored pairs and the margin they were chosen by."""

    reference: dict[int, float]  # pair index -> its difference at the reference precision
    margin: float  # pairs closer to a tie than this (reduced precision) were re-scored
    error_rms: float  # root mean square of the observed errors of a pair's difference
    max_error: float

    def summary(self) -> dict[str, Any]:
        return {"pairs": len(self.reference), "margin": round(self.margin, 4),
                "error_rms": round(self.error_rms, 4), "max_error": round(self.max_error, 4)}


def sd_upper_bound(errors: Sequence[float]) -> float:
    """An upper 95 % confidence bound on the standard deviation of zero-mean errors, from samples."""
    n = len(errors)
    if n == 0:
        return 0.0
    q = n * (1 - 2 / (9 * n) + _Z_05 * math.sqrt(2 / (9 * n))) ** 3  # chi-square 5 % quantile, n d.f.
    return math.sqrt(sum(e * e for e in errors) / max(q, 1e-12))


def recheck_close(diffs: Sequence[float], reference: Callable[[list[int]], Sequence[float]], *,
                  min_checked: int = MIN_CHECKED, safety: float = SAFETY) -> Recheck:
    """Re-score the pairs whose reduced-precision difference ``diffs[i]`` is too close to a tie to trust
    (see the module). ``reference(indices)`` re-scores those pairs and returns their differences."""
    order = sorted(range(len(diffs)), key=lambda i: abs(diffs[i]))
    got: dict[int, float] = {}
    todo = order[:min_checked]
    margin = 0.0
    while todo:
        got.update(zip(todo, reference(todo), strict=True))
        errors = [diffs[i] - got[i] for i in got]
        margin = safety * sd_upper_bound(errors)
        todo = [i for i in order if abs(diffs[i]) < margin and i not in got]
    errors = [diffs[i] - got[i] for i in got]
    rms = math.sqrt(sum(e * e for e in errors) / len(errors)) if errors else 0.0
    return Recheck(got, margin, rms, max((abs(e) for e in errors), default=0.0))


Difference = Callable[["ProbeItem", "list[LoglikelihoodResult]"], float]


def recheck_pairs(planned: list[PlannedRequest], answers: list[Any], reference: CachedModel,
                  difference: Difference) -> tuple[list[Any], Recheck, set[str]]:
    """:func:`recheck_close` over a likelihood probe's items (each item's requests consecutive in
    ``planned``; ``difference`` of an item's results decides it by its sign). Returns the answers with
    the re-scored items' replaced by the reference's, the outcome, and the ids of the re-scored items."""
    groups: list[tuple[ProbeItem, list[int]]] = []
    for j, p in enumerate(planned):
        if groups and groups[-1][0] is p.item:
            groups[-1][1].append(j)
        else:
            groups.append((p.item, [j]))
    diffs = [difference(item, [answers[j] for j in idx]) for item, idx in groups]
    answers = list(answers)

    def rescore(indices: list[int]) -> list[float]:
        where = [j for i in indices for j in groups[i][1]]
        requests = [r for j in where if isinstance(r := planned[j].request, LoglikelihoodRequest)]
        for j, result in zip(where, reference.loglikelihood(requests), strict=True):
            answers[j] = result
        return [difference(groups[i][0], [answers[j] for j in groups[i][1]]) for i in indices]

    outcome = recheck_close(diffs, rescore)
    return answers, outcome, {groups[i][0].id for i in outcome.reference}
