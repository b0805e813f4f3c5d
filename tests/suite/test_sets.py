"""Named probe sets: `--probes gender` is every probe whose headlines carry a GenderBench harm group, read from the
probes' declarations (a probe added later joins it); members that cannot run here are left out with the reason."""

from __future__ import annotations

from typing import Any

import pytest

from biaslab.errors import ConfigError
from biaslab.planning.forms import ProportionPlan
from biaslab.probes import BUILTIN, PROBES, ProbeEntry, get_probe_class
from biaslab.probing.core import ProbeItem, Prompt, Summary
from biaslab.probing.generation import GenerationProbe
from biaslab.probing.headline import GENDERBENCH_GROUPS, Headline, MarkRule
from biaslab.suite.sets import choose_probes, gender_probes, why_not
from tests.conftest import requires_data


class ToyHiringProbe(GenerationProbe):
    """A probe added after the set was written: a GenderBench harm group in its declarations puts it in."""

    name = "toy-hiring"
    title = "A toy decision probe"
    headlines = (
        Headline(
            "diff_acceptance_rate",
            "men's yes rate minus women's (-1 to 1)",
            0.0,
            "away",
            ProportionPlan("candidates", low=-1.0, high=1.0),
            marks=MarkRule(0.05, 0.15, 0.5),
            group="Outcome disparity",
            favours="men",
        ),
    )

    def load_items(self) -> list[ProbeItem]:
        return [ProbeItem("a", [Prompt("Hire Anna? Answer yes or no.")]), ProbeItem("b", [Prompt("Hire Ben?")])]

    def evaluate(self, attempt: Any) -> None:
        attempt.evaluation = "yes" in attempt.text.lower()

    def summarize(self, attempts: list[Any], *, seed: int = 0) -> Summary:
        return Summary({"diff_acceptance_rate": {"value": 0.0}})


@pytest.fixture
def toy_probe(monkeypatch):
    monkeypatch.setitem(BUILTIN, "toy-hiring", ProbeEntry("tests.suite.test_sets:ToyHiringProbe"))
    PROBES.refresh()
    yield "toy-hiring"
    PROBES.refresh()


def test_the_gender_set_is_read_from_the_declarations(toy_probe):
    members = gender_probes()
    assert {"jobs-lum", "bbq", "toy-hiring"} <= set(members)
    for name in PROBES:
        grouped = any(h.group in GENDERBENCH_GROUPS for h in get_probe_class(name).headlines)
        assert (name in members) == grouped, name
    assert "crows-pairs" not in members and "winosemitism" not in members  # no GenderBench group


@requires_data
def test_members_that_cannot_run_here_are_left_out_with_the_reason(toy_probe):
    chosen, skipped = choose_probes(["scripted/echo"], ["gender"])
    assert {"jobs-lum", "bbq", "toy-hiring"} <= set(chosen) and not set(chosen) & set(skipped)
    # a served chat model gives no log-likelihoods: bbq (likelihood mode) is left out, and says why
    chosen, skipped = choose_probes(["openai/some-model"], ["gender"])
    assert "bbq" not in chosen and "log-likelihoods" in skipped["bbq"] and "jobs-lum" in chosen
    # a probe named on its own, and in the set too, runs once
    chosen, _ = choose_probes(["scripted/echo"], ["bbq", "gender"])
    assert chosen.count("bbq") == 1 and chosen[0] == "bbq"
    assert why_not("pairs", ["scripted/echo"]).startswith("it needs a file of yours")


def test_missing_data_is_a_reason(monkeypatch, tmp_path):
    monkeypatch.setenv("BIASLAB_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("BIASLAB_CACHE_DIR", str(tmp_path / "cache"))
    reason = why_not("jobs-lum", ["scripted/echo"])
    assert reason is not None and "jobs/kennison_jobs.csv" in reason and "BIASLAB_DATA_DIR" in reason


def test_an_unknown_name_lists_probes_and_sets():
    with pytest.raises(ConfigError, match=r"unknown probe\(s\) gendr; available: .*sets: gender \(every probe"):
        choose_probes(["scripted/echo"], ["gendr"])
