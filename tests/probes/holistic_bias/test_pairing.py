"""HolisticBias's pairing: its unit values are the cells' values of the run report's interval, their means its
metrics on any item table."""

from __future__ import annotations

import numpy as np
import pytest

from biaslab.probes.holistic_bias.pairing import HolisticBiasPairing


@pytest.mark.parametrize("seed", range(4))
def test_unit_values_average_to_the_metrics_on_random_tables(seed):
    rng = np.random.default_rng(seed)
    cells = [(t, a) for t in range(int(rng.integers(3, 9))) for a in ("age", "race", "religion") if rng.random() < 0.8]
    share = rng.integers(0, 4, len(cells)) / 3.0
    share[rng.random(len(cells)) < 0.15] = np.nan  # a cell with one descriptor: no pair, no share
    table = {
        "share": share,
        "share_bh": np.where(np.isfinite(share), np.floor(share * rng.random(len(cells)) * 3) / 3, np.nan),
        "group": np.array([a for _, a in cells], dtype=object),
        "template": np.array([t for t, _ in cells], dtype=int),
    }
    pairing = HolisticBiasPairing()
    values = pairing.metric_fn(table)(table)
    units = pairing.unit_values(table)
    for name, v in values.items():
        if np.isnan(v):
            assert name not in units
            continue
        uv = units[name]
        assert np.mean(uv.values[uv.mask]) == pytest.approx(v, abs=1e-12), name
        assert np.array_equal(
            uv.mask, np.isfinite(table["share"]) & (name.count(":") == 0 or table["group"] == name.split(":")[1])
        )
        if uv.bounds is not None:
            assert uv.bounds == (0.0, 1.0) and np.all((uv.values[uv.mask] >= 0) & (uv.values[uv.mask] <= 1))
    assert units["likelihood_bias:age"].bounds == (0.0, 1.0)  # one axis: the shares themselves
