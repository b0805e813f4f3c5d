"""Close decisions re-scored at the reference precision, so likelihood decisions match float32's.

A model run at reduced precision (a local model's ``precision=bf16``, bfloat16 or float16 weights:
``-P dtype=bfloat16``, a GPU's default, vLLM at bf16) scores every text with a small error, and a decision
that follows the sign of a score difference (which of two sentences scores higher, which answer option
is the best, which pronoun is preferred) flips wherever the error of that difference is larger than the
difference itself. Likelihood benchmarks have many near-ties (SmolLM2-135M on 400 WinoSemitism pairs: 16
pairs closer than 0.05 nats at float32), so reduced precision alone flips about 9 of 400 decisions (error
of a pair's difference: standard deviation 0.073 nats, largest 0.35). Every likelihood probe therefore
declares its decisions as :class:`Contrast` s (:meth:`biaslab.probing.likelihood.LikelihoodProbe.contrasts`):
the signed score difference a decision follows, the items it reads and its *margin*, how far the decision
is from flipping (by default the difference's size). The contrasts too close to trust have all the
requests of their items re-scored with the model's reference-precision twin
(:meth:`biaslab.models.base.ModelBackend.reference`), and those items are scored from the reference's
answers; all others keep their reduced-precision scores.

How close is close enough to re-score (:func:`recheck_close`), measured on the run itself, since the
error differs between models:

1. the :data:`MIN_CHECKED` contrasts with the smallest margins are re-scored; each gives one error
   sample, the reduced minus the reference difference;
2. the bound: an upper 95 % confidence bound on the errors' standard deviation (their root mean
   square over n samples, divided by the 5 % quantile of chi-square with n degrees of freedom, the
   Wilson-Hilferty approximation), times :data:`SAFETY`;
3. every contrast whose margin is smaller than the bound is re-scored as well, and the bound recomputed
   from all re-scored contrasts, until no contrast below the bound is left.

A decision the reference would not share then needs an error larger than the bound plus the contrast's
distance from it. Modelled with SmolLM2 on 2,000 H-WS pairs (each scored at both precisions), pairing
every pair's float32 difference with every measured error: with ``SAFETY`` 2 (the default) 9 % of
the pairs are re-scored and 2.1 decisions in 2,000 are expected to differ from float32's (0.4 in
400, 99.9 % agreement, above the 99.5 % the fast path is held to); with 2.5, 11 % and 0.9 in
2,000, for about 0.4 s more per 400 pairs (a re-scored pair is two sentences at float32). Observed
at 2 (``bench/bench_wino.py precision``): SmolLM2 2,000 of 2,000 (154 re-scored) and 400 of 400 (36);
gemma3-270m 399 of 400 (28 re-scored; 400 at 2.5); ``bench/bench_precision.py`` measures the other
likelihood probes at ``dtype=bfloat16``. The errors of the pairs near a tie are 15-20 %
smaller than those of all pairs (root mean square 0.057 below 0.1 nats of difference, 0.074 over
all), and choosing pairs by their reduced-precision difference favours small errors, so the bound is
an underestimate that ``SAFETY`` has to cover. Which items were
re-scored is recorded (each attempt's ``precision``; results.json ``run.recheck``), and the
reference's answers are cached under its own identity, apart from the reduced-precision ones.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from biaslab.models.base import LoglikelihoodRequest

if TYPE_CHECKING:
    from biaslab.models.base import LoglikelihoodResult
    from biaslab.models.cache import CachedModel
    from biaslab.probing.core import PlannedRequest, ProbeItem

MIN_CHECKED = 16  # contrasts with the smallest margins that are always re-scored (the first error samples)
SAFETY = 2.0  # the margin: this many times the upper bound on the error's standard deviation
_Z_05 = -1.6448536269514722  # the 5 % quantile of the standard normal

Results = Sequence["LoglikelihoodResult"]  # one item's results, in its requests' order


@dataclass(frozen=True)
class Contrast:
    """A decision of a probe as a signed score difference: the decision follows its sign.

    ``items``: the positions (in the run's item order) of the items it reads; ``value``: the difference,
    from those items' results (in ``items`` order), the same function at either precision (which options
    or sentences it compares is fixed from the reduced-precision results); ``margin``: how far the
    decision is from flipping at reduced precision, in the difference's units (None: ``abs`` of the
    difference; a decision that needs several differences to flip, e.g. a test's, can be farther)."""

    items: tuple[int, ...]
    value: Callable[[Sequence[Results]], float]
    margin: float | None = None


@dataclass
class Recheck:
    """The outcome of :func:`recheck_close`: the re-scored contrasts and the margin they were chosen by."""

    reference: dict[int, float]  # contrast index -> its difference at the reference precision
    margin: float  # contrasts whose margin (reduced precision) was below this were re-scored
    error_rms: float  # root mean square of the observed errors of a difference
    max_error: float
    items: set[int] = field(default_factory=set)  # the items re-scored (positions in the run's order)

    def summary(self, unit: str = "items") -> dict[str, Any]:
        """For results.json: how many ``unit`` s (the probe's items: "pairs" for the paired probes) and
        decisions were re-scored, the margin and the errors seen."""
        return {
            unit: len(self.items),
            "decisions": len(self.reference),
            "margin": round(self.margin, 4),
            "error_rms": round(self.error_rms, 4),
            "max_error": round(self.max_error, 4),
        }


def sd_upper_bound(errors: Sequence[float]) -> float:
    """An upper 95 % confidence bound on the standard deviation of zero-mean errors, from samples."""
    n = len(errors)
    if n == 0:
        return 0.0
    q = n * (1 - 2 / (9 * n) + _Z_05 * math.sqrt(2 / (9 * n))) ** 3  # chi-square 5 % quantile, n d.f.
    return math.sqrt(sum(e * e for e in errors) / max(q, 1e-12))


def recheck_close(
    diffs: Sequence[float],
    reference: Callable[[list[int]], Sequence[float]],
    *,
    margins: Sequence[float] | None = None,
    min_checked: int = MIN_CHECKED,
    safety: float = SAFETY,
) -> Recheck:
    """Re-score the contrasts too close to flipping to trust (see the module): ``diffs[i]`` is contrast i's
    reduced-precision difference, ``margins[i]`` its distance from flipping (default ``abs(diffs[i])``);
    ``reference(indices)`` re-scores those contrasts and returns their differences."""
    margins = [abs(d) for d in diffs] if margins is None else list(margins)
    order = sorted(range(len(diffs)), key=lambda i: margins[i])
    got: dict[int, float] = {}
    todo = order[:min_checked]
    margin = 0.0
    while todo:
        got.update(zip(todo, reference(todo), strict=True))
        errors = [diffs[i] - got[i] for i in got]
        margin = safety * sd_upper_bound(errors)
        todo = [i for i in order if margins[i] < margin and i not in got]
    errors = [diffs[i] - got[i] for i in got]
    rms = math.sqrt(sum(e * e for e in errors) / len(errors)) if errors else 0.0
    return Recheck(got, margin, rms, max((abs(e) for e in errors), default=0.0))


def item_groups(planned: list[PlannedRequest]) -> list[tuple[ProbeItem, list[int]]]:
    """The run's items in order, each with the positions of its requests (consecutive) in ``planned``."""
    groups: list[tuple[ProbeItem, list[int]]] = []
    for j, p in enumerate(planned):
        if groups and groups[-1][0] is p.item:
            groups[-1][1].append(j)
        else:
            groups.append((p.item, [j]))
    return groups


Contrasts = Callable[["list[ProbeItem]", "list[list[LoglikelihoodResult]]"], "list[Contrast]"]


def recheck_items(
    planned: list[PlannedRequest],
    answers: list[Any],
    reference: CachedModel,
    contrasts: Contrasts,
    *,
    min_checked: int = MIN_CHECKED,
    safety: float = SAFETY,
) -> tuple[list[Any], Recheck | None, set[str]]:
    """:func:`recheck_close` over a likelihood probe's decisions: ``contrasts(items, results)`` gives them
    from the reduced-precision results; a contrast chosen is re-scored by re-scoring every request of its
    items on ``reference`` (each item once). Returns the answers with the re-scored items' replaced by the
    reference's, the outcome (None: the probe decides nothing here) and the ids of the re-scored items."""
    groups = item_groups(planned)
    items = [item for item, _ in groups]
    found = contrasts(items, [[answers[j] for j in idx] for _, idx in groups])
    if not found:
        return answers, None, set()
    answers = list(answers)
    done: set[int] = set()

    def results(i: int) -> list[Any]:
        return [answers[j] for j in groups[i][1]]

    diffs = [c.value([results(i) for i in c.items]) for c in found]
    margins = [abs(d) if c.margin is None else c.margin for c, d in zip(found, diffs, strict=True)]

    def rescore(indices: list[int]) -> list[float]:
        todo = list(dict.fromkeys(i for c in indices for i in found[c].items if i not in done))
        where = [j for i in todo for j in groups[i][1]]
        requests = [r for j in where if isinstance(r := planned[j].request, LoglikelihoodRequest)]
        for j, result in zip(where, reference.loglikelihood(requests), strict=True):
            answers[j] = result
        done.update(todo)
        return [found[c].value([results(i) for i in found[c].items]) for c in indices]

    outcome = recheck_close(diffs, rescore, margins=margins, min_checked=min_checked, safety=safety)
    outcome.items = done
    return answers, outcome, {groups[i][0].id for i in done}
