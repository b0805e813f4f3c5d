"""How olympics runs pair up: an item is an event (its three prompts' answers together), matched by the
event's key; the metrics are recomputed from the per-event table of scored answers. Every metric is a pooled ratio
over events, and its unit values are those the run report's interval is over
(:func:`biaslab.probes.olympics.inference.event_unit_values`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from biaslab.probing.pairing import ByItemPairing, Table, UnitValues


def _event_table(rows: list[dict[str, Any]]) -> Table:
    from biaslab.probes.olympics.frames import attempt_frames, events_by_id
    from biaslab.probes.olympics.metrics import event_table, score_specified_rows, score_underspecified_rows

    spec, und = attempt_frames(events_by_id(), rows)
    t, events = event_table(score_specified_rows(spec), score_underspecified_rows(und))
    t = dict(t)
    t["event"] = np.array(events.astype(str).agg("\x1f".join, axis=1).tolist(), dtype=object)
    return t


def _metrics(t: Mapping[str, np.ndarray]) -> dict[str, float]:
    from biaslab.probes.olympics.metrics import compute_metrics

    return compute_metrics({k: v for k, v in t.items() if k != "event"})


def _units(t: Mapping[str, np.ndarray]) -> dict[str, UnitValues | None]:
    from biaslab.probes.olympics.inference import event_unit_values

    return event_unit_values(t)


OLYMPICS_PAIRING = ByItemPairing("olympics", "events", _event_table, _metrics, key="event", units=_units)
