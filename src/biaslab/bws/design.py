"""Best-worst scaling tuple design (Kiritchenko & Mohammad procedure, with guarantees).

One attempt concatenates ``appearances`` independent random permutations of the sorted item ids
and cuts the sequence into consecutive groups of ``tuple_size``. The attempt is then repaired by
swapping items between tuples (a swap never changes how often an item appears) until

* no tuple holds the same item twice,
* no two tuples share more than ``max_shared`` items (2 for tuples of 4 or more; tuples of 2 or
  3 may share one item fewer than their size, i.e. no tuple is repeated),

and the design is verified from scratch. Of ``attempts`` repaired attempts the one whose item-pair
co-occurrence counts (over all N(N-1)/2 pairs) have the smallest standard deviation is kept.
Everything is driven by one seeded ``numpy`` generator, and the ids are sorted first, so the
design depends only on the set of ids and the seed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from biaslab.errors import ConfigError

__all__ = ["design_tuples", "design_with_quality", "DesignQuality", "design_quality", "max_shared_items"]


@dataclass(frozen=True)
class DesignQuality:
    """How balanced a design is."""

    n_items: int
    n_tuples: int
    tuple_size: int
    appearances: int
    pair_sd: float  # population SD of co-occurrence counts over all N(N-1)/2 item pairs
    pair_max: int  # most tuples any one pair of items shares
    pairs_covered: float  # share of all item pairs that meet in at least one tuple
    max_overlap: int  # most items any two tuples share
    attempts: int  # valid attempts compared (fewer than asked if one reached the best possible balance)
    seed: int

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def max_shared_items(tuple_size: int) -> int:
    """Most items two tuples of this size may share: 2, or ``tuple_size - 1`` for pairs and triples."""
    return min(2, tuple_size - 1)


def design_tuples(
    ids: Sequence[str],
    *,
    tuple_size: int = 4,
    appearances: int = 8,
    seed: int = 0,
    attempts: int = 100,
) -> list[tuple[str, ...]]:
    """Tuples of ids in which every id appears exactly ``appearances`` times.

    Raises :class:`~biaslab.errors.ConfigError` when the parameters cannot give a valid design
    (too few items, item count times appearances not divisible by the tuple size, more tuples than
    the no-overlap rule allows) or when no attempt could be repaired into one.
    """
    tuples, _ = design_with_quality(ids, tuple_size=tuple_size, appearances=appearances, seed=seed, attempts=attempts)
    return tuples


def design_with_quality(
    ids: Sequence[str],
    *,
    tuple_size: int = 4,
    appearances: int = 8,
    seed: int = 0,
    attempts: int = 100,
    max_repair_steps: int | None = None,
) -> tuple[list[tuple[str, ...]], DesignQuality]:
    """:func:`design_tuples` plus the chosen design's :class:`DesignQuality`."""
    items = _check_ids(ids)
    n = len(items)
    _check_feasible(n, tuple_size, appearances, attempts)
    rng = np.random.default_rng(seed)
    steps = max_repair_steps if max_repair_steps is not None else 2000 + 200 * n * appearances
    best: np.ndarray | None = None
    best_sd = math.inf
    valid = 0
    floor_sd = _min_pair_sd(n, tuple_size, appearances)
    for _ in range(attempts):
        seq = rng.permuted(np.broadcast_to(np.arange(n, dtype=np.int64), (appearances, n)), axis=1)
        tuples = _repair(seq.reshape(-1, tuple_size), n, tuple_size, rng, steps)
        if tuples is None or violations(tuples, n, tuple_size):
            continue
        valid += 1
        sd = _pair_stats(tuples, n)[0]
        if sd < best_sd - 1e-12:
            best, best_sd = tuples, sd
        if best_sd <= floor_sd + 1e-9:
            break  # no design can be more balanced (e.g. every pair of 9 items meets 3 times)
    if best is None:
        raise ConfigError(
            f"no valid design found for {n} items in {attempts} attempts (tuples of {tuple_size}, "
            f"{appearances} appearances each, at most {max_shared_items(tuple_size)} shared items); "
            f"add items, lower --appearances or raise --attempts"
        )
    quality = design_quality(best, n, tuple_size, appearances, attempts=valid, seed=seed)
    return [tuple(items[j] for j in row) for row in best.tolist()], quality


def _min_pair_sd(n: int, k: int, a: int) -> float:
    """Smallest possible SD of pair co-occurrence counts: all counts within one of their mean."""
    mean = (n * a // k) * math.comb(k, 2) / math.comb(n, 2)
    frac = mean - math.floor(mean)
    return math.sqrt(frac * (1 - frac))


def _check_ids(ids: Sequence[str]) -> list[str]:
    items = [str(i) for i in ids]
    seen: set[str] = set()
    for pos, item in enumerate(items):
        if item == "":
            raise ConfigError(f"item {pos + 1} has an empty id; give every item a non-empty id")
        if item in seen:
            raise ConfigError(f"item id {item!r} occurs more than once (second at item {pos + 1}); ids must be unique")
        seen.add(item)
    return sorted(items)


def _check_feasible(n: int, k: int, a: int, attempts: int) -> None:
    if k < 2:
        raise ConfigError(f"--tuple-size {k} is too small; best-worst tuples need at least 2 items (usually 4)")
    if a < 1:
        raise ConfigError(f"--appearances {a} must be at least 1")
    if attempts < 1:
        raise ConfigError(f"--attempts {attempts} must be at least 1")
    if n < k:
        raise ConfigError(f"{n} items cannot fill a tuple of {k}; give at least {k} items")
    if (n * a) % k:
        raise ConfigError(
            f"{n} items x {a} appearances = {n * a} slots, not a multiple of the tuple size {k}; "
            f"change --appearances (or the number of items) so that items x appearances divides by {k}"
        )
    s = max_shared_items(k) + 1  # no s-subset of items may lie in two tuples
    if n**s >= 2**62:
        raise ConfigError(
            f"{n} items is more than the designer supports ({math.floor(2 ** (62 / s)):,} at most "
            f"for tuples of {k}); split the items into batches"
        )
    if not _room_for(n, k, a):
        fits = max((b for b in range(1, a) if (n * b) % k == 0 and _room_for(n, k, b)), default=None)
        more = next(m for m in range(n + 1, n + 10 * k * a) if (m * a) % k == 0 and _room_for(m, k, a))
        fix = (
            f"lower --appearances to {fits} or less, or give at least {more} items"
            if fits
            else f"give at least {more} items"
        )
        raise ConfigError(
            f"no valid design exists for {n} items in {n * a // k} tuples of {k} with {a} appearances each: "
            f"with at most {s - 1} items shared between tuples there are too few distinct {s}-item sets; {fix}"
        )


def _room_for(n: int, k: int, a: int) -> bool:
    """Whether n items, each in a tuples of k, leave enough distinct (max_shared + 1)-item sets."""
    s = max_shared_items(k) + 1
    return n * a // k * math.comb(k, s) <= math.comb(n, s) and a * math.comb(k - 1, s - 1) <= math.comb(n - 1, s - 1)


def _subset_positions(k: int) -> list[tuple[int, ...]]:
    from itertools import combinations

    return list(combinations(range(k), max_shared_items(k) + 1))


def _keys(tuples: np.ndarray, n: int) -> np.ndarray:
    """(T, n_subsets) ints: each forbidden-overlap subset of a tuple, sorted and encoded in base n."""
    k = tuples.shape[1]
    pos = _subset_positions(k)
    sub = np.sort(tuples[:, pos], axis=2)  # (T, n_subsets, s)
    weights = (n ** np.arange(sub.shape[2] - 1, -1, -1)).astype(np.int64)
    return sub @ weights


def violations(tuples: np.ndarray, n: int, k: int) -> int:
    """Number of rule breaks: repeated items within tuples plus over-shared item subsets."""
    srt = np.sort(tuples, axis=1)
    dup = int(np.count_nonzero(srt[:, 1:] == srt[:, :-1]))
    keys = _keys(tuples, n)[_rows_without_dups(srt)].ravel()
    _, counts = np.unique(keys, return_counts=True)
    return dup + int(np.sum(counts - 1))


def _rows_without_dups(srt: np.ndarray) -> np.ndarray:
    return ~np.any(srt[:, 1:] == srt[:, :-1], axis=1)


def _pair_stats(tuples: np.ndarray, n: int) -> tuple[float, int, int]:
    """(population SD of co-occurrence over all pairs, max count, number of pairs that co-occur)."""
    k = tuples.shape[1]
    srt = np.sort(tuples, axis=1)
    ii, jj = np.triu_indices(k, 1)
    keys = srt[:, ii].astype(np.int64) * n + srt[:, jj]
    _, counts = np.unique(keys.ravel(), return_counts=True)
    m = n * (n - 1) / 2
    mean = counts.sum() / m
    var = max(0.0, float(np.sum(counts.astype(float) ** 2)) / m - mean**2)
    return math.sqrt(var), int(counts.max()), int(counts.size)


def design_quality(tuples: np.ndarray, n: int, k: int, a: int, *, attempts: int, seed: int) -> DesignQuality:
    sd, pmax, covered = _pair_stats(tuples, n)
    # with no shared (max_shared+1)-subsets the largest overlap is max_shared if some pair meets twice
    overlap = max_shared_items(k) if pmax >= 2 else 1
    if violations(tuples, n, k):  # pragma: no cover - a design is only returned after verification
        overlap = max_shared_items(k) + 1
    return DesignQuality(
        n_items=n,
        n_tuples=int(tuples.shape[0]),
        tuple_size=k,
        appearances=a,
        pair_sd=sd,
        pair_max=pmax,
        pairs_covered=covered / (n * (n - 1) / 2),
        max_overlap=overlap,
        attempts=attempts,
        seed=seed,
    )


def _repair(tuples: np.ndarray, n: int, k: int, rng: np.random.Generator, max_steps: int) -> np.ndarray | None:
    """Swap items between tuples until no rule is broken; None if ``max_steps`` swaps did not suffice."""
    if not violations(tuples, n, k):
        return tuples
    return _Repairer(tuples, n, k, rng).run(max_steps)


class _Repairer:
    """Min-conflicts local search over item swaps between two tuples (appearance counts never change).

    Every tuple contributes its ``max_shared + 1``-item subsets (by position, so a repeated item
    gives subsets with a repeat), each encoded as one int. Cost = sum over subsets of
    (holders - 1) + holders of subsets with a repeated item; a design is valid exactly when the
    cost is 0. Each step takes a conflicting tuple and applies the best swap among all (small
    designs) or a sample of (large designs) swaps with other tuples; with a small probability it
    makes a random swap instead.
    """

    NOISE = 0.1
    FULL_NEIGHBOURHOOD = 300  # evaluate every swap when tuples x size^2 is at most this (tiny designs)
    SAMPLE = 64

    def __init__(self, tuples: np.ndarray, n: int, k: int, rng: np.random.Generator):
        from collections import Counter
        from itertools import combinations

        self.rows = [list(r) for r in tuples.tolist()]
        self.k, self.n, self.rng = k, n, rng
        s = max_shared_items(k) + 1
        self.weights = [n ** (s - 1 - i) for i in range(s)]
        self.with_pos = [[ps for ps in combinations(range(k), s) if p in ps] for p in range(k)]
        self.all_pos = list(combinations(range(k), s))
        keys = _keys(tuples, n)
        self.count = Counter(keys.ravel().tolist())
        srt = np.sort(tuples, axis=1)
        shared = np.isin(keys, [key for key, c in self.count.items() if c > 1]).any(axis=1)
        self.bad = set(np.flatnonzero(shared | ~_rows_without_dups(srt)).tolist())

    def _key(self, values) -> tuple[int, bool]:
        vals = sorted(values)
        key = 0
        for v, w in zip(vals, self.weights):
            key += v * w
        return key, len(set(vals)) < len(vals)

    @staticmethod
    def _key_cost(count: int, repeated: bool) -> int:
        if count <= 0:
            return 0
        return count if repeated else count - 1

    def _changes(self, t: int, p: int, u: int, q: int) -> dict[int, list]:
        x, y = self.rows[t][p], self.rows[u][q]
        change: dict[int, list] = {}
        for row, pos, new in ((self.rows[t], p, y), (self.rows[u], q, x)):
            for ps in self.with_pos[pos]:
                key, rep = self._key(row[i] for i in ps)
                change.setdefault(key, [0, rep])[0] -= 1
                key, rep = self._key(new if i == pos else row[i] for i in ps)
                change.setdefault(key, [0, rep])[0] += 1
        return change

    def _delta(self, change: dict[int, list]) -> int:
        delta = 0
        for key, (d, rep) in change.items():
            if d:
                c = self.count.get(key, 0)
                delta += self._key_cost(c + d, rep) - self._key_cost(c, rep)
        return delta

    def _apply(self, t: int, p: int, u: int, q: int) -> None:
        for key, (d, _) in self._changes(t, p, u, q).items():
            if d:
                self.count[key] += d
        self.rows[t][p], self.rows[u][q] = self.rows[u][q], self.rows[t][p]
        # a new clash involves t or u, so marking both is enough: the other holder is cleared
        # when the clash is resolved from this side
        for tt in (t, u):
            if self._conflicted(tt):
                self.bad.add(tt)

    def _conflicted(self, t: int) -> bool:
        row = self.rows[t]
        for ps in self.all_pos:
            key, rep = self._key(row[i] for i in ps)
            if self._key_cost(self.count.get(key, 0), rep):
                return True
        return False

    def _candidates(self, t: int):
        n_rows, k = len(self.rows), self.k
        if n_rows * k * k <= self.FULL_NEIGHBOURHOOD:
            return [(p, u, q) for p in range(k) for u in range(n_rows) if u != t for q in range(k)]
        us = self.rng.integers(n_rows - 1, size=self.SAMPLE)
        us = us + (us >= t)
        ps = self.rng.integers(k, size=self.SAMPLE)
        qs = self.rng.integers(k, size=self.SAMPLE)
        return list(zip(ps.tolist(), us.tolist(), qs.tolist()))

    def run(self, max_steps: int) -> np.ndarray | None:
        n_rows, k = len(self.rows), self.k
        for _ in range(max_steps):
            while self.bad:
                t = self.bad.pop()
                if self._conflicted(t):
                    break
            else:
                return np.array(self.rows, dtype=np.int64)
            self.bad.add(t)
            if self.rng.random() < self.NOISE:
                u = int(self.rng.integers(n_rows - 1))
                move = (int(self.rng.integers(k)), u + (u >= t), int(self.rng.integers(k)))
            else:
                best, moves = None, []
                for p, u, q in self._candidates(t):
                    if self.rows[t][p] == self.rows[u][q]:
                        continue
                    d = self._delta(self._changes(t, p, u, q))
                    if best is None or d < best:
                        best, moves = d, [(p, u, q)]
                    elif d == best:
                        moves.append((p, u, q))
                if not moves:
                    continue
                move = moves[int(self.rng.integers(len(moves)))]
            p, u, q = move
            if self.rows[t][p] != self.rows[u][q]:
                self._apply(t, p, u, q)
        return None
