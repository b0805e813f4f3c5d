"""Print ``biaslab annotate status`` as tables."""

from __future__ import annotations

from rich.table import Table

from biaslab.annotate.status import CAP_NOTE


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def print_status(s: dict, console) -> None:
    console.print(f"study of {s.get('construct', 'gender bias')}")
    console.print(
        f"{s['annotations']} of {s['annotations_needed']} annotations ({100 * s['progress']:.1f}%); "
        f"{s['complete_tuples']} of {s['tuples']} tuples complete ({s['per_tuple']} each); "
        f"{s['open_assignments']} open now"
    )
    console.print(
        f"cap: {s['cap_count']} tuples per annotator ({s['cap']:g}); at least {s['annotators_needed']} "
        f"annotators needed; {s['gold_tuples']} gold tuples"
    )
    by_count = ", ".join(f"{k} annotations: {v}" for k, v in s["tuples_by_annotations"].items())
    console.print(f"tuples by annotations so far: {by_count}")
    if not s["consistent"]:
        console.print("warning: assignment counters disagree with the assignments table")
    table = Table(title="Annotators")
    for col in (
        "name",
        "consent",
        "done",
        "gold",
        "skipped",
        "open",
        "expired",
        f"seen / cap {s['cap_count']}",
        "gold acc.",
        "last submission",
        "flag",
    ):
        table.add_column(col)
    for a in s["annotators"]:
        name = a["name"] + (" (admin)" if a["admin"] else "")
        table.add_row(
            name,
            "yes" if a["consented"] else "no",
            str(a["done"]),
            f"{a['gold_correct']}/{a['gold_answered']}",
            str(a["skipped"]),
            str(a.get("open", 0)),
            str(a.get("expired", 0)),
            f"{a['seen']} ({_pct(a['share_of_cap'])})",
            _pct(a["gold_accuracy"]),
            a["last_submitted_at"] or "-",
            ("FLAGGED: " + a["flag_reason"]) if a["flagged"] else "",
        )
    console.print(table)
    console.print(f"done: study tuples answered; gold: right/answered; {CAP_NOTE}")
    r = s.get("reliability") or {}
    if "note" in r:
        console.print(
            f"reliability: {r['note']} ({r['annotations']} annotations, "
            f"{r['tuples_with_2_or_more']} tuples with two or more)"
        )
    elif r:
        from biaslab.bws.reliability import format_mean_sd

        console.print(
            f"split-half reliability so far ({r['trials']} trials, {r['annotations']} annotations, "
            f"{r['tuples_with_2_or_more']} tuples with two or more): Pearson "
            f"{format_mean_sd(r['pearson_mean'], r['pearson_sd'])}, Spearman "
            f"{format_mean_sd(r['spearman_mean'], r['spearman_sd'])}"
        )
