"""Report parts of crows-pairs: the bias-type table (CI, p, BH q) and example pairs."""

from __future__ import annotations

import html
from typing import Any


def _f(v: Any, digits: int = 1) -> str:
    return "n/a" if v is None else f"{v:.{digits}f}"


def sections(results: dict[str, Any], attempts: list[dict[str, Any]]) -> list[dict[str, str]]:
    rule = results.get("rule")
    out = [{"title": "Scoring rule and uncertainty", "html":
            f"<p>Rule: <b>{html.escape(str(rule))}</b>. {html.escape(results.get('ci_note', ''))}</p>"}]
    table = results.get("bias_types", [])
    if table:
        rows = "".join(
            f"<tr><td>{html.escape(str(t['bias_type']))}</td><td class=num>{t['n_pairs']}</td>"
            f"<td class=num>{_f(t['pct_stereotype'])}</td><td class=num>[{_f(t['ci_low'])}, {_f(t['ci_high'])}]</td>"
            f"<td class=num>{_f(t['likelihood_diff'], 3)}</td><td class=num>{_f(t['p'], 4)}</td>"
            f"<td class=num>{_f(t.get('q'), 4)}</td></tr>" for t in table)
        out.append({"title": "By bias type", "html":
                    "<table><tr><th>bias type</th><th>pairs</th><th>pct_stereotype</th><th>95% CI</th>"
                    f"<th>likelihood_diff</th><th>p</th><th>q (BH)</th></tr>{rows}</table>"})
    picked = []
    for kind in ("stereotype", "counter", "tie"):
        some = [a for a in attempts if a.get("evaluation") == kind]
        picked += some[:: max(1, len(some) // 4)][:4]
    if picked:
        rows = "".join(f"<tr><td>{html.escape(str(a.get('bias_type')))}</td><td>{html.escape(a['evaluation'])}</td>"
                       f"<td>{html.escape(a['sent_more'])}</td><td>{html.escape(a['sent_less'])}</td>"
                       f"<td class=num>{_f(a['score_more'], 3)}</td><td class=num>{_f(a['score_less'], 3)}</td></tr>"
                       for a in picked)
        out.append({"title": "Example pairs", "html":
                    "<table><tr><th>bias type</th><th>decision</th><th>sent_more</th><th>sent_less</th>"
                    f"<th>score</th><th>score</th></tr>{rows}</table>"})
    return out
