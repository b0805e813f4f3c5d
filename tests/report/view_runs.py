"""Two small scripted runs for the tests of `biaslab view`, made in process by the real runner and written as run
folders: relationship-levy answered by ``levy_a`` (14 attempts) and jobs-lum by ``jobs_b`` (5 attempts). Each model
cycles through its answers in request order: picks, an answer no reader recognises, an empty one, one cut off at the
token limit, a long one, and hostile HTML that must show as text and run nothing."""

from __future__ import annotations

import itertools
from pathlib import Path

from biaslab.app.results import write_run
from biaslab.probes.jobs_lum.probe import JobsLumProbe
from biaslab.probes.relationship_levy.probe import RelationshipLevyProbe
from tests.probes.scripted_runs import run_rule

HOSTILE = "<script>window.__pwned = 1; alert(1)</script>"
CLOSER = '</textarea></script><img src=x onerror="window.__pwned = 2">'
LEVY_ANSWERS = [
    "(a)",
    "(b)",
    "I cannot tell who is right.",  # undetected: no answer recognised
    "",  # undetected: empty answer
    f"{HOSTILE} (a)",
    "Well " * 60,  # undetected: cut off at the 48-token limit
    f"{CLOSER} (b)",
]
JOBS_ANSWERS = [
    "He is kind.",
    "She is kind.",
    "A kind person.",
    f"{HOSTILE} She is careful. " + "She works hard. " * 60,
]


def cycling(name: str, answers: list[str]):
    turn = itertools.cycle(answers)

    def rule(request) -> str:
        return next(turn)

    rule.__name__ = name  # the scripted model's name
    return rule


def make_runs(root: Path) -> tuple[Path, Path]:
    """The two run folders (relationship-levy, jobs-lum) under ``root``."""
    folders = []
    for probe, model, limit in (
        (RelationshipLevyProbe(), cycling("levy_a", LEVY_ANSWERS), 7),
        (JobsLumProbe(), cycling("jobs_b", JOBS_ANSWERS), 5),
    ):
        results, attempts = run_rule(probe, model, root, limit=limit)
        write_run(root / probe.name, probe, results, attempts)
        folders.append(root / probe.name)
    return folders[0], folders[1]
