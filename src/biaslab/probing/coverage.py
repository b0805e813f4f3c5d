"""What a run's items covered, in one short line: the suite card's *Runs* table and the suite's results.json
(``covers``) show it beside each run, so that a reader sees what a headline is about ("Gender_identity: 50
questions", "600 pairs; 9 groups: ...") without opening the run.

:meth:`biaslab.probing.core.Probe.coverage` is the hook; :func:`default_coverage` is its default.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from biaslab.probing.schema import RunResults

SHOWN = 8  # groups named before "and N more"


def count(n: int, noun: str) -> str:
    """``"50 questions"``, ``"1 question"`` (a plural noun ending in s loses it for one)."""
    return f"{n:,} {noun[:-1] if n == 1 and noun.endswith('s') else noun}"


def names(values: Sequence[str], shown: int = SHOWN) -> str:
    """``"a, b, c"``, or the first ``shown`` and ``"and N more"``."""
    head = ", ".join(values[:shown])
    return head + (f" and {len(values) - shown} more" if len(values) > shown else "")


def metric_groups(probe: Any, results: RunResults) -> list[str]:
    """The groups of the first headline that has per-group metrics (``metric:<group>``), in the run's order."""
    for h in probe.headlines:
        prefix = f"{h.metric}:"
        found = [k[len(prefix) :] for k in results.metrics if k.startswith(prefix)]
        if found:
            return found
    return []


def default_coverage(probe: Any, results: RunResults) -> str:
    """The run's items (``probe.item_noun``) and the groups of its per-group headline metrics."""
    text = count(results.n_items, probe.item_noun)
    groups = metric_groups(probe, results)
    return text + (f"; {count(len(groups), 'groups')}: {names(groups)}" if groups else "")
