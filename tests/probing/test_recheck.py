"""Close pairs re-scored at the reference precision (biaslab.probing.recheck), by hand and end to end
with a scripted model whose "reduced precision" adds known errors."""

from __future__ import annotations

import hashlib
import json
import math

import pytest

from biaslab.models.base import LoglikelihoodResult, ModelBackend
from biaslab.models.cache import CachedModel, ResponseCache
from biaslab.models.scripted import ScriptedBackend
from biaslab.probes import create_probe
from biaslab.probes.paired_sentences.scoring import decide
from biaslab.probing.config import RunConfig
from biaslab.probing.recheck import recheck_close, sd_upper_bound
from biaslab.probing.runner import run_probe
from tests.conftest import requires_data


def test_sd_upper_bound_is_the_chi_square_bound():
    stats = pytest.importorskip("scipy.stats")
    for n in (16, 50, 200):
        errors = [0.1 * (-1) ** i for i in range(n)]  # root mean square 0.1
        exact = math.sqrt(n * 0.01 / stats.chi2.ppf(0.05, n))
        assert sd_upper_bound(errors) == pytest.approx(exact, rel=0.01)
        assert sd_upper_bound(errors) > 0.1  # above the sample's own value
    assert sd_upper_bound([]) == 0.0


def test_recheck_takes_the_nearest_pairs_then_all_below_the_measured_margin():
    reduced = [0.01, -0.02, 0.5, -0.9, 0.05, 1.2]
    reference = [-0.01, -0.03, 0.49, -0.9, 0.12, 1.25]
    asked: list[list[int]] = []

    def rescore(idx):
        asked.append(list(idx))
        return [reference[i] for i in idx]

    out = recheck_close(reduced, rescore, min_checked=2, safety=2.5)
    # by hand: pairs 0 and 1 first (errors 0.02, 0.01); Wilson-Hilferty chi-square 5 % quantile for 2 d.f.:
    # 2 (1 - 1/9 - 1.645 sqrt(1/9))^3 = 0.0790 -> bound sqrt(0.0005 / 0.0790) = 0.0796, margin 0.199: pair 4
    # (|0.05|) joins; errors 0.02, 0.01, -0.07: 3 d.f. quantile 0.328 -> margin 2.5 sqrt(0.0054 / 0.328) = 0.321,
    # below which no other pair lies (|0.5| is the next)
    assert asked == [[0, 1], [4]]
    assert set(out.reference) == {0, 1, 4} and out.reference[4] == 0.12
    q3 = 3 * (1 - 2 / 27 - 1.6448536 * math.sqrt(2 / 27)) ** 3
    assert out.margin == pytest.approx(2.5 * math.sqrt(0.0054 / q3), rel=1e-6)
    assert out.margin == pytest.approx(0.321, abs=0.001)
    assert out.max_error == pytest.approx(0.07) and out.error_rms == pytest.approx(math.sqrt(0.0054 / 3))


def test_recheck_stops_at_the_minimum_when_the_errors_are_tiny_and_handles_few_pairs():
    reduced = [0.3, -0.2, 0.1, 0.4]
    out = recheck_close(reduced, lambda idx: [reduced[i] for i in idx], min_checked=2)
    assert set(out.reference) == {1, 2} and out.margin == 0.0  # no error seen: nothing more to re-score
    assert recheck_close([], lambda idx: [], min_checked=16).reference == {}


class ReducedScripted(ModelBackend):
    """The scripted model with a known error per text (up to +-0.06 nats), standing for a reduced precision."""

    kind = "scripted"

    def __init__(self) -> None:
        self.exact = ScriptedBackend("echo")
        self.calls = 0

    def identity(self):
        return {**self.exact.identity(), "precision": "bf16"}

    def reference(self):
        return self.exact

    @staticmethod
    def error(text: str) -> float:
        return (int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF - 0.5) * 0.12

    def loglikelihood(self, requests, on_result=None):
        out = []
        for i, r in enumerate(self.exact.loglikelihood(requests)):
            lps = list(r.token_logprobs)
            lps[-1] += self.error(requests[i].continuation)
            res = LoglikelihoodResult(lps, r.tokens, r.is_greedy)
            self.calls += 1
            out.append(res)
            if on_result:
                on_result(i, res)
        return out


def _pairs_csv(tmp_path, n=60):
    # the scripted model scores a word -0.1 x its length: with full-sentence scoring, words of 1 to 3 letters
    # make the pairs' differences 0, +-0.1 or +-0.2 nats; the reduced model's errors (up to +-0.12 on
    # a difference) turn the ties into decisions and flip some of the +-0.1 ones
    rows = ["sent_more,sent_less"]
    for i in range(n):
        more = f"pair {i} {('x', 'ya', 'zbb')[i % 3]} end"
        less = f"pair {i} {('p', 'qa', 'rbb')[(i // 3) % 3]} end"
        rows.append(f"{more},{less}")
    path = tmp_path / "pairs.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def test_a_reduced_precision_run_rescores_its_close_pairs_and_matches_the_reference(tmp_path):
    csv = _pairs_csv(tmp_path)
    reduced = ReducedScripted()
    cache = ResponseCache(tmp_path / "c.sqlite")
    model = CachedModel(reduced, cache)
    probe = create_probe("pairs", pairs=csv, scoring="full-sentence")
    res, att = run_probe(probe, model, RunConfig())
    _, exact_att = run_probe(
        create_probe("pairs", pairs=csv, scoring="full-sentence"),
        CachedModel(ScriptedBackend("echo"), ResponseCache(tmp_path / "e.sqlite")),
        RunConfig(),
    )
    # the reduced model's own decisions: many differ from the reference's
    diffs = [a.extra["score_more"] - a.extra["score_less"] for a in exact_att]
    raw = [
        d + reduced.error(a.extra["sent_more"]) - reduced.error(a.extra["sent_less"]) for d, a in zip(diffs, exact_att)
    ]
    flipped = [i for i, (d, r) in enumerate(zip(diffs, raw)) if decide(d, 0) != decide(r, 0)]
    assert len(flipped) >= 15 and any(abs(diffs[i]) > 0.05 for i in flipped)
    assert [a.evaluation for a in att] == [a.evaluation for a in exact_att]  # every decision the reference's
    checked = [a for a in att if a.extra["precision"] == "float32"]
    assert {a.extra["precision"] for a in att} == {"float32", "bf16"}
    assert len(checked) == res.run.recheck["pairs"] >= 16
    for a, e in zip(att, exact_att):
        if a.extra["precision"] == "float32":
            assert (a.extra["score_more"], a.extra["score_less"]) == (e.extra["score_more"], e.extra["score_less"])
    assert all(att[i].extra["precision"] == "float32" for i in flipped)
    recheck = res.run.recheck
    assert recheck["model_calls"] == 2 * len(checked) and 0 < recheck["max_error"] <= 0.12
    # the reference's answers are cached under its own identity (never the reduced one's)
    models = {
        json.loads(m)["identity"].get("precision") for (m,) in cache._db.execute("SELECT DISTINCT model FROM responses")
    }
    assert models == {"bf16", None}
    again = CachedModel(ReducedScripted(), cache)
    res2, att2 = run_probe(create_probe("pairs", pairs=csv, scoring="full-sentence"), again, RunConfig())
    assert res2.run.model_calls == 0 and res2.run.recheck["model_calls"] == 0  # all from the cache
    assert [a.to_json() for a in att2] == [a.to_json() for a in att]
    cache.close()


def test_a_run_at_the_reference_precision_rescores_nothing(tmp_path):
    model = CachedModel(ScriptedBackend("echo"), ResponseCache(tmp_path / "c.sqlite"))
    res, att = run_probe(create_probe("pairs", pairs=_pairs_csv(tmp_path, 6)), model, RunConfig())
    assert model.reference() is None and res.run.recheck is None
    assert all("precision" not in a.extra for a in att)


@requires_data
def test_crows_pairs_rescores_its_close_pairs_too(tmp_path):
    reduced = CachedModel(ReducedScripted(), ResponseCache(tmp_path / "c.sqlite"))
    exact = CachedModel(ScriptedBackend("echo"), ResponseCache(tmp_path / "e.sqlite"))
    res, att = run_probe(create_probe("crows-pairs"), reduced, RunConfig(limit=80))
    _, ref = run_probe(create_probe("crows-pairs"), exact, RunConfig(limit=80))
    assert [a.evaluation for a in att] == [a.evaluation for a in ref]
    assert res.run.recheck["pairs"] == sum(a.extra["precision"] == "float32" for a in att) >= 16

    def diff(a):
        return a.extra["score_more"] - a.extra["score_less"]

    flipped = [a for a, b in zip(att, ref) if a.extra["precision"] == "bf16" and abs(diff(a) - diff(b)) > abs(diff(b))]
    assert not flipped  # no pair kept at reduced precision had an error larger than its difference
