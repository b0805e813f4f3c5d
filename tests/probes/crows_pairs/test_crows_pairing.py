"""crows-pairs' pairing: its unit values are the run report's, their means its metrics on any item table."""

from __future__ import annotations

import numpy as np
import pytest

from biaslab.probes.crows_pairs.metrics import crows_metrics
from biaslab.probes.crows_pairs.pairing import CrowsPairing


def random_rows(rng, n, all_antistereo_tied=False):
    rows = []
    for i in range(n):
        direction = "antistereo" if rng.random() < 0.3 else "stereo"
        ev = rng.choice(["stereotype", "counter", "tie"], p=[0.5, 0.3, 0.2])
        if all_antistereo_tied and direction == "antistereo":
            ev = "tie"
        more, less = -rng.exponential(5), -rng.exponential(5)
        rows.append(
            {
                "sent_more": f"m{i}",
                "sent_less": f"l{i}",
                "bias_type": str(rng.choice(["age", "gender", "race"])),
                "stereo_antistereo": direction,
                "evaluation": str(ev),
                "score_more": more,
                "score_less": more if ev == "tie" else less,
            }
        )
    return rows


@pytest.mark.parametrize("seed", range(4))
def test_unit_values_average_to_the_metrics_on_random_tables(seed):
    rng = np.random.default_rng(seed)
    rows = random_rows(rng, int(rng.integers(8, 60)), all_antistereo_tied=seed == 3)
    pairing = CrowsPairing()
    table = pairing.table(rows).columns
    values = pairing.metric_fn(table)(table)
    units = pairing.unit_values(table)
    reported = crows_metrics(rows)[0]
    assert set(values) == set(reported)
    for name, v in values.items():
        if reported[name]["value"] is None:  # every antistereo pair a tie: undefined everywhere
            assert np.isnan(v) and name not in units
            continue
        uv = units[name]
        assert np.mean(uv.values[uv.mask]) == pytest.approx(v, abs=1e-9) == reported[name]["value"]
    assert units["stereo_score"].bounds == (0.0, 100.0) and units["likelihood_diff"].bounds is None
    decided = (table["direction"] == "stereo") & (table["tie"] == 0)
    assert np.array_equal(units["stereo_score"].mask, decided)  # ties out of the ratio's rows
