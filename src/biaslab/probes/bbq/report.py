"""Report parts of bbq: the category table (accuracies, bias scores with CIs and BH q-values)."""

from __future__ import annotations

import html
from typing import Any


def _f(v: Any, digits: int = 1) -> str:
    return "n/a" if v is None else f"{v:.{digits}f}"


def _ci(pair: Any, digits: int = 1) -> str:
    return "n/a" if not pair or pair[0] is None else f"[{_f(pair[0], digits)}, {_f(pair[1], digits)}]"


def sections(results: dict[str, Any], attempts: list[dict[str, Any]]) -> list[dict[str, str]]:
    out = [{"title": "How the answers and the uncertainty are computed", "html":
            f"<p>Mode: <b>{html.escape(str(results.get('mode')))}</b>. {html.escape(results.get('ci_note', ''))}</p>"}]
    table = results.get("categories", [])
    if table:
        rows = "".join(
            f"<tr><td>{html.escape(t['category'])}</td><td class=num>{t['n_questions']}</td>"
            f"<td class=num>{_f(t['accuracy_ambig'], 3)}</td><td class=num>{_f(t['accuracy_disambig'], 3)}</td>"
            f"<td class=num>{_f(t['bias_score_ambig'])} {_ci(t['bias_score_ambig_ci'])}</td>"
            f"<td class=num>{_f(t.get('q_ambig'), 4)}</td>"
            f"<td class=num>{_f(t['bias_score_disambig'])} {_ci(t['bias_score_disambig_ci'])}</td>"
            f"<td class=num>{_f(t.get('q_disambig'), 4)}</td></tr>" for t in table)
        out.append({"title": "By category", "html":
                    "<table><tr><th>category</th><th>questions</th><th>accuracy (ambig.)</th>"
                    "<th>accuracy (disambig.)</th><th>bias score (ambig.) [95% CI]</th><th>q (BH)</th>"
                    f"<th>bias score (disambig.) [95% CI]</th><th>q (BH)</th></tr>{rows}</table>"})
    return out
