"""File probes by name: ``file:PATH`` (the YAML file) and ``file:<name>@<hash>`` (the name its runs record).

``file:PATH`` reads the file every time it is named, so an edited file is read afresh; its class is kept under its
recorded name, which carries the file's hash. A command that reads a run (``compare``, ``gate``, ``report``, a
suite) registers the probe from the file's text the run keeps (:func:`register_results`), so the recorded name is
known wherever the file has gone. The probe registry (:mod:`biaslab.probes`) sends every ``file:`` name here.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from biaslab.errors import BiaslabError, ConfigError
from biaslab.probing.file_probe import PREFIX

if TYPE_CHECKING:
    from biaslab.probing.file_probe.probe import FileProbe
    from biaslab.probing.file_probe.schema import FileSpec
    from biaslab.probing.schema import RunResults

RECORDED = re.compile(r"file:[A-Za-z0-9][A-Za-z0-9._-]*@[0-9a-f]{8}")
_CLASSES: dict[str, type[FileProbe]] = {}  # recorded name -> class


def is_file_probe(name: str) -> bool:
    return name.startswith(PREFIX)


def _register(spec: FileSpec) -> type[FileProbe]:
    from biaslab.probing.file_probe.probe import probe_class

    cls = _CLASSES.get(spec.probe_name)
    if cls is None:
        cls = _CLASSES[spec.probe_name] = probe_class(spec)
    return cls


def lookup(name: str) -> type[FileProbe] | None:
    """:func:`file_probe_class`, but None for a recorded name this process does not know (no run of it read here)."""
    if name not in _CLASSES and RECORDED.fullmatch(name):
        return None
    return file_probe_class(name)


def file_probe_class(name: str) -> type[FileProbe]:
    """The class of ``file:PATH`` (the file read now) or of a recorded ``file:<name>@<hash>``."""
    if name in _CLASSES:
        return _CLASSES[name]
    if RECORDED.fullmatch(name):
        raise ConfigError(
            f"the file probe {name} is not known here: name its YAML file as file:PATH (its runs keep the file's "
            "text, so compare, gate and report read it from them)"
        )
    path = name[len(PREFIX) :]
    if not path:
        raise ConfigError("file: names no file; give the probe's YAML file as file:PATH, e.g. file:my_probe.yaml")
    from biaslab.probing.file_probe.schema import load_spec

    return _register(load_spec(path))


def recorded_name(name: str) -> str:
    """The name a run of ``name`` records: ``file:PATH`` becomes ``file:<name>@<hash>``; other names stay."""
    return file_probe_class(name).name if is_file_probe(name) else name


def register_results(results: RunResults) -> None:
    """Make the probe of a run of a file probe known by its recorded name, from the file's text the run keeps
    (nothing when it is known already, or when the run keeps no readable record: lookups then say so)."""
    if not is_file_probe(results.probe) or results.probe in _CLASSES:
        return
    record: Any = results.details.get("file_probe")
    if not isinstance(record, dict):
        return
    from biaslab.probing.file_probe.schema import spec_from_record

    try:
        spec = spec_from_record(record)
    except BiaslabError:
        return
    if spec.probe_name == results.probe:
        _register(spec)
