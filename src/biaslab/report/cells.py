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


def _cell(value: Any, numeric: bool, label: str, lead: bool) -> str:
    text = value if isinstance(value, Markup) else html.escape(str(value))
    if lead:
        return f"<td class=lead>{text}</td>"
    kind = "num" if numeric else "wide"
    return f'<td class={kind} data-label="{html.escape(label)}">{text}</td>'


def html_table(
    header: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    numeric: Iterable[int] = (),
    flagged: Iterable[bool] | None = None,
) -> str:
    """A ``<table>``: escaped header and cells, ``numeric`` column indexes right-aligned (class ``num``),
    rows whose ``flagged`` entry is true shaded grey (class ``flag``: too small to interpret).

    On a narrow screen the table reflows into a card per row (class ``rf``, :mod:`biaslab.report.style`):
    the first cell heads the card, numbers sit side by side under their column's name, other text
    takes a line of its own."""
    numeric = set(numeric)
    rows = list(rows)
    flags = list(flagged) if flagged is not None else [False] * len(rows)
    head = "".join(f"<th{' class=num' if i in numeric else ''}>{html.escape(h)}</th>" for i, h in enumerate(header))
    labels = [h or "note" for h in header]
    body = "".join(
        f"<tr{' class=flag' if flag else ''}>"
        + "".join(
            _cell(v, i in numeric, labels[i] if i < len(labels) else "", i == 0 and 0 not in numeric)
            for i, v in enumerate(row)
        )
        + "</tr>"
        for row, flag in zip(rows, flags)
    )
    return f"<table class=rf><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
