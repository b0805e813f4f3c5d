"""Balanced subsets for ``--limit``: the first items of a round-robin over the design's groups.

Probes whose items come from templates, scenarios or occupations use this in ``select_items``: every group
(a template, an occupation, a role and race) gives one item before any gives a second, and within a group the
items come in a fixed pseudo-random order, so a small run spreads over the whole design instead of taking the
first templates' items. Each item keeps all its prompts (every gender of a scenario), so the genders stay
balanced whatever the limit.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable

from biaslab.probing.core import ProbeItem


def round_robin(
    items: list[ProbeItem], group_of: Callable[[ProbeItem], Hashable], limit: int | None, seed: int = 0
) -> list[ProbeItem]:
    """``limit`` items, one per group per round (groups in a shuffled order, items shuffled within a group);
    all items, in their order, when ``limit`` is None or not smaller than their number."""
    if limit is None or limit >= len(items):
        return list(items)
    groups: dict[Hashable, list[int]] = {}
    for i, item in enumerate(items):
        groups.setdefault(group_of(item), []).append(i)
    rng = random.Random(seed)
    order = list(groups)
    rng.shuffle(order)
    for key in order:
        rng.shuffle(groups[key])
    chosen: list[int] = []
    depth = 0
    while len(chosen) < limit:
        for key in order:
            if depth < len(groups[key]):
                chosen.append(groups[key][depth])
                if len(chosen) == limit:
                    break
        depth += 1
    return [items[i] for i in sorted(chosen)]
