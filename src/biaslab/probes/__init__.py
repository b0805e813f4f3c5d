"""Probe registry. Each probe lives in its own folder with its card (README.md) and
registers itself here once, by name -> "module:class" (imported lazily)."""

from __future__ import annotations

import importlib

from biaslab.errors import ConfigError

PROBES: dict[str, str] = {
    "jobs-lum": "biaslab.probes.jobs_lum.probe:JobsLumProbe",
    "olympics": "biaslab.probes.olympics.probe:OlympicsProbe",
    "fsb-judge": "biaslab.probes.fsb_judge.probe:FsbJudgeProbe",
    "winosemitism": "biaslab.probes.winosemitism.probe:WinoSemitismProbe",
    "gpt-winosemitism": "biaslab.probes.gpt_winosemitism.probe:GptWinoSemitismProbe",
    "gpt-winoqueer": "biaslab.probes.gpt_winoqueer.probe:GptWinoQueerProbe",
    "winoqueer-human": "biaslab.probes.winoqueer_human.probe:WinoQueerHumanProbe",
    "pairs": "biaslab.probes.pairs.probe:PairsProbe",
}


def get_probe_class(name: str):
    if name not in PROBES:
        raise ConfigError(f"unknown probe {name!r}; available: {', '.join(sorted(PROBES))}")
    module_name, _, cls_name = PROBES[name].partition(":")
    return getattr(importlib.import_module(module_name), cls_name)


def create_probe(name: str, **kwargs):
    return get_probe_class(name)(**kwargs)
