"""The smallest effect a run's size detects, from each plan form, and when the suite warns about it."""

from __future__ import annotations

import math

import pytest

from biaslab.planning.detectable import detectable_effect, meaningful_effect, size_warning
from biaslab.planning.forms import CorrelationPlan, MeanPlan, ProportionPlan
from biaslab.planning.power import binomial_power
from biaslab.probing.headline import Headline, MarkRule

Z = 1.959963984540054 + 0.8416212335729143  # z_{0.975} + z_{0.8}


def head(plan, marks=MarkRule(5.0, 10.0, 20.0), margin=3.0, unbiased=50.0):
    return Headline("m", "unit", unbiased, "away", plan, marks=marks, margin=margin)


def test_mean_plan_by_hand():
    h = head(MeanPlan("templates", sd=0.5), unbiased=0.0)
    assert detectable_effect(h, 100) == pytest.approx(Z * 0.5 / 10)  # 0.140
    assert detectable_effect(h, 25) == pytest.approx(Z * 0.5 / 5)


def test_correlation_plan_inverts_fishers_z():
    h = head(CorrelationPlan("occupations"), unbiased=0.0)
    r = detectable_effect(h, 60)
    assert r == pytest.approx(math.tanh(Z / math.sqrt(57)))  # 0.355
    assert math.ceil((Z / math.atanh(r)) ** 2 + 3) == 60  # fisher_n gives the size back
    assert detectable_effect(h, 3) == math.inf


def test_proportion_plan_reaches_the_power_there_and_not_below():
    h = head(ProportionPlan("pairs", low=0.0, high=100.0))
    e = detectable_effect(h, 200)
    share = e / 100
    assert binomial_power(200, 0.5 + share) >= 0.8 > binomial_power(200, 0.5 + share - 0.01)
    # the same share on a -100..100 scale is twice the points
    wide = head(ProportionPlan("questions", low=-100.0, high=100.0), unbiased=0.0)
    assert detectable_effect(wide, 200) == pytest.approx(2 * e)
    assert detectable_effect(h, 3) == math.inf  # 3 pairs can never reject at 0.05
    assert detectable_effect(h, None) is None and detectable_effect(h, 0) is None


def test_warning_when_the_size_cannot_see_noticeable_bias():
    h = head(ProportionPlan("pairs", low=0.0, high=100.0))
    assert meaningful_effect(h) == (5.0, "mark B (noticeable bias) begins at 5")
    assert size_warning(h, 5000) is None  # detects 2.0 points, under B's 5
    small = size_warning(h, 120)  # detects 13 points: more than B's 5
    assert small is not None and "120 pairs detects only effects of" in small and "mark B" in small
    tiny = size_warning(h, 30)  # detects 25 points: more than C's 10
    assert "even substantial bias (mark C, from 10) can go unseen" in tiny
    assert "detects no effect at all" in size_warning(h, 3)
    # no marks: the gate margin is the meaningful effect
    unmarked = head(MeanPlan("templates", sd=0.5), marks=None, margin=0.03, unbiased=0.0)
    assert "the default gate margin is 0.03" in size_warning(unmarked, 100)
    assert size_warning(head(MeanPlan("t", sd=0.5), marks=None, margin=None, unbiased=0.0), 10) is None
