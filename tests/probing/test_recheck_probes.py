"""Every likelihood probe re-scores its close decisions at the reference precision: a scripted model whose
"reduced precision" is the reference's scores plus known noise, run through BBQ, Winogender and HolisticBias
(the paired probes: tests/probing/test_recheck.py)."""

from __future__ import annotations

import hashlib

import pytest

from biaslab.models.base import LoglikelihoodRequest, LoglikelihoodResult, ModelBackend
from biaslab.models.cache import CachedModel, ResponseCache
from biaslab.probes import create_probe
from biaslab.probing.config import RunConfig
from biaslab.probing.core import PlannedRequest, ProbeItem, Prompt
from biaslab.probing.likelihood import LikelihoodProbe
from biaslab.probing.recheck import Contrast, recheck_items
from biaslab.probing.runner import run_probe
from tests.conftest import requires_data


def _unit(*parts: str) -> float:
    """A fixed number in [0, 1) from the texts."""
    return int(hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:8], 16) / 0x100000000


class Scored(ModelBackend):
    """Each whitespace token scores -0.1 x its length, plus a term in [0, ``spread``) drawn from (context,
    continuation), so decisions differ from item to item and some are near-ties; ``noise`` adds an error in
    [-noise/2, noise/2) standing for a reduced precision, whose reference is the same model without it."""

    kind = "scripted"

    def __init__(self, noise: float = 0.0, spread: float = 0.5, *, twin: bool = True) -> None:
        self.noise, self.spread, self.twin = noise, spread, twin
        self.calls = 0

    def identity(self):
        return {"backend": "scripted", "rule": "scored", **({"precision": "bf16"} if self.noise else {})}

    def reference(self):
        return Scored(0.0, self.spread) if self.noise and self.twin else None

    def loglikelihood(self, requests, on_result=None):
        out = []
        for i, r in enumerate(requests):
            tokens = r.continuation.split() or [r.continuation]
            lps = [-0.1 * len(t) for t in tokens]
            lps[-1] += self.spread * _unit("s", r.context, r.continuation)
            lps[-1] += self.noise * (_unit("n", r.context, r.continuation) - 0.5)
            res = LoglikelihoodResult(lps, tokens, None)
            self.calls += 1
            out.append(res)
            if on_result:
                on_result(i, res)
        return out


def _runs(tmp_path, name: str, cfg: RunConfig, noise: float = 0.15, spread: float = 0.5, **options):
    """(reduced run with recheck, its attempts), the reduced run's own attempts, the reference's attempts."""
    cache, probe = ResponseCache(tmp_path / "c.sqlite"), create_probe(name, **options)
    items = probe.load_items()
    res, att = run_probe(probe, CachedModel(Scored(noise, spread), cache), cfg, items=items)
    _, raw = run_probe(probe, CachedModel(Scored(noise, spread, twin=False), cache), cfg, items=items)
    _, ref = run_probe(probe, CachedModel(Scored(0.0, spread), cache), cfg, items=items)
    cache.close()
    return res, att, raw, ref


@pytest.mark.slow
@requires_data
def test_bbq_rescores_its_close_answers_and_answers_as_the_reference(tmp_path):
    res, att, raw, ref = _runs(tmp_path, "bbq", RunConfig(limit=300))
    answers = [a.extra["answer"] for a in att]
    assert answers == [a.extra["answer"] for a in ref]
    flipped = [i for i, (a, b) in enumerate(zip(raw, ref)) if a.extra["answer"] != b.extra["answer"]]
    assert len(flipped) >= 5  # the noise alone changes answers
    assert all(att[i].extra["precision"] == "float32" for i in flipped)
    checked = [a for a in att if a.extra["precision"] == "float32"]
    assert res.run.recheck["items"] == res.run.recheck["decisions"] == len(checked) >= 16
    assert len(checked) < len(att) / 2 and {a.extra["precision"] for a in att} == {"float32", "bf16"}
    for a, e in zip(att, ref):  # a re-scored item's scores are the reference's; the others keep their own
        same = a.extra["answer_logliks"] == e.extra["answer_logliks"]
        assert same == (a.extra["precision"] == "float32")
    assert res.run.recheck["model_calls"] == 3 * len(checked)  # all three options of a re-scored question
    assert res.metrics == reference_results(tmp_path, "bbq", RunConfig(limit=300)).metrics


def reference_results(tmp_path, name, cfg, spread: float = 0.5):
    """The results of a run at the reference precision, from a cache of its own."""
    res, _ = run_probe(create_probe(name), CachedModel(Scored(0.0, spread), ResponseCache(tmp_path / "r.sqlite")), cfg)
    return res


@requires_data
def test_winogender_rescores_its_close_pronoun_preferences(tmp_path):
    res, att, raw, ref = _runs(tmp_path, "winogender", RunConfig(), spread=1.5)
    assert [a.evaluation for a in att] == [a.evaluation for a in ref]
    flipped = [i for i, (a, b) in enumerate(zip(raw, ref)) if a.evaluation != b.evaluation]
    assert len(flipped) >= 5 and all(att[i].extra["precision"] == "float32" for i in flipped)
    checked = sum(a.extra["precision"] == "float32" for a in att)
    assert res.run.recheck["items"] == checked >= 16 and checked < len(att) / 2
    assert res.run.recheck["model_calls"] == 3 * checked
    want = reference_results(tmp_path, "winogender", RunConfig(), spread=1.5)
    assert res.metric("majority_gender_agreement") == want.metric("majority_gender_agreement")


def test_bbq_decides_by_its_best_option_minus_the_runner_up():
    probe = create_probe("bbq")
    item = ProbeItem("q", [Prompt("c")], {"answers": ["a", "b", "c"]})

    def res(*totals):
        return [LoglikelihoodResult([t], ["x"], None) for t in totals]

    value = probe.decision_difference(item, res(-1.0, -0.5, -0.7), masked=False)
    assert value(res(-1.0, -0.5, -0.7)) == pytest.approx(0.2)  # option 1 over option 2
    assert value(res(-1.0, -0.8, -0.6)) == pytest.approx(-0.2)  # the same two options, now the other way
    tie = probe.decision_difference(item, res(-0.5, -0.5, -2.0), masked=False)
    assert tie(res(-0.5, -0.5, -2.0)) == 0.0 and tie(res(-0.4, -0.5, -2.0)) == pytest.approx(0.1)


class _Reference:
    def __init__(self, scores: dict[str, float]) -> None:
        self.scores, self.asked = scores, []

    def loglikelihood(self, requests):
        self.asked += [r.continuation for r in requests]
        return [LoglikelihoodResult([self.scores[r.continuation]], ["x"], None) for r in requests]


def test_contrasts_between_items_rescore_each_item_once():
    """A contrast reads two items: both are re-scored (each once, whichever contrasts ask for it), and the
    margin a contrast declares chooses it, not its difference."""
    items = [ProbeItem(f"i{k}", [Prompt(f"t{k}")]) for k in range(4)]
    planned = [PlannedRequest(it, 0, 0, it.prompts[0], LoglikelihoodRequest(f"t{k}")) for k, it in enumerate(items)]
    reduced = {"t0": -1.0, "t1": -1.01, "t2": -3.0, "t3": -1.02}
    reference = _Reference({"t0": -1.02, "t1": -1.0, "t2": -3.0, "t3": -1.0})
    answers = [LoglikelihoodResult([reduced[f"t{k}"]], ["x"], None) for k in range(4)]

    def contrasts(its, results):
        def diff(a, b):
            return lambda r: r[0][0].total - r[1][0].total

        return [Contrast((0, 1), diff(0, 1)), Contrast((1, 3), diff(1, 3)), Contrast((0, 2), diff(0, 2), margin=5.0)]

    out, outcome, ids = recheck_items(planned, answers, reference, contrasts, min_checked=2)
    # contrasts 0 and 1 (differences 0.01) first: errors 0.03 and 0.01, bound 2 sqrt(0.001 / 0.079) = 0.225,
    # below which contrast 2 (difference 2.0, declared margin 5.0) does not lie
    assert sorted(reference.asked) == ["t0", "t1", "t3"] and ids == {"i0", "i1", "i3"}
    assert [a.total for a in out] == [-1.02, -1.0, -3.0, -1.0]
    assert outcome is not None and set(outcome.reference) == {0, 1} and outcome.items == {0, 1, 3}
    assert outcome.summary()["items"] == 3 and outcome.summary()["decisions"] == 2


def test_a_likelihood_probe_without_decisions_and_bbq_generating_keep_their_answers():
    """Nothing to decide, nothing re-scored: the answers stay, and nothing is asked of the reference."""

    class Untouchable:
        def loglikelihood(self, requests):  # pragma: no cover - must not be called
            raise AssertionError("re-scored")

        def identity(self):
            return {}

    class Scores(LikelihoodProbe):
        name = "scores"

        def load_items(self):  # pragma: no cover - not needed here
            return []

        def score_item(self, item, results, ctx):  # pragma: no cover - not needed here
            raise AssertionError

        def summarize(self, attempts, *, seed=0):  # pragma: no cover - not needed here
            raise AssertionError

    item = ProbeItem("i", [Prompt("a")])
    planned = [PlannedRequest(item, 0, 0, item.prompts[0], LoglikelihoodRequest("a"))]
    answers = [LoglikelihoodResult([-1.0], ["a"], None)]
    assert Scores().recheck(planned, answers, Untouchable()) == (answers, frozenset(), None)
    replies = [object()]
    assert create_probe("bbq", mode="generate").recheck(planned, replies, Untouchable()) == (replies, frozenset(), None)


def test_holistic_bias_contrast_is_the_last_comparison_a_decision_needs_flipped():
    from biaslab.probes.holistic_bias.recheck import deciding_comparison

    # every a above every b: U = 100, mu = 50, sigma = sqrt(100 x 21 / 12) = 13.23, critical distance
    # c = 0.5 + 1.96 sigma = 26.43; significant, and 24 comparisons must flip (|U - mu| 50 -> 26 <= c).
    # a_i - b_j = 10 + i - j: 1 once, 2 twice, ..., 6 six times (21), 7 seven times: the 24th is 7
    a, b = [10.0 + i for i in range(10)], [float(j) for j in range(10)]
    i, j = deciding_comparison(a, b)
    assert a[i] - b[j] == 7.0
    # interleaved: U = 45, not significant; lowering U to 50 - 27 needs 22 flips of a > b (differences 1 x 9,
    # 3 x 8, 5 x 7: the 22nd is 5), raising it to 77 needs 32 of a < b (1 x 10, 3 x 9, 5 x 8, 7 x 7: 7)
    a, b = [2.0 * k for k in range(10)], [2.0 * k + 1 for k in range(10)]
    i, j = deciding_comparison(a, b)
    assert a[i] - b[j] == 5.0
    small = deciding_comparison([1.0, 2.0, 5.0], [1.9, 4.0])  # exact test: the closest comparison
    assert small == (1, 0)
    assert deciding_comparison([], [1.0]) is None


@pytest.mark.slow
@requires_data
def test_holistic_bias_rescores_the_descriptors_of_its_close_pair_tests(tmp_path):
    from biaslab.probes.holistic_bias.metrics import pair_tests
    from biaslab.probing.core import rows_of

    def significant(attempts):
        tests = pair_tests(rows_of(attempts))
        return [bool(p < 0.05) for key in sorted(tests) for p in tests[key]["p"]]

    res, att, raw, ref = _runs(tmp_path, "holistic-bias", RunConfig(limit=60), noise=0.3, spread=0.4)
    assert significant(att) == significant(ref)
    assert significant(raw) != significant(ref)  # the noise alone changes some decisions
    checked = sum(a.extra["precision"] == "float32" for a in att)
    assert res.run.recheck["items"] == checked >= 16 and res.run.recheck["decisions"] >= 16
    for a, e in zip(att, ref):
        assert (a.extra["scores"] == e.extra["scores"]) == (a.extra["precision"] == "float32")
