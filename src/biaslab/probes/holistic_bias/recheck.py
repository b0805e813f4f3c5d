"""HolisticBias's decisions for the re-scoring at reference precision (:mod:`biaslab.probing.recheck`).

The probe decides, for every pair of descriptors of a template and axis, whether its Mann-Whitney U
test is significant (p < :data:`~.metrics.ALPHA`). U counts the comparisons ``a > b`` between the two
descriptors' sentence scores (one per noun), so a reduced precision changes a decision only by flipping
enough of those comparisons: with ``D = |U - n_a n_b / 2|`` and the critical distance ``c`` (two-sided, with
continuity correction: p < ALPHA exactly when D > c), a significant pair needs ``ceil(D - c)`` comparisons
flipped towards the centre, a non-significant one ``floor(c - D) + 1`` away from it (on either side). A
comparison flips only when the error of its score difference exceeds the difference, so the decision is as
far from flipping as the k-th smallest difference among the comparisons that move U the needed way: that
comparison is the pair's contrast, and its difference the decision's margin. Pairs where scipy would use
the exact distribution (a sample of 8 sentences or fewer) are held as close as their closest comparison.
The significance here is scipy's normal approximation without tie correction (the scores are distinct
floats); it only chooses the contrast, the metrics use :func:`~.metrics.mann_whitney_p`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from itertools import combinations
from statistics import NormalDist
from typing import TYPE_CHECKING

import numpy as np

from biaslab.probes.holistic_bias.metrics import ALPHA
from biaslab.probing.recheck import Contrast

if TYPE_CHECKING:
    from biaslab.models.base import LoglikelihoodResult
    from biaslab.probing.core import ProbeItem

Score = Callable[["LoglikelihoodResult"], "float | None"]
_Z = NormalDist().inv_cdf(1 - ALPHA / 2)


def _sample(results: Sequence[LoglikelihoodResult], score: Score) -> list[tuple[int, float]]:
    out = []
    for k, r in enumerate(results):
        s = score(r)
        if s is not None and math.isfinite(s):
            out.append((k, s))
    return out


def deciding_comparison(a: Sequence[float], b: Sequence[float]) -> tuple[int, int] | None:
    """The comparison (index into ``a``, into ``b``) whose flip would be the last one needed to change the
    pair's significance decision: the k-th smallest difference among those that move U the needed way."""
    na, nb = len(a), len(b)
    if not na or not nb:
        return None
    d = np.subtract.outer(np.asarray(a, dtype=float), np.asarray(b, dtype=float)).ravel()
    size = np.abs(d)
    if min(na, nb) <= 8:  # scipy's exact test: held as close as the closest comparison
        return divmod(int(np.argmin(size)), nb)
    u = float((d > 0).sum() + 0.5 * (d == 0).sum())
    mu, sigma = na * nb / 2, math.sqrt(na * nb * (na + nb + 1) / 12)
    c = 0.5 + sigma * _Z  # p < ALPHA (two-sided, continuity-corrected normal approximation) when |U - mu| > c
    down, up = np.flatnonzero(d >= 0), np.flatnonzero(d <= 0)  # flipping one of these lowers U / raises it
    if abs(u - mu) > c:  # significant: back towards the centre
        needs = [(down if u > mu else up, max(1, math.ceil(abs(u - mu) - c)))]
    else:  # not significant: away from it, either way
        needs = [(up, max(1, math.floor(c - (u - mu)) + 1)), (down, max(1, math.floor(c + (u - mu)) + 1))]
    best: int | None = None
    for side, k in needs:
        if k <= len(side):
            at = int(side[np.argpartition(size[side], k - 1)[k - 1]])
            if best is None or size[at] < size[best]:
                best = at
    return None if best is None else divmod(best, nb)


def pair_contrasts(items: list[ProbeItem], results: list[list[LoglikelihoodResult]], score: Score) -> list[Contrast]:
    """One :class:`~biaslab.probing.recheck.Contrast` per descriptor pair of a template and axis: the
    difference of the two sentences whose comparison decides it (:func:`deciding_comparison`)."""
    cells: dict[tuple[int, str], list[int]] = {}
    for pos, item in enumerate(items):
        cells.setdefault((int(item.metadata["template_index"]), item.metadata["axis"]), []).append(pos)
    out = []
    for positions in cells.values():
        samples = {pos: _sample(results[pos], score) for pos in positions}
        for pa, pb in combinations(positions, 2):
            sa, sb = samples[pa], samples[pb]
            found = deciding_comparison([s for _, s in sa], [s for _, s in sb])
            if found is None:
                continue
            ka, kb = sa[found[0]][0], sb[found[1]][0]

            def value(res: Sequence[Sequence[LoglikelihoodResult]], ka: int = ka, kb: int = kb) -> float:
                x, y = score(res[0][ka]), score(res[1][kb])
                return (x if x is not None else math.nan) - (y if y is not None else math.nan)

            out.append(Contrast((pa, pb), value))
    return out
