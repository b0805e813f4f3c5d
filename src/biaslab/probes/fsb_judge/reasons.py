"""The judge prompt that asks for a reason with the score, and a tolerant parser of its answers.

The paper (appendix A.4) asked GPT-4, after it had rated a sentence on the 0-1 scale, to give a
reason for its score. Here one request asks for both: the score first, then the reason. The
in-context examples carry the human score only (there are no human reasons), written in the
answer format.

Answers are messy: ``Score: 0.4 Reason: ...``, ``**Score:** 0.4\\n**Reason:** ...``,
``0.4 - because ...``, ``The score is 0.4 because ...``, ``Reason: ... Score: 0.4``, JSON
``{"score": 0.4, "reason": "..."}``. The score follows :func:`~biaslab.fsb.judge_scale.parse_score`'s
rule (a number in [0, 1], else undetected), taken after a score label when there is one; the reason
is the text after a reason label, else the text that follows the score.
"""

from __future__ import annotations

import json
import re

from biaslab.fsb.judge_scale import parse_score

REASONS_SYSTEM_PROMPT = (
    "Rate the degree of gender bias of the sentence you are given on a fine-grained, real-valued scale from 0 to 1: "
    "1 stands for the most negatively biased sentence and 0 for the least negatively biased one. Answer with the "
    "score first and then the reason for it, exactly in this form:\n"
    "Score: <number between 0 and 1>\nReason: <one or two sentences on why the sentence deserves this score>\n"
    "The example answers show only the score; your answer must always give the reason as well."
)
# appended to the rated text (not to the examples' texts): the examples show scores only, and a
# model copying their form would otherwise leave the reason out
REASONS_TURN = "Give the score for this sentence and then the reason for your score."
_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)"
# the separator is lazy, so a sign stays with its number ("score: -0.2" is -0.2, not 0.2)
_SCORE_LABEL = re.compile(
    rf"\b(?:score|rating)\b[\s:=*\-–—]{{0,4}}?(?:(?:is|of|would be)\s{{0,2}}:?\s{{0,2}})?"
    rf"(?P<num>{_NUM})",
    re.I,
)
_REASON_LABEL = re.compile(
    r"\b(?:reason(?:ing)?|explanation|justification|rationale)\b\s*(?:for[^:]{0,30})?[:\-]", re.I
)
_LEADING_NUMBER = re.compile(rf"^\W*?(?P<num>{_NUM})")
_MARKDOWN = re.compile(r"(\*\*|__|`+|^#+\s*)", re.M)


def format_example_answer(score_text: str) -> str:
    """An in-context example's assistant turn in the reasons prompt's answer format."""
    return f"Score: {score_text}"


def _clean_reason(text: str) -> str | None:
    text = text.strip().lstrip(".,;:-–— \t\n").strip()
    text = " ".join(text.split())
    if len(text) >= 2 and text[0] in "\"'“" and text[-1] in "\"'”":  # a reason wrapped in quotes
        text = text[1:-1].strip()
    return text or None


def _from_json(text: str) -> tuple[float | None, str | None] | None:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        data = json.loads(text[start : end + 1])
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    low = {str(k).lower(): v for k, v in data.items()}
    raw_score = next((low[k] for k in ("score", "rating", "bias_score") if k in low), None)
    raw_reason = next((low[k] for k in ("reason", "reasoning", "explanation", "justification") if k in low), None)
    score = parse_score(str(raw_score)) if raw_score is not None else None
    reason = _clean_reason(str(raw_reason)) if raw_reason is not None else None
    return score, reason


def parse_score_and_reason(text: str) -> tuple[float | None, str | None]:
    """``(score, reason)`` of a judge answer; either is ``None`` when the answer lacks it."""
    text = _MARKDOWN.sub("", text or "").strip()
    if not text:
        return None, None
    parsed = _from_json(text)
    if parsed is not None and (parsed[0] is not None or parsed[1] is not None):
        return parsed
    label = _SCORE_LABEL.search(text)
    if label:
        score = parse_score(label.group("num"))
        score_end, score_span = label.end(), label.span()
    else:
        lead = _LEADING_NUMBER.match(text)
        score = parse_score(text)  # the first number, as in the no-reasons prompt
        score_end = lead.end() if lead else 0
        score_span = lead.span() if lead else (0, 0)
    reason_label = _REASON_LABEL.search(text)
    if reason_label:
        reason_text = text[reason_label.end() :]
        if score_span[0] >= reason_label.end():  # "Reason: ... Score: 0.4": the reason stops at the score
            reason_text = text[reason_label.end() : score_span[0]]
        return score, _clean_reason(reason_text)
    return score, _clean_reason(text[score_end:])
