"""Probe registry. Each probe lives in its own folder with its card (README.md) and is named
here once: name -> its class as ``"module:Class"`` (imported lazily) and, for a probe with
commands of its own, the Typer app mounted as ``biaslab <name> ...``."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from biaslab.errors import ConfigError


@dataclass(frozen=True)
class ProbeEntry:
    target: str  # "module:Class"
    commands: str | None = None  # "module:app": a Typer app mounted as `biaslab <name> ...`


PROBES: dict[str, ProbeEntry] = {
    "jobs-lum": ProbeEntry("biaslab.probes.jobs_lum.probe:JobsLumProbe"),
    "olympics": ProbeEntry("biaslab.probes.olympics.probe:OlympicsProbe", "biaslab.cli.olympics:app"),
    "fsb-judge": ProbeEntry("biaslab.probes.fsb_judge.probe:FsbJudgeProbe"),
    "winosemitism": ProbeEntry("biaslab.probes.winosemitism.probe:WinoSemitismProbe"),
    "gpt-winosemitism": ProbeEntry("biaslab.probes.gpt_winosemitism.probe:GptWinoSemitismProbe"),
    "gpt-winoqueer": ProbeEntry("biaslab.probes.gpt_winoqueer.probe:GptWinoQueerProbe"),
    "winoqueer-human": ProbeEntry("biaslab.probes.winoqueer_human.probe:WinoQueerHumanProbe"),
    "pairs": ProbeEntry("biaslab.probes.pairs.probe:PairsProbe"),
    "bold": ProbeEntry("biaslab.probes.bold.probe:BoldProbe"),
    "holistic-bias": ProbeEntry("biaslab.probes.holistic_bias.probe:HolisticBiasProbe"),
    "crows-pairs": ProbeEntry("biaslab.probes.crows_pairs.probe:CrowsPairsProbe"),
    "bbq": ProbeEntry("biaslab.probes.bbq.probe:BbqProbe"),
    "winogender": ProbeEntry("biaslab.probes.winogender.probe:WinogenderProbe"),
}


def load_target(target: str) -> Any:
    """The object named by ``"module:attribute"``."""
    module_name, _, attr = target.partition(":")
    return getattr(importlib.import_module(module_name), attr)


def get_probe_class(name: str):
    if name not in PROBES:
        raise ConfigError(f"unknown probe {name!r}; available: {', '.join(sorted(PROBES))}")
    return load_target(PROBES[name].target)


def create_probe(name: str, **kwargs):
    return get_probe_class(name)(**kwargs)
