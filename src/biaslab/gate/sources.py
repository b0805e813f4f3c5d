"""The two sides of a gate: two runs of one probe, or two suites (``biaslab suite`` output folders) matched
probe by probe, one model of each."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biaslab.compare.paired import label_runs
from biaslab.compare.run import Run, load_run
from biaslab.errors import ConfigError, DataError
from biaslab.probing.schema import read_run_file


@dataclass
class Side:
    path: Path
    kind: str  # "run" or "suite"
    runs: dict[str, Run]  # probe -> its run
    model: str = ""
    label: str = ""
    probes: list[str] = field(default_factory=list)  # in the suite's order


def _read_json(path: Path) -> tuple[Path, dict[str, Any]]:
    file = path / "results.json" if path.is_dir() else path
    text = read_run_file(
        file, "results.json", "give a run folder (`biaslab run --out`) or a suite folder (`biaslab suite --out`)"
    )
    try:
        raw = json.loads(text)
    except ValueError as exc:
        raise DataError(f"{file} cannot be read as JSON ({exc}); give a run or suite folder") from None
    if not isinstance(raw, dict):
        raise DataError(f"{file} is not a run's or a suite's results; give a run or suite folder")
    return file, raw


def load_side(path: Path, model: str | None = None, *, role: str) -> Side:
    """A run folder or a suite folder (``model``: which of a suite's models; default its only one)."""
    path = Path(path)
    file, raw = _read_json(path)
    if "probe" in raw:
        if model is not None:
            raise ConfigError(f"--{role}-model is for suites; {path} is a run")
        run = load_run(path)
        return Side(path, "run", {run.probe: run}, run.model, probes=[run.probe])
    if not isinstance(raw.get("runs"), list) or not isinstance(raw.get("models"), list):
        raise DataError(f"{file} is neither a run's results (no 'probe') nor a suite's (no 'runs' and 'models')")
    models = [str(m) for m in raw["models"]]
    if model is None:
        if len(models) != 1:
            raise ConfigError(
                f"the suite {path} has {len(models)} models ({', '.join(models)}); pick one with --{role}-model"
            )
        model = models[0]
    elif model not in models:
        raise ConfigError(f"--{role}-model {model} is not a model of the suite {path} ({', '.join(models)})")
    runs: dict[str, Run] = {}
    for r in raw["runs"]:
        if isinstance(r, dict) and r.get("model") == model and r.get("dir"):
            runs[str(r["probe"])] = load_run(file.parent / str(r["dir"]))
    order = [str(p) for p in raw.get("probes") or runs]
    return Side(path, "suite", runs, model, probes=[p for p in order if p in runs])


def match(base: Side, cand: Side) -> tuple[list[tuple[str, Run, Run | None]], list[str]]:
    """The probes gated, each with the baseline's run and the candidate's (None: the candidate has none), and
    notes; runs of different probes, or a run against a suite: a one-line :class:`ConfigError`."""
    if base.kind != cand.kind:
        raise ConfigError(
            f"the baseline is a {base.kind} and the candidate a {cand.kind}; gate a run against a run "
            "or a suite against a suite"
        )
    if base.kind == "run":
        (pa, ra), (pb, rb) = next(iter(base.runs.items())), next(iter(cand.runs.items()))
        if pa != pb:
            raise ConfigError(
                f"the runs are of different probes ({pa}, {pb}); the gate compares two runs of one "
                "probe (the same benchmark on two models or settings)"
            )
        label_runs([ra, rb])
        base.label, cand.label = ra.label, rb.label
        return [(pa, ra, rb)], []
    base.label, cand.label = f"{base.model} ({base.path.name})", f"{cand.model} ({cand.path.name})"
    pairs: list[tuple[str, Run, Run | None]] = [(p, base.runs[p], cand.runs.get(p)) for p in base.probes]
    for _, run_a, run_b in pairs:
        if run_b is not None:
            label_runs([run_a, run_b])
    extra = [p for p in cand.probes if p not in base.runs]
    notes = [f"{p} not gated: the baseline suite has no run of it" for p in extra]
    if not pairs:
        raise ConfigError(f"the baseline suite {base.path} has no runs of model {base.model}")
    return pairs, notes
