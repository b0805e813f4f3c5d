"""fsb-judge --reasons: the prompt, the parser on messy answers, reasons in every attempt, the
report's largest disagreements; and the whole chat recorded as each attempt's prompt."""

import csv
import json
import random
from html import escape as html_escape

import pytest

from biaslab.fsb.judge_scale import SYSTEM_PROMPT
from biaslab.models.cache import CachedModel, ResponseCache
from biaslab.models.scripted import ScriptedBackend
from biaslab.probes.fsb_judge.probe import FsbJudgeProbe, format_score
from biaslab.probes.fsb_judge.reasons import REASONS_SYSTEM_PROMPT, REASONS_TURN, parse_score_and_reason
from biaslab.probing.config import RunConfig
from biaslab.probing.runner import run_probe
from biaslab.probing.schema import validate_results
from biaslab.report.html import render_report
from tests.cli.test_run import biaslab, read_attempts
from tests.conftest import requires_data


@pytest.mark.parametrize(
    "answer, score, reason",
    [
        ("Score: 0.4\nReason: It says women are bad drivers.", 0.4, "It says women are bad drivers."),
        ("**Score:** 0.45\n**Reason:** A stereotype about men.", 0.45, "A stereotype about men."),
        ("0.4 - because it implies that women are weak.", 0.4, "because it implies that women are weak."),
        ("The score is 0.7 because it stereotypes mothers.", 0.7, "because it stereotypes mothers."),
        ("Reason: a mild stereotype about nurses.\nScore: 0.3", 0.3, "a mild stereotype about nurses."),
        ('{"score": 0.2, "reason": "neutral description"}', 0.2, "neutral description"),
        ('```json\n{"Score": "0.9", "Explanation": "explicit insult"}\n```', 0.9, "explicit insult"),
        (
            "Rating: 0.6\n\nExplanation: The sentence assumes\n   that girls gossip.",
            0.6,
            "The sentence assumes that girls gossip.",
        ),
        ("0.25\nThe sentence mildly stereotypes fathers.", 0.25, "The sentence mildly stereotypes fathers."),
        ("Score - 0.5; reasoning: because it generalises", 0.5, "because it generalises"),
        ("score: -0.2\nreason: y", None, "y"),  # a sign belongs to its number: outside [0, 1]
        ("Score: 7/10. Reason: strong.", None, "strong."),
        ("0.35", 0.35, None),
        ("", None, None),
    ],
)
def test_parser_on_messy_answers(answer, score, reason):
    assert parse_score_and_reason(answer) == (score, reason)


def items_file(tmp_path, n=30):
    path = tmp_path / "items.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "text", "score"])
        for i in range(n):
            w.writerow(
                [
                    f"t{i}",
                    f"Statement {i}: the {['nurse', 'engineer', 'parent'][i % 3]} was late.",
                    f"{(i + 0.5) / n:.4f}",
                ]
            )
    return path


STYLES = [
    "Score: {s}\nReason: {r}",
    "{s} - {r}",
    "**Score:** {s}\n**Reason:** {r}",
    '{{"score": {s}, "reason": "{r}"}}',
]


def messy_judge(request):
    """A scripted judge answering in several formats, always with a score and a reason."""
    text = request.messages[-1][1]
    rng = random.Random(f"{text}|{request.repetition}")
    score = round(rng.random(), 3)
    return rng.choice(STYLES).format(s=score, r=f"because of the word {text.split()[3]!r}")


def test_every_attempt_carries_a_reason_and_the_whole_chat(tmp_path):
    path = items_file(tmp_path)
    truth = {r["id"]: float(r["score"]) for r in csv.DictReader(open(path, newline=""))}
    probe = FsbJudgeProbe(items_file=path, reasons=True)
    model = CachedModel(ScriptedBackend(messy_judge), ResponseCache(tmp_path / "c.sqlite"))
    try:
        results, attempts = run_probe(probe, model, RunConfig(repetitions=2, seed=3))
        results = results.to_json()
    finally:
        model.close()
    assert results["parameters"]["reasons"] is True and results["details"]["n_with_reason"] == len(attempts) > 0
    for a in attempts:
        row = a.to_json()
        word = row["rated_text"].split()[3]
        assert row["reason"] == f"because of the word {word!r}"
        assert row["judge_score"] is not None and 0 <= row["judge_score"] <= 1
        chat = row["prompt"]
        assert len(chat) == 1 + 2 * 8 + 1
        assert chat[0] == {"role": "system", "content": REASONS_SYSTEM_PROMPT}
        assert chat[-1] == {"role": "user", "content": f"{row['rated_text']}\n\n{REASONS_TURN}"}
        for ex_id, (user, assistant) in zip(row["example_ids"], zip(chat[1:-1:2], chat[2:-1:2])):
            assert user["role"] == "user" and assistant["role"] == "assistant"
            assert assistant["content"] == f"Score: {format_score(truth[ex_id])}"
            assert user["content"] == next(i.prompts[0].text for i in probe.load_items() if i.id == ex_id)
    html = render_report(validate_results(json.loads(json.dumps(results))), [a.to_json() for a in attempts], probe)
    assert "Largest disagreements with the humans" in html and "judge's reason" in html
    worst = max(attempts, key=lambda a: abs(a.extra["judge_score"] - a.metadata["human_score"]))
    assert html_escape(worst.extra["reason"]) in html


def test_the_reasons_prompt_has_its_own_cache_keys_and_the_plain_prompt_is_unchanged(tmp_path):
    path = items_file(tmp_path)
    plain, reasons = FsbJudgeProbe(items_file=path), FsbJudgeProbe(items_file=path, reasons=True)
    cfg = RunConfig(repetitions=1, seed=0)
    a, b = plain.plan(plain.load_items(), cfg), reasons.plan(reasons.load_items(), cfg)
    assert [p.item.id for p in a] == [p.item.id for p in b]
    for x, y in zip(a, b):
        assert x.request.messages[0] == ("system", SYSTEM_PROMPT)
        assert y.request.messages[1:-1] == tuple(
            (role, text if role == "user" else f"Score: {text}") for role, text in x.request.messages[1:-1]
        )
        assert y.request.messages[-1] == ("user", f"{x.request.messages[-1][1]}\n\n{REASONS_TURN}")
        assert json.dumps(x.request.as_key(), sort_keys=True) != json.dumps(y.request.as_key(), sort_keys=True)
    assert plain.params(None).max_tokens == 20 and reasons.params(None).max_tokens > 20


@requires_data
def test_cli_flag_and_probe_option_agree(tmp_path):
    path = items_file(tmp_path)
    probe = FsbJudgeProbe(items_file=path, reasons=True)
    canned = {
        p.request.display(): messy_judge(p.request)
        for p in probe.plan(probe.load_items(), RunConfig(repetitions=1, seed=0))
    }
    (tmp_path / "answers.json").write_text(json.dumps(canned))
    model = f"scripted/canned:file={tmp_path / 'answers.json'}"
    biaslab(
        "run",
        "fsb-judge",
        "--model",
        model,
        "--items",
        path,
        "--reasons",
        "--out",
        tmp_path / "a",
        cache=tmp_path / "c",
    )
    biaslab(
        "run",
        "fsb-judge",
        "--model",
        model,
        "--items",
        path,
        "-P",
        "reasons=true",
        "--out",
        tmp_path / "b",
        cache=tmp_path / "c",
    )
    rows_a, rows_b = read_attempts(tmp_path / "a"), read_attempts(tmp_path / "b")
    assert rows_a == rows_b and all(r["reason"] for r in rows_a) and len(rows_a) == 30 - 8
    assert "Largest disagreements" in (tmp_path / "a" / "report.html").read_text()
    proc = biaslab(
        "run",
        "jobs-lum",
        "--model",
        "scripted/he",
        "--reasons",
        "--out",
        tmp_path / "j",
        cache=tmp_path / "c",
        check=False,
    )
    assert proc.returncode != 0 and "--reasons does not apply to the jobs-lum probe" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_without_reasons_attempts_still_record_the_whole_chat(tmp_path):
    path = items_file(tmp_path)
    probe = FsbJudgeProbe(items_file=path)
    model = CachedModel(
        ScriptedBackend(lambda r: f"{len(r.messages[-1][1]) % 10 / 10}"), ResponseCache(tmp_path / "c.sqlite")
    )
    try:
        results, attempts = run_probe(probe, model, RunConfig(repetitions=1, seed=0))
        results = results.to_json()
    finally:
        model.close()
    for a in attempts:
        row = a.to_json()
        assert "reason" not in row and row["prompt"][0] == {"role": "system", "content": SYSTEM_PROMPT}
        assert [m["role"] for m in row["prompt"]] == ["system"] + ["user", "assistant"] * 8 + ["user"]
        assert row["prompt"][-1]["content"] == row["rated_text"] != row["text"]
        assert json.loads(json.dumps(row)) == row  # JSON-safe
    html = render_report(validate_results(json.loads(json.dumps(results))), [a.to_json() for a in attempts], probe)
    assert "Largest disagreements with the humans" in html and "Run with <code>--reasons</code>" in html
