"""HTML pieces for the probes' report sections: numbers, intervals and tables.

Text cells are escaped here; a cell that is already HTML is passed as ``markupsafe.Markup``.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import Any

from markupsafe import Markup

__all__ = ["Markup", "html_table", "interval", "num"]


def num(value: Any, digits: int = 3) -> str:
    """``value`` with ``digits`` decimals; "n/a" when there is none."""
    return "n/a" if value is None else f"{value:.{digits}f}"


def interval(lo: Any, hi: Any, digits: int = 3, missing: str = "") -> str:
    """``[lo, hi]``, or ``missing`` when the interval is undefined (too few units, no variation)."""
    return missing if lo is None or hi is None else f"[{num(lo, digits)}, {num(hi, digits)}]"


def _cell(value: Any, numeric: bool) -> str:
    text = value if isinstance(value, Markup) else html.escape(str(value))
    return f"<td class=num>{text}</td>" if numeric else f"<td>{text}</td>"


def html_table(header: Sequence[str], rows: Iterable[Sequence[Any]], *, numeric: Iterable[int] = (),
               flagged: Iterable[bool] | None = None) -> str:
    """A ``<table>``: escaped header and cells, ``numeric`` column indexes right-aligned (class ``num``),
    rows whose ``flagged`` entry is true shaded (class ``flag``)."""
    numeric = set(numeric)
    rows = list(rows)
    flags = list(flagged) if flagged is not None else [False] * len(rows)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(f"<tr{' class=flag' if flag else ''}>" + "".join(_cell(v, i in numeric) for i, v in enumerate(row))
                   + "</tr>" for row, flag in zip(rows, flags))
    return f"<table><tr>{head}</tr>{body}</table>"
