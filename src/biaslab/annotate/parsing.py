"""Checking what a request sends: tuple ids, submissions. Anything out of range or of the wrong
type is a :class:`Refused` (a 4xx), never an error deeper down."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MAX_FEEDBACK = 2000
MAX_SUBMISSION_ID = 128
MAX_TUPLE_ID = 2**62  # SQLite integers are 64-bit; larger ids cannot exist


class Refused(Exception):
    """A request the rules refuse: ``status`` is the HTTP status, ``detail`` says why."""

    def __init__(self, status: int, detail: str):
        super().__init__(detail)
        self.status, self.detail = status, detail


@dataclass(frozen=True)
class Submission:
    tuple_id: int
    best: str
    worst: str
    feedback: str
    submission_id: str


def _id(value: Any, field: str) -> str:
    if (
        isinstance(value, bool)
        or not isinstance(value, (str, int))
        or (isinstance(value, int) and not -(2**63) <= value < 2**63)
    ):
        raise Refused(422, f"{field} must be an item id (a string)")
    text = str(value).strip()
    if len(text) > 200:
        raise Refused(422, f"{field} is not an item id (too long)")
    return text


def parse_tuple_id(value: Any) -> int:
    """A tuple id: an integer in 1..2^62 (as a JSON number or a string of digits)."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise Refused(422, "tuple_id must be an integer")
    if isinstance(value, str):
        text = value.strip()
        if not (text.isascii() and text.isdigit()) or len(text) > 19:
            raise Refused(422, "tuple_id must be a positive integer of at most 19 digits")
        value = int(text)
    if not 1 <= value <= MAX_TUPLE_ID:
        raise Refused(422, f"tuple_id must be between 1 and {MAX_TUPLE_ID}")
    return value


def parse_submission(body: Any) -> Submission:
    """Validate a JSON body ``{"tuple_id", "best", "worst", "feedback", "submission_id"}``.

    Any other field (an ``annotator``, say) is ignored: identity comes from the session only."""
    if not isinstance(body, dict):
        raise Refused(422, "the body must be a JSON object with tuple_id, best, worst, feedback, submission_id")
    for field in ("tuple_id", "best", "worst", "submission_id"):
        if body.get(field) is None:
            raise Refused(422, f"missing field {field!r}")
    feedback = body.get("feedback")
    feedback = "" if feedback is None else feedback
    if not isinstance(feedback, str):
        raise Refused(422, "feedback must be a string")
    if len(feedback) > MAX_FEEDBACK:
        raise Refused(422, f"feedback is limited to {MAX_FEEDBACK} characters")
    submission_id = body["submission_id"]
    if (
        not isinstance(submission_id, str)
        or not 1 <= len(submission_id) <= MAX_SUBMISSION_ID
        or not submission_id.isprintable()
    ):
        raise Refused(422, f"submission_id must be a string of 1 to {MAX_SUBMISSION_ID} printable characters")
    sub = Submission(
        parse_tuple_id(body["tuple_id"]),
        _id(body["best"], "best"),
        _id(body["worst"], "worst"),
        feedback,
        submission_id,
    )  # feedback verbatim (escaped on export, not trimmed)
    if sub.best == sub.worst:
        raise Refused(422, "best and worst must be different texts")
    return sub
