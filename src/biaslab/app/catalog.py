"""What every probe declares, as data: ``biaslab probes --json`` (and the listings it prints without --json)."""

from __future__ import annotations

from typing import Any

_TYPE_NAMES = {str: "text", int: "whole number", float: "number"}


def option_type(fn: Any) -> str:
    """A probe option's value type in words (``parse_bool`` -> "true/false", ``Path`` -> "file")."""
    from pathlib import Path

    from biaslab.probing.options import parse_bool

    if fn is parse_bool:
        return "true/false"
    if fn is Path:
        return "file"
    return _TYPE_NAMES.get(fn, "text")


def describe_probe(name: str) -> dict[str, Any]:
    """One probe's declarations: title, kind, headline metric(s) with unit, unbiased value and direction,
    the other metrics it reports, its options, how its runs pair up and where it comes from."""
    from biaslab.probes import PROBES, get_probe_class
    from biaslab.probing.likelihood import LikelihoodProbe

    cls = get_probe_class(name)
    pairing = cls.pairing
    return {
        "name": name,
        "title": cls.title,
        "summary": cls.summary,
        "version": cls.version,
        "kind": "likelihood" if issubclass(cls, LikelihoodProbe) else "generation",
        "source": PROBES[name].source,
        "headlines": [h.describe() for h in cls.headlines],
        "metrics": {
            k: {"description": d.description, "unbiased": d.unbiased, "extremes": d.extremes}
            for k, d in cls.metric_docs.items()
        },
        "options": {
            k: {
                "help": o.help,
                "type": option_type(o.type),
                **({"flag": o.alias} if o.alias else {}),
                **({"range": o.bounds()} if o.bounds() else {}),
            }
            for k, o in cls.options.items()
        },
        "pairing": None
        if pairing is None
        else {"family": pairing.family, "unit": pairing.unit, "clusters": pairing.cluster_unit},
        "suite_size": cls.suite_size,
        "needs_option": cls.input_option,
        "data_files": list(cls.data_files),
        "requires": dict(cls.requires),
        "card": str(cls.card_path()),
    }


def catalog() -> list[dict[str, Any]]:
    from biaslab.probes import PROBES

    return [describe_probe(name) for name in PROBES]
