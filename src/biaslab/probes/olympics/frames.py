"""An Olympics run's attempts as the paper's results files (specified and underspecified prompts), for the probe's
scores and for its pairing across runs (:mod:`.pairing`), which therefore need not import the probe."""

from __future__ import annotations

from typing import Any

import pandas as pd

from biaslab.probes.olympics.annotated import KEY_COLUMNS, MEDALS, join_nocs
from biaslab.probes.olympics.prompts import OlympicEvent, load_events
from biaslab.probing.core import Attempt


def item_id(event: OlympicEvent) -> str:
    """An event's item id: ``"<year> <season> <discipline> / <event>"``."""
    return f"{event.year} {event.season} {event.discipline} / {event.event}"


def events_by_id() -> dict[str, OlympicEvent]:
    return {item_id(e): e for e in load_events()}


def attempt_frames(
    events: dict[str, OlympicEvent], attempts: list[Attempt] | list[dict[str, Any]]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The attempts as the paper's results files (specified, underspecified); ``events`` by item id."""
    spec, und = [], []
    for a in attempts:
        a = a.to_json() if isinstance(a, Attempt) else a
        e = events[a["item_id"]]
        key = dict(zip(KEY_COLUMNS, e.key))
        ev = a.get("evaluation") or {}
        tail = {
            "status": a.get("status") or "accepted",
            "text": a["text"],
            "repetition": str(a["repetition"]),
            "flags": ";".join(a.get("flags") or []),
            "unmapped": ";".join(a.get("unmapped") or []),
        }
        if a["Gender"]:
            row = {**key, "Gender": a["Gender"]}
            gold = e.gold(a["Gender"])
            row.update({f"real_{m}": join_nocs(g) for m, g in zip(MEDALS, gold)})
            group: dict[str, list[str]] = next(iter(ev.values()), {}) if ev else {}
            row.update({f"gen_{m}": join_nocs(group.get(m, [])) for m in MEDALS})
            spec.append({**row, **tail})
        else:
            row = dict(key)
            for w, gender in (("f", "Women"), ("m", "Men")):
                row.update({f"real_{w}_{m}": join_nocs(g) for m, g in zip(MEDALS, e.gold(gender))})
            for w in ("u", "f", "m"):
                row.update({f"gen_{w}_{m}": join_nocs(ev.get(w, {}).get(m, [])) for m in MEDALS})
            und.append({**row, **tail})
    return pd.DataFrame(spec, dtype=str), pd.DataFrame(und, dtype=str)
