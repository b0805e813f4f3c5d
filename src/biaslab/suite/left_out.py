"""How to include a probe that a named set left out: the exact command, and where its file comes from.

A set member that needs a file of yours (its ``input_option``), or data that is not here, is left out of the
suite; the reason the terminal and the card give ends with what to do about it: ``biaslab run`` with the file
(``-P <input_option>=FILE``, or the option that stands in for a missing registered file), ``biaslab data
--fetch`` for a registered file biaslab downloads, or where to save a file it never downloads (its sha256 is
not pinned) -- then the same suite again includes it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any


def option_flags(options: Mapping[str, Any] | None) -> str:
    """``-P categories=Gender_identity`` (empty for no options)."""
    return " ".join(f"-P {k}={v}" for k, v in (options or {}).items())


def run_command(cls: Any, model_specs: list[str], limit: int | None, flags: str = "") -> str:
    """`biaslab run PROBE [flags] -m MODEL --limit N` at the size the suite would have run it (its --limit, else the
    probe's suite size, raised to its smallest balanced design); with several models, "for each model"."""
    size = max(limit if limit is not None else cls.suite_size, cls.min_limit)
    model = model_specs[0] if len(model_specs) == 1 else "MODEL"
    command = " ".join(p for p in ("biaslab run", cls.name, flags, f"-m {model} --limit {size}") if p)
    return f"`{command}`" + ("" if len(model_specs) == 1 else " for each model")


def card_of(cls: Any) -> str:
    """The probe's card, from the package folder on (``biaslab/probes/pairs/README.md``)."""
    parts = cls.card_path().parts
    if "biaslab" not in parts:
        return str(cls.card_path())
    start = len(parts) - 1 - parts[::-1].index("biaslab")
    return "/".join(parts[start:])


def needs_a_file(cls: Any, model_specs: list[str], limit: int | None) -> str:
    """The reason of a probe that every run must be given a file of yours (its ``input_option``)."""
    command = run_command(cls, model_specs, limit, f"-P {cls.input_option}=FILE")
    return f"it needs a file of yours: run it on its own with {command} (what FILE holds: its card, {card_of(cls)})"


def _saved_at(local: str) -> str:
    root = os.environ.get("BIASLAB_DATA_DIR")
    return f"{root.rstrip('/')}/{local}" if root else f"DIR/{local} with BIASLAB_DATA_DIR=DIR"


def data_missing(
    cls: Any, missing: list[str], model_specs: list[str], limit: int | None, options: Mapping[str, Any] | None
) -> str:
    """The reason of a probe whose data files ``missing`` are neither under BIASLAB_DATA_DIR nor in the download
    cache, and how to get them: names each file, says how it comes here, then the command that runs the probe."""
    from biaslab.data.availability import fetch_command, looked_in
    from biaslab.data.registry import FILES

    flags = option_flags(options)
    fetched = [f for f in missing if f not in FILES or FILES[f].sha256 is not None]
    yours = [f for f in missing if f in FILES and FILES[f].sha256 is None]
    named, args = _folded(fetched, list(FILES))
    head = (f"with the set's options ({flags}), " if flags else "") + "its data "
    head += f"({', '.join(named + yours)}) is not available offline ({looked_in()}): "
    steps = []
    if fetched:
        it = "it" if len(fetched) == 1 else "them"
        where = f"set BIASLAB_DATA_DIR to a folder that holds {it}"
        steps.append(f"run `{fetch_command(args)}` (sha256 checked) or {where}")
    steps += [f"save {FILES[f].url} as {_saved_at(f)} (biaslab does not download it)" for f in yours]
    text = head + "; ".join(steps) + "; then run the suite again, or " + run_command(cls, model_specs, limit, flags)
    stand_ins = [k for k, o in cls.options.items() if o.replaces in missing]
    for key in stand_ins:  # an option that takes a copy of yours instead of the registered file
        own = f"{flags} -P {key}=FILE".strip()
        text += f"; or with a copy you have: {run_command(cls, model_specs, limit, own)}"
    return text


def _folded(files: list[str], registered: list[str]) -> tuple[list[str], list[str]]:
    """``files`` for a message and for ``biaslab data --fetch``: a folder whose registered files are all among them
    and number more than 3 is named once ("all 48 files under benchmarks/mbbq/", fetched as the folder), the rest
    one by one."""
    by_folder: dict[str, list[str]] = {}
    for f in files:
        by_folder.setdefault(f.rpartition("/")[0], []).append(f)
    named: list[str] = []
    args: list[str] = []
    for folder, members in by_folder.items():
        everything = [r for r in registered if r.rpartition("/")[0] == folder]
        if folder and len(members) > 3 and set(members) == set(everything):
            named.append(f"all {len(members)} files under {folder}/")
            args.append(folder)
        else:
            named += members
            args += members
    return named, args
