"""Compare the automatic medal extraction with the human annotation of the olympics data.

Prints per file precision / recall / F1 over (row, group, medal, NOC) triples, for all rows and
for rows the annotators did not reject, then the most frequent error classes.

    BIASLAB_DATA_DIR=../shared/data python scripts/eval_extract.py [--errors N] [--show N]
"""

from __future__ import annotations

import argparse
from collections import Counter

import pandas as pd

from biaslab.data import data_path
from biaslab.probes.olympics.extract import extract_frame

MEDALS = ("g", "s", "b")
FILES = [(kind, model) for kind in ("specified", "underspecified") for model in ("gpt-4o-mini", "llama3.1-8b")]


def load(kind: str, model: str) -> pd.DataFrame:
    path = data_path(f"olympics/annotated/{kind}/{model}.tsv")
    return pd.read_csv(path, sep="\t", keep_default_na=False, dtype=str)


def row_triples(row: dict, under: bool) -> set[tuple[str, str, str]]:
    out = set()
    groups = ("u", "f", "m") if under else ("",)
    for g in groups:
        for m in MEDALS:
            col = f"gen_{g}_{m}" if g else f"gen_{m}"
            for code in str(row[col]).split(","):
                if code.strip():
                    out.add((g or "x", m, code.strip()))
    return out


def score(gold_rows: list[set], pred_rows: list[set]) -> tuple[float, float, float, int, int, int]:
    tp = sum(len(g & p) for g, p in zip(gold_rows, pred_rows))
    n_pred = sum(len(p) for p in pred_rows)
    n_gold = sum(len(g) for g in gold_rows)
    prec = tp / n_pred if n_pred else 1.0
    rec = tp / n_gold if n_gold else 1.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return prec, rec, f1, tp, n_pred, n_gold


def evaluate(kind: str, model: str) -> dict:
    df = load(kind, model)
    under = kind == "underspecified"
    pred = extract_frame(df)
    gold_rows = [row_triples(r, under) for r in df.to_dict("records")]
    pred_rows = [row_triples(r, under) for r in pred.to_dict("records")]
    keep = [s != "rejected" for s in df["status"]]
    return {
        "df": df, "pred": pred, "gold": gold_rows, "predt": pred_rows,
        "all": score(gold_rows, pred_rows),
        "not_rejected": score([g for g, k in zip(gold_rows, keep) if k], [p for p, k in zip(pred_rows, keep) if k]),
        "status_agree": float((pred["status"] == df["status"]).mean()),
    }


def error_classes(res: dict) -> Counter:
    c: Counter = Counter()
    for g, p in zip(res["gold"], res["predt"]):
        for t in g - p:
            same_code_other_slot = any(q[2] == t[2] for q in p)
            c["missed (NOC found in another slot)" if same_code_other_slot else "missed"] += 1
        for t in p - g:
            same_code_other_slot = any(q[2] == t[2] for q in g)
            c["spurious (NOC is gold in another slot)" if same_code_other_slot else "spurious"] += 1
        gg = {x[0] for x in g}
        pg = {x[0] for x in p}
        if gg != pg and g and p:
            c[f"group mismatch {''.join(sorted(gg))}->{''.join(sorted(pg))}"] += 1
    return c


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--show", type=int, default=0, help="print this many wrong rows per file")
    ap.add_argument("--only", default="", help="substring of kind/model to restrict to")
    args = ap.parse_args()
    for kind, model in FILES:
        if args.only and args.only not in f"{kind}/{model}":
            continue
        res = evaluate(kind, model)
        p, r, f, tp, npred, ngold = res["all"]
        p2, r2, f2, *_ = res["not_rejected"]
        print(f"{kind:15s} {model:12s} all rows: P={p:.3f} R={r:.3f} F1={f:.3f} (tp={tp} pred={npred} gold={ngold})"
              f" | not rejected: F1={f2:.3f} | status agreement {res['status_agree']:.2f}")
        for name, n in error_classes(res).most_common(6):
            print(f"    {n:4d}  {name}")
        shown = 0
        for i, (g, pr) in enumerate(zip(res["gold"], res["predt"])):
            if g != pr and shown < args.show:
                shown += 1
                row = res["df"].iloc[i]
                print(f"--- row {i} year {row['Year']} {row.get('Gender', '')} {row['Event']} status={row['status']}")
                print("   missing :", sorted(g - pr))
                print("   spurious:", sorted(pr - g))
                print("   flags   :", res["pred"].iloc[i]["flags"])
                text = row["text"].split("<|end_header_id|>")[-1].strip()
                print("   " + text[:1500].replace("\n", "\n   "))


if __name__ == "__main__":
    main()
