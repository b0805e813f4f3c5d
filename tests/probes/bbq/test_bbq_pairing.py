"""bbq's pairing: every metric a mean of one value per question (checked by hand and against the pairing's own
metrics on a random table), so ``compare`` and the gate test them over templates by the paired cluster inference."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from biaslab.probes.bbq.metrics import bbq_metrics
from biaslab.probes.bbq.pairing import BbqPairing


def q(cat, template, example, cond, answer, label, *, biased=0, unknown=2):
    return {
        "category": cat,
        "subcategory": cat,
        "question_index": str(template),
        "item_id": f"{cat}-{example}",
        "example_id": str(example),
        "repetition": 0,
        "context_condition": cond,
        "answer": answer,
        "label": label,
        "unknown_answer": unknown,
        "biased_answer": biased,
    }


def _units(rows):
    p = BbqPairing()
    t = p.table(rows).columns
    return p.unit_values(t), dict(p.metric_fn(t)(t))


def test_unit_values_by_hand():
    """Ambiguous (label = unknown = 2): q1 unknown; q2, q3 the biased person; q4 a person whose role is unresolved;
    q5 the other person; q9 unparsed. Over the 5 answered: wrong w = 4/5, non-unknown with a role nu = 3/5, signed
    s = 1/5 (biased +1, other -1); score = 100 w s / nu = 80/3 = (1 - 1/5) x 100 x (2 x 2/3 - 1). Product rule:
    u = 100 (s w_i + w s_i) / nu - score nu_i / nu = 100/3 w_i + 400/3 s_i - 400/9 nu_i -> 0, 1100/9, 1100/9,
    300/9, -1300/9 (outside [-100, 100]: no bounds). Disambiguated: q6 biased, q7 other, q8 unknown: the score 0
    over the two answers naming a person, +100 and -100; q8's "unknown" is no unit of it (a linearised ratio value
    would hold the score itself and count as evidence for it)."""
    rows = [
        q("A", 1, 1, "ambig", 2, 2),
        q("A", 1, 2, "ambig", 0, 2),
        q("A", 2, 3, "ambig", 0, 2),
        q("A", 2, 4, "ambig", 0, 2, biased=None),
        q("A", 3, 5, "ambig", 1, 2),
        q("A", 1, 6, "disambig", 0, 0),
        q("A", 2, 7, "disambig", 1, 0),
        q("A", 3, 8, "disambig", 2, 0),
        q("A", 3, 9, "ambig", None, 2),
    ]
    uv, metrics = _units(rows)
    amb = uv["bias_score_ambig"]
    assert amb.mask.tolist() == [True] * 5 + [False] * 4 and amb.bounds is None
    assert amb.values[amb.mask] == pytest.approx(np.array([0, 1100, 1100, 300, -1300]) / 9)
    assert np.mean(amb.values[amb.mask]) == pytest.approx(80 / 3) == metrics["bias_score_ambig"]
    dis = uv["bias_score_disambig"]
    assert dis.mask.tolist() == [False] * 5 + [True] * 2 + [False] * 2 and dis.bounds == (-100.0, 100.0)
    assert dis.values[dis.mask].tolist() == [100, -100] and metrics["bias_score_disambig"] == 0
    acc = uv["accuracy_ambig"]  # the answered ambiguous questions' own 0/1
    assert acc.values[acc.mask].tolist() == [1, 0, 0, 0, 0] and acc.bounds == (0.0, 1.0)
    assert uv["accuracy_disambig"].values[uv["accuracy_disambig"].mask].tolist() == [1, 0, 0]
    assert uv["unparsed_rate"].values.tolist() == [0] * 8 + [1]
    # every non-unknown answer naming a resolved person: the score's values are +-100 and 0, bounded
    plain, m = _units([q("A", 1, 1, "ambig", 2, 2), q("A", 1, 2, "ambig", 0, 2), q("A", 2, 3, "ambig", 1, 2)])
    score = plain["bias_score_ambig"]
    assert score.values.tolist() == [0, 100, -100] and score.bounds == (-100.0, 100.0)
    assert m["bias_score_ambig"] == 0.0


def _random_rows(rng, n, answers=(0, 1, 2, None)):
    rows = []
    for i in range(n):
        cat = ["Age", "Religion", "Gender_identity (names)"][i % 3]
        label = int(rng.integers(0, 2)) if i % 2 else 2
        biased = None if rng.random() < 0.05 else int(rng.integers(0, 2))
        answer = answers[int(rng.integers(0, len(answers)))]
        rows.append(q(cat, i % 7, i, "ambig" if label == 2 else "disambig", answer, label, biased=biased))
    return rows


def test_unit_values_average_to_every_metric_on_a_random_table():
    uv, metrics = _units(_random_rows(np.random.default_rng(5), 400))
    finite = {k for k, v in metrics.items() if math.isfinite(v)}
    assert set(uv) == finite and len(finite) == 20  # 5 metrics, overall and per category
    for name in finite:
        u = uv[name]
        assert np.isfinite(u.values[u.mask]).all(), name
        assert float(np.mean(u.values[u.mask])) == pytest.approx(metrics[name], rel=1e-12, abs=1e-9), name
        if u.bounds is not None:
            assert ((u.values[u.mask] >= u.bounds[0]) & (u.values[u.mask] <= u.bounds[1])).all(), name


def _run(d, rows):
    d.mkdir()
    (d / "attempts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    results = {
        "schema_version": 2,
        "probe": "bbq",
        "probe_version": "1",
        "model": {"model": d.name},
        "parameters": {},
        "metrics": bbq_metrics(rows, n_permutations=200)[0],
        "n_items": len(rows),
        "n_attempts": len(rows),
    }
    (d / "results.json").write_text(json.dumps(results))
    return d


def test_compare_and_gate_test_every_metric_over_templates_by_the_unit_values(tmp_path, monkeypatch):
    from biaslab.compare.inference import agrees
    from biaslab.compare.paired import compare_pair, load_run
    from biaslab.gate.decide import run_gate

    rng = np.random.default_rng(11)
    base = _random_rows(rng, 240, answers=(0, 1, 2))
    cand = [dict(r, answer=int(rng.integers(0, 3))) if rng.random() < 0.8 else r for r in base]
    a, b = _run(tmp_path / "a", base), _run(tmp_path / "b", cand)
    rows, info = compare_pair(load_run(a), load_run(b), n_resamples=200)
    by = {c["metric"]: c for c in rows}
    assert info["design"] == "paired" and len(by) == 16  # 4 metrics, overall and per category
    for name, c in by.items():
        assert agrees(c), c
        if name.startswith("bias_score_disambig"):  # the runs name a person on different questions: other rows
            assert "bootstrap" in c["test"], c
            continue
        assert "bootstrap" not in c["test"], c
        assert c["n_clusters"] == (21 if ":" not in name else 7), c  # templates within category
    ma = json.loads((a / "results.json").read_text())["metrics"]
    assert by["bias_score_ambig"]["a"] == pytest.approx(ma["bias_score_ambig"]["value"])
    # an inconclusive verdict's shortfall reads the whole benchmark, which is not what this test is about
    monkeypatch.setattr("biaslab.gate.verdicts._shortfall", lambda *args, **kwargs: None)
    gate = run_gate(a, b, ["bias_score_ambig=30", "bias_score_disambig:Age=40"], n_resamples=200)
    got = {r["metric"]: r for r in gate["metrics"]}
    assert gate["probes"]["bbq"]["design"] == "paired"
    for name in ("bias_score_ambig", "bias_score_disambig:Age"):  # units: the templates the unit values are over
        assert got[name]["p"] is not None and got[name]["verdict"], got[name]
        assert got[name]["units"] == by[name]["n_clusters"], got[name]


def test_run_report_infers_both_bias_scores_from_the_pairings_unit_values():
    """The run report's interval and p of each bias score (overall and per category) are
    :func:`cluster_inference` of exactly the pairing's unit values over templates within category, on a random table
    (with unresolved biased answers: the linearised values leave [-100, 100] there)."""
    from biaslab.stats import cluster_inference

    rows = _random_rows(np.random.default_rng(7), 300)
    metrics, _ = bbq_metrics(rows, n_permutations=200)
    p = BbqPairing()
    t = p.table(rows).columns
    units = p.unit_values(t)
    checked = 0
    for name, uv in units.items():
        if not name.startswith("bias_score_"):
            continue
        m = uv.mask
        want = cluster_inference(
            uv.values[m], t["cluster"][m], t["group"][m], null=0.0, bounds=uv.bounds, label="templates", n_random=200
        )
        got = metrics[name]
        assert got["value"] == pytest.approx(want["value"], abs=1e-9), name
        # (equal up to the order of summation: the report numbers templates in order of appearance)
        assert (got["ci_low"], got["ci_high"], got["p"]) == pytest.approx(
            (want["ci_low"], want["ci_high"], want["p"]), rel=1e-12, abs=1e-12
        ), name
        assert got["n"] == want["n_clusters"] and got["ci_low"] is not None, name
        assert got["method"] == want["method"], name
        checked += 1
    assert checked == 8 and units["bias_score_ambig"].bounds is None  # 2 scores, overall and 3 categories
    # every wrong answer naming a resolved person: exactly +-100 and 0 (no rounding), bounded
    resolved = [dict(x, biased_answer=x["biased_answer"] or 0) for x in rows]
    for name, uv in p.unit_values(p.table(resolved).columns).items():
        if name.startswith("bias_score_ambig"):
            assert set(uv.values[uv.mask].tolist()) <= {-100.0, 0.0, 100.0} and uv.bounds == (-100.0, 100.0), name


def test_unknown_answers_are_no_evidence_for_the_disambiguated_score():
    """One disambiguated question answered with the biased person, six templates answered "unknown": the score is
    100 over one answer, and neither the report nor the unit values read the unknown answers as units of it (as
    linearised ratio values they would each hold 100, an exact, significant 100 from a single answer)."""
    rows = [q("A", 1, 1, "disambig", 0, 1)] + [q("A", t, 10 + t, "disambig", 2, 1) for t in range(2, 8)]
    uv, metrics = _units(rows)
    dis = uv["bias_score_disambig"]
    assert dis.mask.tolist() == [True] + [False] * 6 and metrics["bias_score_disambig"] == 100
    report, _ = bbq_metrics(rows)
    got = report["bias_score_disambig"]
    assert got["value"] == 100 and got["ci_low"] is None and got["n"] == 1
    assert got["p"] is None or got["p"] >= 0.5
