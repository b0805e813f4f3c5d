"""How fsb-judge runs pair up: an item is a rated text, matched by its id; each run's judge scores are a
column per repetition, padded so that two runs' rows can be swapped in a permutation test. The errors and the
undetected rate are means over texts of the values the run report's interval is over
(:func:`biaslab.probes.fsb_judge.inference.judge_unit_values`); the correlations are not."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from biaslab.probes.fsb_judge.metrics import item_table, judge_metrics
from biaslab.probing.pairing import ByItemPairing, ItemTable, UnitValues


def _units(table: Mapping[str, np.ndarray]) -> dict[str, UnitValues | None]:
    from biaslab.probes.fsb_judge.inference import judge_unit_values

    return judge_unit_values(table)


class FsbJudgePairing(ByItemPairing):
    def __init__(self) -> None:
        super().__init__("fsb-judge", "rated texts", item_table, judge_metrics, units=_units)

    def harmonize(self, a: ItemTable, b: ItemTable) -> tuple[ItemTable, ItemTable]:
        reps = max(a.columns["judge"].shape[1], b.columns["judge"].shape[1])
        for t in (a.columns, b.columns):  # equal repetition columns, so that rows can be swapped
            extra = reps - t["judge"].shape[1]
            if extra:
                n = len(t["human"])
                t["judge"] = np.hstack([t["judge"], np.full((n, extra), np.nan)])
                t["evaluated"] = np.hstack([t["evaluated"], np.zeros((n, extra), bool)])
        return a, b
