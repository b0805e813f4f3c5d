"""A file probe's YAML, checked whole into a :class:`FileSpec` (docs/file_probes.md describes every key).

Everything is checked before a model is opened: unknown and missing keys, a placeholder naming no column of the
items, a group or option column the table lacks, an empty or repeated item id, a label no metric can count. Each
mistake is a one-line :class:`~biaslab.errors.ConfigError` naming the file, the key and the fix.

The spec's ``sha256`` is the hash of the YAML file's text and of its items table's bytes: the probe's name
(``file:<name>@<first 8 hex digits>``) carries it, so an edited file is another probe.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from biaslab.errors import ConfigError, DataError
from biaslab.probing.core import ATTEMPT_FIELDS
from biaslab.probing.file_probe import PREFIX
from biaslab.probing.file_probe.answers import AnswerSpec, parse_answer
from biaslab.probing.file_probe.metric_specs import EXAMPLE, MetricSpec, parse_metrics
from biaslab.probing.file_probe.strict_yaml import Where, close_to, kind, load_yaml
from biaslab.probing.file_probe.template import OPTIONS, fields

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,59}")
TOP = (
    "name",
    "title",
    "description",
    "noun",
    "items",
    "id",
    "system",
    "prompt",
    "answer",
    "groups",
    "metrics",
    "repetitions",
    "temperature",
    "max_tokens",
)
REQUIRED = {
    "name": "add name: a short id of the probe, e.g. occupation-pronouns",
    "description": "add description: what the probe measures, in a sentence or two",
    "items": "add items: a list of rows, or table: FILE (a CSV, TSV or .xlsx file beside the YAML file)",
    "prompt": "add prompt: the text asked of each item, with {column} placeholders",
    "answer": "add answer: with options: [...] (multiple choice) or free: {label: [words]} (free text)",
    "metrics": f"add metrics: ({EXAMPLE})",
}
# fields of attempts.jsonl (biaslab.probing.core.Attempt) and of the probe's own prompts: a group column may not be
# called so, since its values travel in the attempts under the column's name
RESERVED = (*ATTEMPT_FIELDS, "options", "option_texts")


@dataclass(frozen=True)
class Table:
    """An items table as read: its file (relative to the YAML file), header and rows."""

    file: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    row_numbers: tuple[int, ...] = ()  # each row's line in the file (for messages); () when read from a run


@dataclass(frozen=True)
class FileSpec:
    path: str  # the YAML file as given
    yaml_text: str
    table: Table | None  # the items table (None: the items are in the YAML file)
    name: str
    title: str
    description: str
    noun: str
    columns: tuple[str, ...]
    rows: tuple[dict[str, str], ...]
    ids: tuple[str, ...]
    system: str | None
    prompt: str
    answer: AnswerSpec
    groups: dict[str, list[str]]  # group column -> its values, in the order the items first give them
    metrics: tuple[MetricSpec, ...]
    repetitions: int = 1
    temperature: float | None = None
    max_tokens: int | None = None
    id_column: str | None = None
    sha256: str = field(default="")

    @property
    def probe_name(self) -> str:
        return f"{PREFIX}{self.name}@{self.sha256[:8]}"

    @property
    def family(self) -> str:
        """What runs pair up across (``compare``): every version of the probe of this name, item by item."""
        return f"{PREFIX}{self.name}"

    def record(self) -> dict[str, Any]:
        """The file as a run keeps it (results.json ``details.file_probe``), for :func:`spec_from_record`."""
        table = self.table
        return {
            "path": self.path,
            "sha256": self.sha256,
            "yaml": self.yaml_text,
            "table": None
            if table is None
            else {"file": table.file, "header": list(table.header), "rows": [list(r) for r in table.rows]},
        }


def digest(yaml_text: str, table_bytes: bytes | None) -> str:
    h = hashlib.sha256(b"biaslab file probe\0" + yaml_text.encode("utf-8") + b"\0")
    h.update(b"inline" if table_bytes is None else b"table\0" + table_bytes)
    return h.hexdigest()


def load_spec(path_text: str) -> FileSpec:
    """The probe of the YAML file ``path_text`` (a one-line error for anything wrong with it or its table)."""
    from biaslab.io import read_table, read_utf8

    path = Path(path_text)
    if not path.is_file():
        what = "a folder" if path.is_dir() else "no such file"
        raise ConfigError(f"{path_text}: {what}; give the probe's YAML file as file:PATH (docs/file_probes.md)")
    text = read_utf8(path, what="a YAML file", fix="save it as UTF-8 text")
    w = Where(path_text)
    read: dict[str, bytes] = {}

    def table(name: str) -> Table:
        file = path.parent / name
        if not file.is_file():
            raise w.error("items.table", f"{file}: no such file", "give the table's path from the YAML file's folder")
        try:
            t = read_table(file, what="items")
            read["bytes"] = file.read_bytes()
        except (DataError, OSError) as exc:  # the table reader's own one-line message says how to fix it
            raise ConfigError(f"{w.file}: items.table: {exc}") from None
        return Table(name, tuple(t.header), tuple(tuple(r) for r in t.rows), tuple(t.row_numbers))

    spec = _parse(load_yaml(text, path_text), w, text, table)
    return replace(spec, sha256=digest(text, read.get("bytes")))


def spec_from_record(record: Mapping[str, Any]) -> FileSpec:
    """The probe a run recorded (:meth:`FileSpec.record`); a DataError when the record is not one."""
    try:
        text, path, sha, saved = str(record["yaml"]), str(record["path"]), str(record["sha256"]), record["table"]

        def table(name: str) -> Table:
            if not isinstance(saved, Mapping):
                raise DataError(f"{path}: the run recorded no items table")
            return Table(name, tuple(saved["header"]), tuple(tuple(str(c) for c in r) for r in saved["rows"]))

        spec = _parse(load_yaml(text, path), Where(path), text, table)
    except (KeyError, TypeError, ValueError, ConfigError) as exc:
        raise DataError(
            f"the run's details.file_probe is not a probe file's record ({exc}); re-run the probe"
        ) from None
    return replace(spec, sha256=sha)


def _parse(data: Any, w: Where, text: str, read_table: Callable[[str], Table]) -> FileSpec:
    top = w.mapping("(top level)", data, "the file is a mapping of keys: name, description, items, prompt, ...")
    w.keys("", top, TOP, REQUIRED)
    name = w.text("name", top["name"])
    if not NAME.fullmatch(name):
        raise w.error("name", f"{name!r} cannot name a probe", "use letters, digits, '.', '_' or '-', e.g. my-probe")
    columns, rows, where_row, table = _items(w, top["items"], read_table)
    answer = parse_answer(w, top["answer"])
    prompt = w.text("prompt", top["prompt"])
    system = w.text("system", top["system"]) if "system" in top else None
    for key, template in (("prompt", prompt), ("system", system)):
        for f in fields(template or ""):
            if not (f == OPTIONS and answer.kind == "options") and f not in columns:
                known = ", ".join(columns)
                raise w.error(
                    key,
                    f"{{{f}}} names no column of the items{close_to(f, columns)}",
                    f"use one of {known}"
                    + (" or {options}" if answer.kind == "options" else "")
                    + "; write {{ and }} for a literal brace",
                )
    if answer.kind == "options" and OPTIONS not in fields(prompt) + fields(system or ""):
        raise w.error("prompt", "the options are never shown", "put {options} where the lettered options go")
    for i, o in enumerate(answer.options):
        if o.column is not None and o.column not in columns:
            raise w.error(
                f"answer.options[{i}].column",
                f"{o.column!r} is no column of the items{close_to(o.column, columns)}",
                f"use one of {', '.join(columns)}",
            )
    id_column = _column(w, "id", top["id"], columns) if "id" in top else None
    group_columns = _group_columns(w, top.get("groups"), columns)
    used = [
        *fields(prompt),
        *fields(system or ""),
        *answer.columns,
        *group_columns,
        *([id_column] if id_column else []),
    ]
    _filled(w, rows, where_row, [c for c in dict.fromkeys(used) if c in columns])
    ids = _ids(w, rows, where_row, id_column)
    for row, at in zip(rows, where_row):
        texts = [o.shown(row).strip().lower() for o in answer.options]
        if len(set(texts)) < len(texts):
            raise w.error(at, "two options show the same text", "give every option of an item its own text")
    groups = _groups(w, rows, group_columns)
    metrics = parse_metrics(w, top["metrics"], answer.labels, groups)
    return FileSpec(
        path=w.file,
        yaml_text=text,
        table=table,
        name=name,
        title=w.text("title", top["title"]) if "title" in top else name,
        description=w.text("description", top["description"]),
        noun=w.text("noun", top["noun"]) if "noun" in top else "items",
        columns=tuple(columns),
        rows=tuple(rows),
        ids=tuple(ids),
        system=system,
        prompt=prompt,
        answer=answer,
        groups=groups,
        metrics=metrics,
        repetitions=int(w.number("repetitions", top["repetitions"], 1, 1000, whole=True))
        if "repetitions" in top
        else 1,
        temperature=w.number("temperature", top["temperature"], 0, 5) if "temperature" in top else None,
        max_tokens=int(w.number("max_tokens", top["max_tokens"], 1, 100_000, whole=True))
        if "max_tokens" in top
        else None,
        id_column=id_column,
    )


def _items(
    w: Where, value: Any, read_table: Callable[[str], Table]
) -> tuple[list[str], list[dict[str, str]], list[str], Table | None]:
    """(columns, rows, where each row is for messages, the table read or None)."""
    fix = "give a list of rows ({column: value, ...}) or table: FILE"
    if isinstance(value, Mapping):
        w.keys("items", value, ("table",), {"table": fix})
        table = read_table(w.text("items.table", value["table"]))
        if not table.rows:
            raise w.error("items.table", f"{table.file} has a header but no rows", "add one row per item")
        numbers = table.row_numbers or tuple(range(2, len(table.rows) + 2))
        rows = [dict(zip(table.header, r)) for r in table.rows]
        return list(table.header), rows, [f"items.table {table.file}, row {n}" for n in numbers], table
    if not isinstance(value, list) or not value:
        raise w.error("items", f"expected a list of rows or table: FILE, got {kind(value)}", fix)
    columns: dict[str, None] = {}
    rows = []
    for i, raw in enumerate(value):
        row = w.mapping(f"items[{i}]", raw, "each item is a mapping of column: value")
        out = {}
        for k, v in row.items():
            col = w.text(f"items[{i}] (a column name)", k)
            out[col] = w.text(f"items[{i}].{col}", v, empty=True)
            columns[col] = None
        rows.append(out)
    return list(columns), rows, [f"items[{i}]" for i in range(len(rows))], None


def _column(w: Where, key: str, value: Any, columns: list[str]) -> str:
    column = w.text(key, value)
    if column not in columns:
        raise w.error(
            key, f"{column!r} is no column of the items{close_to(column, columns)}", f"use one of {', '.join(columns)}"
        )
    return column


def _group_columns(w: Where, value: Any, columns: list[str]) -> list[str]:
    if value is None:
        return []
    listed = value if isinstance(value, list) else [value]
    out = [_column(w, "groups", v, columns) for v in listed]
    for c in out:
        if c in RESERVED:
            raise w.error(
                "groups",
                f"the column {c!r} has the name of a field of attempts.jsonl",
                "rename the column (e.g. group_" + c + ")",
            )
    if len(set(out)) < len(out):
        raise w.error("groups", "a column is named twice", "name each group column once")
    return out


def _filled(w: Where, rows: list[dict[str, str]], where_row: list[str], used: list[str]) -> None:
    for row, at in zip(rows, where_row):
        for c in used:
            if not row.get(c, "").strip():
                raise w.error(at, f"no value in the column {c!r}", "fill it in, or remove the row")


def _ids(w: Where, rows: list[dict[str, str]], where_row: list[str], id_column: str | None) -> list[str]:
    if id_column is None:
        return [f"item-{i + 1}" for i in range(len(rows))]
    ids = [row[id_column].strip() for row in rows]
    first: dict[str, str] = {}
    for item_id, at in zip(ids, where_row):
        if item_id in first:
            raise w.error(
                at,
                f"the id {item_id!r} is also the id of {first[item_id]}",
                f"make the column {id_column!r} unique, or leave id out (items are then numbered)",
            )
        first[item_id] = at
    return ids


def _groups(w: Where, rows: list[dict[str, str]], group_columns: list[str]) -> dict[str, list[str]]:
    groups = {c: list(dict.fromkeys(row[c].strip() for row in rows)) for c in group_columns}
    owner: dict[str, str] = {}
    for c, values in groups.items():
        for v in values:
            if v in owner:
                raise w.error(
                    "groups",
                    f"the value {v!r} is in the columns {owner[v]!r} and {c!r}",
                    "per-group metrics are named METRIC:<value>: make the columns' values differ",
                )
            owner[v] = c
    return groups
