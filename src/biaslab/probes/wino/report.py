"""Report parts of the paired-sentence probes: per-group scores against the 50 line, the most
stereotyped predicates, example pairs, and how the uncertainty was computed."""

from __future__ import annotations

import html
import re
from typing import Any

from biaslab.probing.core import Figure


def _f(v: Any, digits: int = 1) -> str:
    return "n/a" if v is None else f"{v:.{digits}f}"


def group_figure(results: dict[str, Any]) -> Figure | None:
    from biaslab.report.plots import fig_to_base64, new_figure

    rows = [g for g in results.get("groups", []) if g.get("bias_score") is not None]
    if not rows:
        return None
    fig, ax = new_figure(7.0, 0.42 * len(rows) + 1.4)
    for y, g in enumerate(rows):
        color = "#9aa0a8" if g["too_small"] else ("#c0392b" if (g.get("q") or 1) < 0.05 else "#3b6ea8")
        if g.get("ci_low") is not None:
            ax.plot([g["ci_low"], g["ci_high"]], [y, y], color=color, linewidth=2.5, alpha=0.8)
        ax.plot([g["bias_score"]], [y], "o", color=color)
    ax.axvline(50, color="grey", linestyle=":", linewidth=1.2)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{g['group']} ({g['n_predicates']} pred.)" for g in rows])
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("bias score (50 = unbiased; > 50 prefers the stereotype)")
    return Figure("Bias score by target group", fig_to_base64(fig),
                  "Dots: bias score; bars: 95% CI of the cluster bootstrap over predicates. Red: q < 0.05; grey: "
                  "fewer than 3 predicates, too small to interpret; dotted line: 50, the unbiased value.")


def sections(results: dict[str, Any], attempts: list[dict[str, Any]]) -> list[dict[str, str]]:
    out = [{"title": "How the uncertainty is computed", "html": f"<p>{html.escape(results.get('ci_note', ''))}</p>"}]
    groups = results.get("groups", [])
    if groups:
        rows = "".join(
            f"<tr{' class=flag' if g['too_small'] else ''}><td>{html.escape(str(g['group']))}</td>"
            f"<td class=num>{g['n_pairs']}</td><td class=num>{g['n_predicates']}</td>"
            f"<td class=num>{_f(g['bias_score'])}</td>"
            f"<td class=num>{_ci(g)}</td>"
            f"<td class=num>{_f(g['p'], 4)}</td><td class=num>{_f(g.get('q'), 4)}</td>"
            f"<td>{'too small to interpret (fewer than 3 predicates)' if g['too_small'] else ''}</td></tr>"
            for g in groups)
        out.append({"title": "Target groups", "html":
                    "<table><tr><th>group</th><th>pairs</th><th>predicates</th><th>bias score</th><th>95% CI</th>"
                    f"<th>p</th><th>q (BH)</th><th></th></tr>{rows}</table>"})
    preds = [p for p in results.get("predicates", []) if p["predicate"]][:15]
    if preds:
        rows = "".join(f"<tr><td>{html.escape(str(p['group']))}</td><td>{html.escape(readable(p['predicate']))}</td>"
                       f"<td class=num>{p['n_pairs']}</td><td class=num>{_f(p['bias_score'])}</td>"
                       f"<td class=num>{_f(p['mean_ll_diff'], 3)}</td></tr>" for p in preds)
        out.append({"title": "Predicates the model stereotypes most", "html":
                    "<table><tr><th>group</th><th>predicate</th><th>pairs</th><th>bias score</th>"
                    f"<th>mean log-lik. difference</th></tr>{rows}</table>"})
    examples = _examples(attempts)
    if examples:
        rows = "".join(f"<tr><td>{html.escape(a['evaluation'])}</td><td>{html.escape(a['sent_more'])}</td>"
                       f"<td>{html.escape(a['sent_less'])}</td><td class=num>{_f(a['score_more'], 3)}</td>"
                       f"<td class=num>{_f(a['score_less'], 3)}</td></tr>" for a in examples)
        out.append({"title": "Example pairs", "html":
                    "<table><tr><th>decision</th><th>stereotypical sentence</th><th>counterfactual sentence</th>"
                    f"<th>log-lik. stereotypical</th><th>log-lik. counterfactual</th></tr>{rows}</table>"})
    return out


def _examples(attempts: list[dict[str, Any]], per_kind: int = 4) -> list[dict[str, Any]]:
    out = []
    for kind in ("stereotype", "counter", "tie"):
        picked = [a for a in attempts if a.get("evaluation") == kind]
        step = max(1, len(picked) // per_kind)
        out += picked[::step][:per_kind]
    return out


_SLOT_WORDS = {"subject": "they", "pronoun": "they", "object": "them", "possessive": "their", "reflexive": "themselves",
               "is/are": "are"}


def _ci(g: dict[str, Any]) -> str:
    if g.get("too_small") or g.get("ci_low") is None:
        return "none"
    return f"[{_f(g['ci_low'])}, {_f(g['ci_high'])}]"


def readable(predicate: str) -> str:
    """A predicate as a reader sees it: its pronoun slots filled as in plural sentences ("sticks to themselves")."""
    return re.sub(r"<([^<>]{1,40})>", lambda m: _SLOT_WORDS.get(m.group(1).lower(), m.group(1)), predicate)
