"""Benchmark the automatic medal extraction: texts per second on the annotated olympics texts.

    BIASLAB_DATA_DIR=../shared/data python bench/bench_extract.py [--n 2000]

The annotated generations of both models (specified and underspecified prompts) are repeated until
``--n`` texts are reached; the target is under 5 s for 2,000 texts. Without data, synthetic texts
are used.
"""

from __future__ import annotations

import argparse
import itertools
import os
import time

import pandas as pd

from biaslab.probes.olympics.extract import extract_specified, extract_underspecified

_SYNTHETIC = [
    ("s", "At the 2004 Games, the medals were awarded as follows:\n\n- **Gold:** Netherlands\n"
          "- **Silver:** Spain\n- **Bronze:** Australia\n\nThe Dutch team beat Spain in the final."),
    ("u", "**Men's tournament:**\n* Gold: Argentina\n* Silver: Paraguay\n* Bronze: Italy\n\n"
          "**Women's tournament:**\n* Gold: United States\n* Silver: Brazil\n* Bronze: Germany"),
    ("s", "The gold medal was won by the Soviet Union, the silver by the United States and the bronze by "
          "West Germany, who beat Australia in the bronze medal match."),
]


def load_texts() -> list[tuple[str, dict]]:
    data_dir = os.environ.get("BIASLAB_DATA_DIR")
    if not data_dir:
        return [(k, {"text": t, "Year": "2004", "Gender": "Men", "Event": "", "Discipline": ""}) for k, t in _SYNTHETIC]
    from biaslab.data import data_path

    out = []
    for kind in ("specified", "underspecified"):
        for model in ("gpt-4o-mini", "llama3.1-8b"):
            df = pd.read_csv(data_path(f"olympics/annotated/{kind}/{model}.tsv"), sep="\t",
                             keep_default_na=False, dtype=str)
            out += [(kind[0], row) for row in df.to_dict("records")]
    return out


def run(items: list[tuple[str, dict]]) -> None:
    for kind, row in items:
        kw = dict(year=int(row["Year"]), event=row.get("Event"), discipline=row.get("Discipline"))
        if kind == "s":
            extract_specified(row["text"], gender=row.get("Gender"), **kw)
        else:
            extract_underspecified(row["text"], **kw)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000, help="number of texts to extract")
    args = ap.parse_args()
    texts = load_texts()
    items = list(itertools.islice(itertools.cycle(texts), args.n))
    run(items[:5])  # warm-up: compiles the country pattern
    t0 = time.perf_counter()
    run(items)
    dt = time.perf_counter() - t0
    chars = sum(len(r["text"]) for _, r in items)
    print(f"{len(items)} texts ({chars / len(items):.0f} chars on average) in {dt:.2f} s: "
          f"{len(items) / dt:.0f} texts/s (target: 2000 texts < 5 s)")


if __name__ == "__main__":
    main()
