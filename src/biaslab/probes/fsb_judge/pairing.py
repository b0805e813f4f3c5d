"""How fsb-judge runs pair up: an item is a rated text, matched by its id; each run's judge scores are a
column per repetition, padded so that two runs' rows can be swapped in a permutation test."""

from __future__ import annotations

import numpy as np

from biaslab.probes.fsb_judge.metrics import item_table, judge_metrics
from biaslab.probing.pairing import ByItemPairing, ItemTable


class FsbJudgePairing(ByItemPairing):
    def __init__(self) -> None:
        super().__init__("fsb-judge", "rated texts", item_table, judge_metrics)

    def harmonize(self, a: ItemTable, b: ItemTable) -> tuple[ItemTable, ItemTable]:
        reps = max(a.columns["judge"].shape[1], b.columns["judge"].shape[1])
        for t in (a.columns, b.columns):  # equal repetition columns, so that rows can be swapped
            extra = reps - t["judge"].shape[1]
            if extra:
                n = len(t["human"])
                t["judge"] = np.hstack([t["judge"], np.full((n, extra), np.nan)])
                t["evaluated"] = np.hstack([t["evaluated"], np.zeros((n, extra), bool)])
        return a, b
