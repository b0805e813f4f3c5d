"""Every bounded metric declares its range, and no interval of any probe leaves it (nor misses its value)."""

from __future__ import annotations

import json
import re

import pytest

from biaslab.models import scripted
from biaslab.probes import PROBES, get_probe_class
from biaslab.probing.likelihood import LikelihoodProbe
from biaslab.probing.metric_ranges import declare_ranges, range_of
from biaslab.probing.schema import validate_results
from biaslab.stats.derived import max_of_gaps
from tests.cli_runner import run_cli
from tests.conftest import requires_data
from tests.probes.scripted_runs import request_rng, user_text

MODELS = ("scripted/yes-to-men", "scripted/random-gender")
BOUNDED_WORDS = ("rate", "share", "pct_", "accuracy", "bias_score", "max_diff", "disparity", "correlation", "_r")
BOUNDED_UNITS = re.compile(r"\(-?[\d.]+ ?(-|to) ?-?[\d.]+\)|%|share|rate")


def _yes_to_men(request) -> str:
    """A biased decision maker: of its decisions, yes to 6 in 7 about a man, 2 in 7 about anyone else; no
    decision in 30% of answers (so items hold different numbers of decisions)."""
    text = user_text(request).lower()
    male = re.search(r"\b(male|man|men|he|his|him)\b", text) and not re.search(r"\b(female|woman|she|her)\b", text)
    coin = request_rng(request).random()
    return "I cannot say." if coin > 0.7 else "Yes." if coin < (0.6 if male else 0.2) else "No."


def _bounded(name: str) -> bool:
    base = name.partition(":")[0]
    return any(w in base for w in BOUNDED_WORDS) or base.endswith("_r")


def _checked(probe: str, res: dict) -> list[str]:
    ranges = get_probe_class(probe).metric_ranges
    bad = []
    for name, m in res["metrics"].items():
        declared = range_of(ranges, name)
        if _bounded(name) and (m.get("range") is None or declared is None):
            bad.append(f"{probe} {name}: a rate, share or score without a range")
        v, lo, hi = m.get("value"), m.get("ci_low"), m.get("ci_high")
        if v is None or lo is None or hi is None:
            continue
        if not lo - 1e-9 <= v <= hi + 1e-9:
            bad.append(f"{probe} {name}: value {v} outside its interval [{lo}, {hi}]")
        if m.get("range") is not None:
            r_lo, r_hi = m["range"]
            if not r_lo <= lo <= hi <= r_hi:
                bad.append(f"{probe} {name}: interval [{lo}, {hi}] leaves its range [{r_lo}, {r_hi}]")
    return bad + _readings_checked(probe, res)


def _readings_checked(probe: str, res: dict) -> list[str]:
    """The interval a headline's reading (the card's sentence) shows lies within the headline's bounds."""
    cls, bad = get_probe_class(probe), []
    for h, text in zip(cls.headlines, cls.readings(validate_results(res))):
        shown = re.search(r"\[(-?[\d.]+), (-?[\d.]+)\]", text)
        if h.bounds is None or shown is None:
            continue
        lo, hi = (h.bounds[0] * h.scale, h.bounds[1] * h.scale)
        if not lo <= float(shown[1]) <= float(shown[2]) <= hi:
            bad.append(f"{probe} reading {text!r} leaves [{lo:g}, {hi:g}]")
    return bad


@pytest.mark.slow
@requires_data
def test_every_probe_keeps_its_intervals_within_the_metric_range(tmp_path, monkeypatch):
    monkeypatch.setitem(scripted.RULES, "yes-to-men", _yes_to_men)
    bad, ran = [], set()
    for probe in sorted(PROBES):
        cls = get_probe_class(probe)
        if cls.input_option:
            continue  # needs a file of the user's (pairs: the paired-sentence probes cover it)
        # a likelihood probe's scores do not depend on the decision rule: one scripted model is enough there
        models = MODELS[:1] if issubclass(cls, LikelihoodProbe) else MODELS
        for model in models:
            out = tmp_path / probe / model.replace("/", "_")
            limit = str(max(10, cls.min_limit))
            args = ("run", probe, "--model", model, "--limit", limit, "--out", out, "-q")
            done = run_cli(*args, env={"BIASLAB_CACHE_DIR": str(tmp_path / "cache")})
            if done.returncode and "its sha256 is not pinned" in done.stderr:
                break  # a data file not in this checkout
            assert done.returncode == 0, f"{probe} on {model}: {done.stderr}"
            bad += _checked(probe, json.loads((out / "results.json").read_text()))
            ran.add(probe)
    assert not bad, "\n".join(bad)
    assert {"discrimination-tamkin", "bbq", "crows-pairs", "jobs-lum", "winogender"} <= ran


def test_every_bounded_headline_declares_its_bounds():
    for probe in sorted(PROBES):
        cls = get_probe_class(probe)
        for h in cls.headlines:
            if BOUNDED_UNITS.search(h.unit):
                assert h.bounds is not None, f"{probe} {h.metric}: unit {h.unit!r} but no bounds"
            if h.bounds is not None:
                assert range_of(cls.metric_ranges, h.metric) == h.bounds, f"{probe} {h.metric}"
                assert h.describe()["bounds"] == list(h.bounds)


def test_a_largest_gap_of_linearised_rates_stays_within_zero_to_one():
    gaps = [
        {"value": -0.381, "ci_low": -1.14, "ci_high": 0.428, "p": 0.3},
        {"value": 0.2, "ci_low": -0.5, "ci_high": 0.9, "p": 0.6},
    ]
    m = max_of_gaps(gaps, span=1.0, value_range=(0.0, 1.0))
    assert (m["value"], m["ci_low"], m["ci_high"], m["range"]) == (0.381, 0.0, 1.0, [0.0, 1.0])
    clipped = declare_ranges(
        {"diff_x": gaps[0], "ll": {"value": 3.0, "ci_low": -9.0, "ci_high": 9.0}}, {"diff_*": (-1, 1)}
    )
    assert clipped["diff_x"]["ci_low"] == -1 and clipped["diff_x"]["p"] == 0.3 and "range" not in clipped["ll"]


def test_a_headline_takes_its_bounds_from_metric_ranges_and_may_not_state_others():
    """The range is declared once (``metric_ranges``); a headline is given it, and one stating other bounds fails
    when its probe class is made."""
    from dataclasses import replace

    from biaslab.probing.headline import with_bounds

    cls = get_probe_class("jobs-lum")
    bare = tuple(replace(h, bounds=None) for h in cls.headlines)
    assert [h.bounds for h in with_bounds(bare, cls.metric_ranges)] == [(0.0, 1.0), (-1.0, 1.0), (0.0, 0.5)]
    wrong = (replace(bare[0], bounds=(0.0, 100.0)),)
    with pytest.raises(TypeError, match="declare the range once, in metric_ranges"):
        type("Wrong", (cls,), {"headlines": wrong})
