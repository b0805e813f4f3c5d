"""Multiple-testing adjustment of p values: the one implementation every family of tests in biaslab uses.

:func:`adjust_pvalues` takes a family's p values and a method by name and returns the adjusted p values in the
input's order. Write ``m`` for the number of p values counted and ``p_(1) <= ... <= p_(m)`` for them sorted
(ties keep their input order; tied p values get the same adjusted value under every method):

* ``"holm"`` -- Holm's step-down procedure, ``p~_(i) = max_{j <= i} min(1, (m - j + 1) p_(j))``. Rejecting every
  hypothesis with ``p~ <= alpha`` controls the family-wise error rate at ``alpha`` whatever the dependence
  between the tests (the gate's margins, PPI's pairwise differences).
* ``"bh"`` -- Benjamini-Hochberg's step-up procedure (the "q values" of the probes and of ``compare``),
  ``q_(i) = min_{j >= i} min(1, m p_(j) / j)``. Rejecting every hypothesis with ``q <= alpha`` controls the false
  discovery rate at ``alpha`` for independent or positively dependent (PRDS) tests.
* ``"bonferroni"`` -- ``min(1, m p)``.
* ``"none"`` -- ``p`` unchanged (missing entries are still handled as below).

Under every method an adjusted p value is at least its raw p and at most 1; Holm's is never below BH's.

**Missing p values** (None, NaN or infinite: a test that could not be run) are handled one of two ways, chosen by
``missing``:

* ``"drop"`` (the default): they come back as None and do not count towards ``m`` -- the family is the tests
  that gave a p value. Every q value of the probes and of ``compare`` is taken this way.
* ``"as_one"``: they are read as ``p = 1``: they count towards ``m`` and come back adjusted (1 under every
  method). A test that was asked for but could not be run keeps its share of ``alpha``, so the adjustment is
  the one planned before the data were seen (the gate's Holm across every margin it was given).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Literal, overload

import numpy as np

__all__ = ["METHODS", "adjust_pvalues"]

METHODS = ("holm", "bh", "bonferroni", "none")
MISSING = ("drop", "as_one")


def _holm(p: np.ndarray) -> np.ndarray:
    m = p.size
    out = np.empty(m)
    order = np.argsort(p, kind="stable")
    out[order] = np.maximum.accumulate(np.minimum(1.0, p[order] * (m - np.arange(m))))
    return out


def _bh(p: np.ndarray) -> np.ndarray:
    m = p.size
    out = np.empty(m)
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    out[order] = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    return out


def _bonferroni(p: np.ndarray) -> np.ndarray:
    return np.minimum(1.0, p * p.size)


def _none(p: np.ndarray) -> np.ndarray:
    return p.copy()


_ADJUST: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "holm": _holm,
    "bh": _bh,
    "bonferroni": _bonferroni,
    "none": _none,
}


@overload
def adjust_pvalues(
    pvalues: Iterable[float | None], method: str, *, missing: Literal["drop"] = "drop"
) -> list[float | None]: ...


@overload
def adjust_pvalues(pvalues: Iterable[float | None], method: str, *, missing: Literal["as_one"]) -> list[float]: ...


def adjust_pvalues(
    pvalues: Iterable[float | None], method: str, *, missing: str = "drop"
) -> list[float | None] | list[float]:
    """The p values of one family adjusted by ``method`` (``"holm"``, ``"bh"``, ``"bonferroni"`` or ``"none"``),
    as floats in the input's order; missing entries (None, NaN, infinite) as ``missing`` says (module docstring:
    ``"drop"``, the default, gives None and leaves them out of ``m``; ``"as_one"`` counts them as p = 1)."""
    if method not in _ADJUST:
        raise ValueError(f"unknown p-value adjustment {method!r}: use one of {', '.join(METHODS)}")
    if missing not in MISSING:
        raise ValueError(f"unknown handling of missing p values {missing!r}: use one of {', '.join(MISSING)}")
    p = np.array([math.nan if v is None else float(v) for v in pvalues], dtype=float)
    counted = np.isfinite(p)
    if missing == "as_one":
        p[~counted] = 1.0
        counted[:] = True
    adjusted = np.full(p.shape, math.nan)
    idx = np.flatnonzero(counted)
    if idx.size:
        adjusted[idx] = _ADJUST[method](p[idx])
    return [float(a) if c else None for a, c in zip(adjusted.tolist(), counted.tolist())]
