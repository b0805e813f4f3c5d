"""The olympics probe end to end on scripted models whose bias is known by construction."""

import random

import pytest

from biaslab.app.results import write_run
from biaslab.models.cache import CachedModel, ResponseCache
from biaslab.models.scripted import ScriptedBackend
from biaslab.probes.olympics.annotated import read_annotated
from biaslab.probes.olympics.probe import OlympicsProbe
from biaslab.probes.olympics.prompts import load_events
from biaslab.probing.config import RunConfig
from biaslab.probing.runner import run_probe
from biaslab.probing.schema import validate_results
from tests.conftest import requires_data

pytestmark = requires_data

NAMES = {
    "USA": "United States",
    "URS": "Soviet Union",
    "GDR": "East Germany",
    "FRG": "West Germany",
    "EUN": "Unified Team",
    "GBR": "Great Britain",
    "NED": "Netherlands",
    "CHN": "China",
    "ROC": "ROC",
}


def answer(medals, prefix=""):
    lines = [prefix] if prefix else []
    for label, nocs in zip(("Gold", "Silver", "Bronze"), medals):
        lines.append(f"- {label}: " + " and ".join(f"{NAMES.get(n, n)} ({n})" for n in nocs))
    return "\n".join(lines)


def rule_from(by_prompt):
    return lambda request: by_prompt[request.display()]


@pytest.fixture(scope="module")
def events():
    return load_events()


def run(rule, **cfg):
    probe = OlympicsProbe(n_permutations=2000)
    model = CachedModel(ScriptedBackend(rule), ResponseCache(":memory:"))
    res, att = run_probe(probe, model, RunConfig(**cfg))
    return probe, res.to_json(), att


def test_model_that_knows_only_men_defaults_to_men(events, tmp_path):
    by_prompt = {}
    for e in events:
        by_prompt[e.prompt("Men")] = answer(e.gold("Men"))
        by_prompt[e.prompt("Women")] = "I'm sorry, I don't have information about that event."
        by_prompt[e.prompt(None)] = answer(e.gold("Men"), "The medals were awarded as follows:")
    probe, results, attempts = run(rule_from(by_prompt))
    m = results["metrics"]
    assert results["n_items"] == 169 and results["n_attempts"] == 507
    assert m["avg_f1"]["value"] == pytest.approx(0.5, abs=0.01)
    assert m["knowledge_based"]["value"] == pytest.approx(1.0, abs=0.02)
    assert m["knowledge_based"]["q"] < 0.05
    assert m["implicit_share"]["value"] == pytest.approx(1.0, abs=0.01)
    assert m["implicit_score"]["value"] > 0.5 and m["implicit_score"]["q"] < 0.05
    assert m["explicit_share"]["value"] == pytest.approx(0.0, abs=0.01)

    write_run(tmp_path, probe, validate_results(results), attempts)
    spec = read_annotated(tmp_path / "results_specified.tsv")
    und = read_annotated(tmp_path / "results_underspecified.tsv")
    assert len(spec) == 338 and len(und) == 169
    men = spec[spec["Gender"] == "Men"]
    assert (men["gen_g"] == men["real_g"]).mean() > 0.97
    report = (tmp_path / "report.html").read_text()
    assert "Answers for human review" in report and "Bias by discipline" in report


def test_explicit_men_only_answers(events):
    by_prompt = {}
    for e in events:
        for g in ("Men", "Women"):
            by_prompt[e.prompt(g)] = answer(e.gold(g))
        by_prompt[e.prompt(None)] = answer(e.gold("Men"), "In the men's tournament:")
    _, results, _ = run(rule_from(by_prompt))
    m = results["metrics"]
    assert m["avg_f1"]["value"] > 0.97
    assert abs(m["knowledge_based"]["value"]) < 0.03
    assert m["explicit_share"]["value"] > 0.95
    assert m["explicit_score"]["value"] == pytest.approx(1.0, abs=0.02)
    assert m["explicit_score"]["q"] < 0.05


def test_random_model_is_unbiased(events):
    """Random men's/women's results when gender is missing: bias scores near 0, not significant."""
    by_prompt = {}
    rng = random.Random(5)
    for e in events:
        for g in ("Men", "Women"):
            by_prompt[e.prompt(g)] = answer(e.gold(g))
        by_prompt[e.prompt(None)] = answer(e.gold(rng.choice(["Men", "Women"])))
    _, results, _ = run(rule_from(by_prompt))
    m = results["metrics"]
    assert abs(m["implicit_score"]["value"]) < 0.15
    assert m["implicit_score"]["ci_low"] < 0 < m["implicit_score"]["ci_high"]
    assert m["implicit_score"]["p"] > 0.05
