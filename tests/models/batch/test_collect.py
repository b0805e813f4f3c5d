"""What an ended batch's lines say about each request (:func:`biaslab.models.batch.collect.read_output`)."""

from __future__ import annotations

from biaslab.models.base import GenerateResult
from biaslab.models.batch.collect import read_output
from biaslab.models.batch.journal import BatchRecord
from biaslab.models.batch.provider import BatchOutput, BatchState, LineOutcome


def record(ids: list[str]) -> BatchRecord:
    rec = BatchRecord.new(
        provider="openai", base_url="http://x/v1", model="m", endpoint="/v1/chat/completions", ids=ids
    )
    rec.batch_id = "batch_1"
    return rec


def test_identical_repeats_count_once_disagreeing_lines_keep_nothing_and_missing_lines_are_unanswered():
    a, b = GenerateResult(text="yes"), GenerateResult(text="no")
    output = BatchOutput(
        lines=[
            LineOutcome("r1", result=a),
            LineOutcome("r1", result=GenerateResult(text="yes")),  # the same answer twice: kept
            LineOutcome("r2", result=a),
            LineOutcome("r2", result=b),  # two answers: neither
            LineOutcome("r3", error="HTTP 500: boom", retry=True),
        ],
        unreadable=["file f line 6: not JSON (Expecting value)"],
    )
    reading = read_output(record(["r1", "r2", "r3", "r4"]), BatchState("completed", True), output)
    assert reading.answers == {"r1": a} and list(reading.failures) == ["r3"]
    assert reading.unanswered == {
        "r2": "2 different lines for it in the results of batch batch_1",
        "r4": "no readable result in the completed batch",
    }
    assert reading.notes == [
        "batch batch_1: 1 line of its results could not be read (file f line 6: not JSON (Expecting value)); "
        "the other lines are kept",
        "batch batch_1: 1 request has different answers on several lines of its results (custom_id r2); "
        "none of them is kept",
    ]


def test_a_cancelled_batch_says_why_its_lines_are_missing():
    state = BatchState("cancelled", True, problem="the batch was cancelled", usable=False)
    reading = read_output(record(["r1"]), state, BatchOutput())
    assert reading.unanswered == {"r1": "the batch was cancelled"} and reading.notes == []
