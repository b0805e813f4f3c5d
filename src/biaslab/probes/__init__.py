"""Probe registry. Each built-in probe lives in its own folder with its card (README.md) and is named here
once: name -> its class as ``"module:Class"`` (imported lazily) and, for a probe with commands of its own,
the Typer app mounted as ``biaslab <name> ...``.

A probe defined by a YAML file is named ``file:PATH`` (docs/file_probes.md); its runs record
``file:<name>@<hash>``. Both are found here (:mod:`biaslab.probing.file_probe.registry`) but never listed.

Other packages add probes through the entry-point group ``biaslab.probes`` (``name = "module:Class"`` in
their pyproject's ``[project.entry-points."biaslab.probes"]``): they appear in :data:`PROBES` beside the
built-in ones and run, plan, compare and join the suite like them (docs/ADDING_A_PROBE.md). A plugin may not
replace a built-in probe's name.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from biaslab.errors import ConfigError

ENTRY_POINT_GROUP = "biaslab.probes"
FILE_PREFIX = "file:"  # ``file:PATH``: a probe defined by a YAML file (biaslab.probing.file_probe)


@dataclass(frozen=True)
class ProbeEntry:
    target: str  # "module:Class"
    commands: str | None = None  # "module:app": a Typer app mounted as `biaslab <name> ...`
    source: str = "built-in"  # or the distribution that declares it


BUILTIN: dict[str, ProbeEntry] = {
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
    "mbbq": ProbeEntry("biaslab.probes.mbbq.probe:MbbqProbe"),
    "kobbq": ProbeEntry("biaslab.probes.kobbq.probe:KobbqProbe"),
    "winogender": ProbeEntry("biaslab.probes.winogender.probe:WinogenderProbe"),
    "direct": ProbeEntry("biaslab.probes.direct.probe:DirectProbe"),
    "gest": ProbeEntry("biaslab.probes.gest.probe:GestProbe"),
    "dreaddit": ProbeEntry("biaslab.probes.dreaddit.probe:DreadditProbe"),
    "relationship-levy": ProbeEntry("biaslab.probes.relationship_levy.probe:RelationshipLevyProbe"),
    "discrimination-tamkin": ProbeEntry("biaslab.probes.discrimination_tamkin.probe:DiscriminationTamkinProbe"),
    "hiring-an": ProbeEntry("biaslab.probes.hiring_an.probe:HiringAnProbe"),
    "hiring-bloomberg": ProbeEntry("biaslab.probes.hiring_bloomberg.probe:HiringBloombergProbe"),
    "diversity-med-qa": ProbeEntry("biaslab.probes.diversity_med_qa.probe:DiversityMedQaProbe"),
    "gest-creative": ProbeEntry("biaslab.probes.gest_creative.probe:GestCreativeProbe"),
    "inventories": ProbeEntry("biaslab.probes.inventories.probe:InventoriesProbe"),
    "business-vocabulary": ProbeEntry("biaslab.probes.business_vocabulary.probe:BusinessVocabularyProbe"),
    "isear": ProbeEntry("biaslab.probes.isear.probe:IsearProbe"),
}


def plugin_entries() -> dict[str, ProbeEntry]:
    """The probes other installed packages declare (entry-point group ``biaslab.probes``), read from their
    metadata (nothing is imported)."""
    from importlib.metadata import entry_points

    out: dict[str, ProbeEntry] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in BUILTIN or ep.name in out:
            continue  # a built-in name is never replaced; the first declaration of a name wins
        dist = getattr(ep, "dist", None)
        source = f"{dist.name} {dist.version}" if dist is not None else "plugin"
        out[ep.name] = ProbeEntry(ep.value, source=source)
    return out


class _Registry(Mapping[str, ProbeEntry]):
    """Built-in probes, then the installed plugins' (looked up once, when first needed)."""

    def __init__(self) -> None:
        self._all: dict[str, ProbeEntry] | None = None

    def _entries(self) -> dict[str, ProbeEntry]:
        if self._all is None:
            self._all = {**BUILTIN, **plugin_entries()}
        return self._all

    def refresh(self) -> None:
        """Look the installed plugins up again (after installing one in this process)."""
        self._all = None

    def __getitem__(self, name: str) -> ProbeEntry:
        if name.startswith(FILE_PREFIX):  # a probe from a YAML file: never listed, found by its name
            from biaslab.probing.file_probe.registry import lookup

            cls = lookup(name)
            if cls is None:  # a recorded name no run read here made known
                raise KeyError(name)
            return ProbeEntry(f"{cls.__module__}:{cls.__name__}", source=f"file {cls.spec.path}")
        return self._entries()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries())

    def __len__(self) -> int:
        return len(self._entries())


PROBES = _Registry()


def load_target(target: str) -> Any:
    """The object named by ``"module:attribute"``."""
    module_name, _, attr = target.partition(":")
    return getattr(importlib.import_module(module_name), attr)


def get_probe_class(name: str) -> Any:
    if name.startswith(FILE_PREFIX):
        from biaslab.probing.file_probe.registry import file_probe_class

        return file_probe_class(name)
    if name not in PROBES:
        from difflib import get_close_matches

        close = get_close_matches(name, list(PROBES), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise ConfigError(f"unknown probe {name!r}{hint}; available: {', '.join(sorted(PROBES))}")
    entry = PROBES[name]
    try:
        cls = load_target(entry.target)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"the {name} probe ({entry.source}) cannot be loaded from {entry.target}: {exc}") from None
    from biaslab.probing.core import Probe

    if not (isinstance(cls, type) and issubclass(cls, Probe)):
        raise ConfigError(f"the {name} probe ({entry.source}) names {entry.target}, which is not a biaslab Probe class")
    if getattr(cls, "name", None) != name:
        raise ConfigError(
            f"the {name} probe ({entry.source}): its class {entry.target} has name "
            f"{getattr(cls, 'name', None)!r}; the entry point and the class must use the same name"
        )
    return cls


def create_probe(name: str, **kwargs: Any) -> Any:
    return get_probe_class(name)(**kwargs)
