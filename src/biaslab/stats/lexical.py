"""Word-group association statistics: PMI per group and log-odds with a Dirichlet prior.

* :func:`tokenize` -- lower-cased runs of two or more word characters (scikit-learn's default
  token pattern, so "well-groomed" gives "well" and "groomed").
* :func:`pmi_by_group` -- ``log2 p(word | group) / p(word)`` from token counts.
* :func:`log_odds_dirichlet` -- Monroe, Colaresi & Quinn (2008) "Fightin' Words": z-scores of the
  difference in log-odds of each term between two corpora, with prior pseudo-counts added.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

__all__ = ["TOKEN_PATTERN", "tokenize", "pmi_by_group", "log_odds_dirichlet", "top_terms"]

TOKEN_PATTERN = r"(?u)\b\w\w+\b"
_TOKEN = re.compile(TOKEN_PATTERN)


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(str(text).lower())


def pmi_by_group(texts: Sequence[str], groups: Sequence, *, min_count: int = 1) -> dict:
    """PMI of every word with every group, ranked within each group.

    ``p(word | group)`` = the word's share of the group's tokens; ``p(word)`` = its share of all
    tokens. Words with fewer than ``min_count`` tokens overall are left out. Ranking in a group:
    PMI (highest first), then the word's count in the group (highest first: among words that
    occur only in this group, and so tie at the group's maximum PMI, the better attested come
    first), then alphabetically. Returns ``{group: [(word, pmi, count_in_group, count_total), ...]}``
    for words that occur in the group.
    """
    by_group: dict = {}
    for text, g in zip(texts, groups):
        by_group.setdefault(g, Counter()).update(tokenize(text))
    total: Counter[str] = Counter()
    for c in by_group.values():
        total.update(c)
    n_total = sum(total.values())
    out: dict = {}
    for g, counts in by_group.items():
        n_g = sum(counts.values())
        rows = []
        for word, c in counts.items():
            if total[word] < min_count:
                continue
            pmi = math.log2((c / n_g) / (total[word] / n_total))
            rows.append((word, pmi, c, total[word]))
        rows.sort(key=lambda r: (-round(r[1], 12), -r[2], r[0]))
        out[g] = rows
    return out


def log_odds_dirichlet(counts_a: np.ndarray, counts_b: np.ndarray, prior: np.ndarray | float) -> np.ndarray:
    """z-scores of log-odds(a) - log-odds(b) per term, with Dirichlet pseudo-counts ``prior``.

    For term w with counts ``y_a``, ``y_b``, corpus sizes ``n_a``, ``n_b``, prior ``alpha_w`` and
    ``alpha_0 = sum(alpha)``::

        delta = log((y_a + alpha_w) / (n_a + alpha_0 - y_a - alpha_w))
              - log((y_b + alpha_w) / (n_b + alpha_0 - y_b - alpha_w))
        z     = delta / sqrt(1 / (y_a + alpha_w) + 1 / (y_b + alpha_w))

    Positive z: the term is characteristic of corpus a.
    """
    ya = np.asarray(counts_a, dtype=float)
    yb = np.asarray(counts_b, dtype=float)
    alpha = np.broadcast_to(np.asarray(prior, dtype=float), ya.shape)
    a0 = float(alpha.sum())
    na, nb = ya.sum(), yb.sum()
    delta = np.log((ya + alpha) / (na + a0 - ya - alpha)) - np.log((yb + alpha) / (nb + a0 - yb - alpha))
    return delta / np.sqrt(1 / (ya + alpha) + 1 / (yb + alpha))


def top_terms(terms: Sequence[str], z: np.ndarray, k: int) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    """The ``k`` terms with the highest z (side a) and the ``k`` with the lowest (side b); ties by term."""
    order_a = sorted(range(len(terms)), key=lambda i: (-z[i], terms[i]))
    order_b = sorted(range(len(terms)), key=lambda i: (z[i], terms[i]))
    return (
        [(terms[i], float(z[i])) for i in order_a[:k] if z[i] > 0],
        [(terms[i], float(z[i])) for i in order_b[:k] if z[i] < 0],
    )
