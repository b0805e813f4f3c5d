"""Score test and interval for a difference of two proportions from one trinomial sample.

Each of ``n`` independent trials ends in one of three outcomes: "plus" (probability ``p``),
"minus" (``q``) or neither. The estimand is ``delta = p - q``, estimated by
``(n_plus - n_minus) / n``. Two uses in biaslab:

* a best-worst scaling counting score: an item's appearances, chosen best (plus), worst (minus)
  or neither; the score ``(best - worst) / appearances`` is ``delta``'s estimate;
* a paired comparison of two binary decisions (McNemar's design): plus = 1 in B and 0 in A,
  minus = the reverse, ``delta`` = B's rate minus A's.

The score statistic (Tango 1998; Newcombe 1998, method 10, for the paired design) is
``Z(d) = (n_plus - n_minus - n d) / sqrt(n (2 q_d + d (1 - d)))``, where ``q_d`` is the maximum
likelihood estimate of ``q`` under the constraint ``p - q = d``: the positive root of
``2n q^2 - [(n_plus + n_minus) - (2n - n_plus + n_minus) d] q - n_minus d (1 - d) = 0``. The p
value is ``2 (1 - Phi(|Z(d0)|))`` and the interval ``{d : |Z(d)| <= z_(1 - alpha/2)}`` (found by
bisection; ``Z`` falls as ``d`` rises), so the two agree by construction. At ``d0 = 0`` it is
McNemar's (asymptotic) test. Unlike a bootstrap, it never collapses: ``n`` of ``n`` trials on
one side gives an interval that ends at 1 (or -1) and reaches in as far as ``n`` supports.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

__all__ = ["difference_score_z", "difference_score_p", "difference_score_interval"]

_BISECTIONS = 60  # 2^-60 of the [-1, 1] range: far below float resolution of the ends


def difference_score_z(n_plus, n_minus, n, d) -> np.ndarray:
    """``Z(d)`` for arrays (broadcast) of counts and nulls ``d`` in [-1, 1]; ``+-inf`` where the
    null's variance is 0 and the counts contradict it, 0 where they match it."""
    b = np.asarray(n_plus, dtype=float)
    c = np.asarray(n_minus, dtype=float)
    n = np.asarray(n, dtype=float)
    d = np.asarray(d, dtype=float)
    beta = (b + c) - (2 * n - b + c) * d
    q = (beta + np.sqrt(np.maximum(beta * beta + 8 * n * c * d * (1 - d), 0.0))) / (4 * n)
    var = n * (2 * q + d * (1 - d))
    num = b - c - n * d
    with np.errstate(divide="ignore", invalid="ignore"):
        z = num / np.sqrt(np.maximum(var, 0.0))
    degenerate = np.where(np.abs(num) <= 1e-9 * np.maximum(n, 1), 0.0, np.copysign(np.inf, num))
    return np.where(var > 1e-300, z, degenerate)


def difference_score_p(n_plus, n_minus, n, d0=0.0) -> np.ndarray:
    """Two-sided score-test p value of ``H0: p - q = d0``."""
    from scipy.special import ndtr

    z = np.abs(difference_score_z(n_plus, n_minus, n, d0))
    return np.minimum(1.0, 2 * ndtr(-z))


def difference_score_interval(n_plus, n_minus, n, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` arrays: the score interval of ``p - q`` (see the module docstring).

    Needs ``n > 0``. The lower end is the smallest ``d`` in ``[-1, estimate]`` with
    ``Z(d) <= z``, the upper end the largest in ``[estimate, 1]`` with ``Z(d) >= -z``.
    """
    b = np.atleast_1d(np.asarray(n_plus, dtype=float))
    c = np.atleast_1d(np.asarray(n_minus, dtype=float))
    total = np.atleast_1d(np.asarray(n, dtype=float))
    b, c, total = np.broadcast_arrays(b, c, total)
    if (total <= 0).any():
        raise ValueError("difference_score_interval: every n must be positive")
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    est = (b - c) / total
    low = _end(b, c, total, np.full_like(est, -1.0), est, lambda v: v <= z)
    high = _end(b, c, total, np.full_like(est, 1.0), est, lambda v: v >= -z)
    return low, high


def _end(b, c, n, edge, est, inside) -> np.ndarray:
    """The interval end between ``edge`` (-1 or 1) and the estimate: ``edge`` itself where
    ``inside(Z(edge))``, else the point nearest the edge found inside by bisection (``Z`` is
    monotone, and the estimate, where ``Z = 0``, is always inside)."""
    out = np.asarray(edge, dtype=float).copy()
    todo = ~inside(difference_score_z(b, c, n, edge))
    if todo.any():
        b, c, n = b[todo], c[todo], n[todo]
        outside, ins = edge[todo].copy(), est[todo].copy()
        for _ in range(_BISECTIONS):
            mid = (outside + ins) / 2
            ok = inside(difference_score_z(b, c, n, mid))
            ins = np.where(ok, mid, ins)
            outside = np.where(ok, outside, mid)
        out[todo] = ins
    return out
