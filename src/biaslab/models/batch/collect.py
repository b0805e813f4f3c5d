"""What an ended batch's results say about each request of it: :func:`read_output`.

The rules, whichever provider:

* a line that answers its request gives the answer; a line that reports a failure gives the failure
  (retried or not, as the provider judged it);
* a line that cannot be read (not UTF-8, not JSON, not shaped as a result) is named in a note; the
  other lines are kept;
* a request with more than one line (the same ``custom_id`` twice) whose lines disagree keeps none
  of them: the note names it and it counts as unanswered (identical repeats count once);
* a request the batch held but no usable line answers (absent from the results, its line unreadable,
  or its lines disagreeing) is *unanswered*; what happens to it (asked again once, or the run ends
  with an error for a cancelled batch) is the runner's choice.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from biaslab.models.base import GenerateResult
from biaslab.models.batch.journal import BatchRecord
from biaslab.models.batch.provider import BatchOutput, BatchState, LineOutcome

SHOWN = 3  # unreadable lines or request ids named in a note


@dataclass
class Reading:
    answers: dict[str, GenerateResult] = field(default_factory=dict)
    failures: dict[str, LineOutcome] = field(default_factory=dict)  # the line reports a failure
    unanswered: dict[str, str] = field(default_factory=dict)  # custom_id -> why no usable line answers it
    notes: list[str] = field(default_factory=list)  # one line each, for the user


def _same(a: LineOutcome, b: LineOutcome) -> bool:
    ja = a.result.to_json() if a.result is not None else None
    jb = b.result.to_json() if b.result is not None else None
    return ja == jb and a.error == b.error


def _some(items: list[str]) -> str:
    more = len(items) - SHOWN
    return "; ".join(items[:SHOWN]) + (f"; and {more} more" if more > 0 else "")


def read_output(record: BatchRecord, state: BatchState, output: BatchOutput) -> Reading:
    """The answers, failures and unanswered requests of ``record``'s ended batch (every request it holds)."""
    reading = Reading()
    lines: dict[str, list[LineOutcome]] = {}
    for line in output.lines:
        lines.setdefault(line.custom_id, []).append(line)
    conflicting = [cid for cid, group in lines.items() if any(not _same(group[0], o) for o in group[1:])]
    for cid, group in lines.items():
        if cid in conflicting:
            reading.unanswered[cid] = f"{len(group)} different lines for it in the results of batch {record.label}"
        elif group[0].result is not None:
            reading.answers[cid] = group[0].result
        else:
            reading.failures[cid] = group[0]
    why = state.problem or f"no result in the {state.status} batch"
    if output.unreadable:
        why = f"no readable result in the {state.status} batch"
    for cid in record.ids:
        if cid not in lines:
            reading.unanswered[cid] = why
    if output.unreadable:
        n = len(output.unreadable)
        reading.notes.append(
            f"batch {record.label}: {n} line{'s' if n != 1 else ''} of its results could not be read "
            f"({_some(output.unreadable)}); the other lines are kept"
        )
    if conflicting:
        n = len(conflicting)
        reading.notes.append(
            f"batch {record.label}: {n} request{'s have' if n != 1 else ' has'} different answers on several lines "
            f"of its results (custom_id {_some([c[:16] for c in conflicting])}); none of them is kept"
        )
    return reading
