"""Runs and suites written the way `biaslab run` and `biaslab suite` write them, from chosen per-pair decisions
(the ``pairs`` probe: results.json computed by the probe's own metrics, attempts.jsonl one row per pair)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from biaslab.probes.paired_sentences.metrics import paired_sentence_metrics


def pairs_run(
    d: Path,
    decisions: list[str],
    groups: list[str] | None = None,
    *,
    offset: int = 0,
    probe: str = "pairs",
    model: str = "m",
) -> Path:
    """A run of ``probe`` over pairs ``offset .. offset + len(decisions) - 1``, each decided as given
    ("stereotype", "counter" or "tie"); pairs of one predicate (7 per group) cluster."""
    groups = groups or ["Jewish" if i % 3 else "Women" for i in range(len(decisions))]
    rows = []
    for k, (ev, g) in enumerate(zip(decisions, groups, strict=True)):
        i = k + offset
        more = {"stereotype": -1.0, "counter": -3.0, "tie": -2.0}[ev]
        rows.append(
            {
                "item_id": f"row{i + 2}",
                "prompt_index": 0,
                "repetition": 0,
                "seed": None,
                "prompt": f"{g} person {i} is x.",
                "text": f"other person {i} is x.",
                "evaluation": ev,
                "sent_more": f"{g} person {i} is x.",
                "sent_less": f"other person {i} is x.",
                "target_ID": g,
                "predicate_id": f"p{i % 11}",
                "score_more": more,
                "score_less": -2.0,
            }
        )
    metrics = paired_sentence_metrics(rows, n_resamples=200, n_permutations=200)[0]
    d.mkdir(parents=True)
    (d / "attempts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (d / "results.json").write_text(
        json.dumps(
            {
                "schema_version": 2,
                "probe": probe,
                "probe_version": "1",
                "model": {"model": model},
                "parameters": {},
                "metrics": metrics,
                "n_items": len(rows),
                "n_attempts": len(rows),
            }
        )
    )
    return d


def decisions(n: int, stereo: float, seed: int, base: list[str] | None = None, flip: float = 0.0) -> list[str]:
    """n decisions with about ``stereo`` of them "stereotype"; with ``base``, each of base's kept unless redrawn
    (probability ``flip``), so that two runs agree on most pairs like two settings of one model."""
    rng = np.random.default_rng(seed)
    draw = list(rng.choice(["stereotype", "counter"], p=[stereo, 1 - stereo], size=n))
    if base is None:
        return [str(x) for x in draw]
    return [str(d) if rng.random() < flip else b for b, d in zip(base, draw, strict=True)]


def suite_dir(d: Path, model: str, runs: dict[str, Path]) -> Path:
    """A suite folder holding the given runs (probe -> run folder, moved under runs/<model>/<probe>)."""
    entries = []
    for probe, run in runs.items():
        target = d / "runs" / model / probe
        target.parent.mkdir(parents=True, exist_ok=True)
        run.rename(target)
        entries.append({"model": model, "probe": probe, "dir": f"runs/{model}/{probe}"})
    (d / "results.json").write_text(
        json.dumps({"models": [model], "probes": list(runs), "limit": None, "runs": entries, "comparisons": []})
    )
    return d


def gate_cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, *args: object) -> tuple[int, str, str]:
    """``biaslab gate ARGS`` in this process: (exit code, stdout, stderr)."""
    from biaslab.cli import main

    monkeypatch.setattr(sys, "argv", ["biaslab", "gate", *map(str, args)])
    monkeypatch.setenv("COLUMNS", "100")
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err
