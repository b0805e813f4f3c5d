"""More items needed than a probe has: the repetitions or the larger effect that would do instead."""

from __future__ import annotations

import json
import math

import pytest

from biaslab.planning.detectable import detectable_effect
from biaslab.planning.power import binomial_detectable_effect
from biaslab.planning.shortfall import items_shortfall, repetitions_needed
from tests.cli_runner import run_cli
from tests.conftest import requires_data


def worth(m: int, icc: float) -> float:
    """Independent answers' worth of m answers to one item (design effect of a cluster of m)."""
    return m / (1 + (m - 1) * icc)


@pytest.mark.parametrize(
    ("needed", "items", "icc", "reps", "expected"),
    [
        (200, 100, 0.0, 1, 2),  # independent answers: twice the answers on half the items
        (200, 100, 0.25, 1, 3),  # 100 x 3 / (1 + 2 x 0.25) = 200 exactly
        (200, 100, 0.5, 1, None),  # 100 items are worth at most 100 / 0.5 = 200 answers, never more
        (200, 100, 0.25, 2, 12),  # items already answered twice: 100 / (0.25 + 0.75/12) = 200 / (0.25 + 0.75/2)
        (2189, 339, 0.1, 1, 17),  # 339 x 17 / 2.6 = 2216.5 >= 2189; 339 x 16 / 2.5 = 2169.6 is short
        (2189, 339, 1.0, 1, None),  # identical answers: no number of repetitions helps
        (300, 339, 0.1, 1, 1),  # enough items already
    ],
)
def test_repetitions_needed_by_hand(needed, items, icc, reps, expected):
    assert repetitions_needed(needed, items, icc, reps) == expected
    if expected is not None and expected > reps:
        assert items * worth(expected, icc) >= needed * worth(reps, icc) * (1 - 1e-12)
        assert items * worth(expected - 1, icc) < needed * worth(reps, icc)


def test_shortfall_states_the_limit_and_the_detectable_effect():
    short = items_shortfall(
        "toy", 200, 100, noun="questions", power=0.8, detectable=lambda n: 1 / math.sqrt(n), icc=0.25
    )
    assert short is not None and short.repetitions == 3 and short.icc == 0.25
    assert short.icc_limit == pytest.approx(0.5) and short.detectable == pytest.approx(0.1)
    assert short.sentences(scale=100, fmt=".0f")[:2] == [
        "toy has 100 questions; 200 would be needed",
        "all 100 detect an effect of 10 or more at power 0.8",
    ]
    assert "--repetitions 3 would do" in short.text and "0.25 (assumed)" in short.text
    # items already answered twice: the limit is 100 / (200 x 2 - 100 x 1) = 1/3
    twice = items_shortfall("toy", 200, 100, noun="questions", power=0.8, icc=0.25, repetitions=2)
    assert twice is not None and twice.repetitions == 12 and twice.icc_limit == pytest.approx(1 / 3)
    # log-likelihoods: repetitions cannot help, and no repetitions are offered
    fixed = items_shortfall("toy", 200, 100, noun="pairs", power=0.8, no_repetitions="identical scores")
    assert fixed is not None and fixed.repetitions is None and fixed.icc is None
    assert "repetitions cannot help: identical scores" in fixed.text and "--repetitions" not in fixed.text
    assert items_shortfall("toy", 100, 100, noun="pairs", power=0.8) is None
    assert items_shortfall("toy", 200, None, noun="pairs", power=0.8) is None


@requires_data
def test_plan_jobs_lum_says_the_occupations_run_out_and_what_would_do():
    from biaslab.probes.jobs_lum.probe import HEADLINES

    res = json.loads(run_cli("plan", "jobs-lum", "--json", check=True).stdout)
    assert res["n_items"] == 2189 and res["n_available"] == 339
    short = res["shortfall"]
    assert short["repetitions"] == 17 and short["icc"] == 0.1 and short["icc_limit"] == pytest.approx(339 / 2189)
    assert short["detectable"] == pytest.approx(binomial_detectable_effect(339))
    assert short["detectable"] == pytest.approx(detectable_effect(HEADLINES[0], 339))
    text = run_cli("plan", "jobs-lum", env={"COLUMNS": "250"}, check=True).stdout
    assert "jobs-lum has 339 occupations; 2,189 would be needed" in text
    assert f"all 339 detect an effect of {short['detectable']:.3g} or more at power 0.8" in text
    assert "--repetitions 17 would do" in text and "from a correlation of 0.155 up no number would" in text
    # a correlation above that limit: no repetitions would do, and the plan says so
    high = run_cli("plan", "jobs-lum", "--icc", "0.2", env={"COLUMNS": "250"}, check=True).stdout
    assert "no number of repetitions would do" in high
    assert "between 0 and 1" in run_cli("plan", "jobs-lum", "--icc", "2").stderr
    # a likelihood probe: repetitions cannot help
    crows = run_cli("plan", "crows-pairs", env={"COLUMNS": "250"}, check=True).stdout
    assert "crows-pairs has 1,508 pairs; 2,189 would be needed" in crows
    assert "repetitions cannot help: crows-pairs scores log-likelihoods" in crows


def test_a_plan_counts_the_units_it_plans_in_not_the_items():
    """A headline planned in occupations or templates compares the units needed with the probe's units of that
    kind (the distinct values of a field of its items, over the items a filter keeps), not with its items."""
    from biaslab.planning.forms import CorrelationPlan, MeanPlan
    from biaslab.probing.core import ProbeItem

    items = [
        ProbeItem(f"i{k}", [], {"occupation": f"o{k % 3}", "context": "ambig" if k < 4 else "disambig"})
        for k in range(7)
    ]
    assert CorrelationPlan("occupations").available(items) == 7  # default: each item one unit
    assert CorrelationPlan("occupations", unit_key="occupation").available(items) == 3
    assert MeanPlan("ambiguous items", sd=1.0, where=(("context", "ambig"),)).available(items) == 4
    both = MeanPlan("ambiguous occupations", sd=1.0, unit_key="occupation", where=(("context", "disambig"),))
    assert both.available(items) == 3  # i4, i5, i6: o1, o2, o0


@requires_data
def test_winogender_plans_in_its_60_occupations():
    text = run_cli("plan", "winogender", env={"COLUMNS": "250"}, check=True).stdout
    assert "winogender has 60 occupations;" in text and "240" not in text
