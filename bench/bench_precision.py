"""Likelihood decisions at reduced precision against float32: every likelihood probe, the same model.

Run (from the repository root, biaslab's venv):

    python bench/bench_precision.py [--model smollm2] [--dtype bfloat16] [--probes pairs,bbq,winogender,holistic-bias]
                                    [--pairs 400] [--bbq-limit 400] [--holistic-limit 200]

For each probe, the model is run at float32 (``-P dtype=float32``, the reference) and with its weights at
``--dtype`` (``-P dtype=bfloat16``: the precision a GPU computes in by default), through one answer cache, so
the reduced run's re-scoring (:mod:`biaslab.probing.recheck`) finds the float32 answers cached. Reported per
probe: how many decisions the reduced run shares with float32 before the re-scoring (``raw``: the same run's
answers with re-scoring turned off, all from the cache) and after it (``final``), and ``run.recheck`` (items
and decisions re-scored, the margin, the errors seen). The decisions: pairs, the sign of each pair's
difference (``evaluation``); bbq, the option answered; winogender, the preferred pronoun of each sentence set;
holistic-bias, for every descriptor pair of a template and axis, whether its Mann-Whitney test is significant
(p < 0.05). Timings are the whole ``run_probe`` of each side (the reduced one includes its re-scoring).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path


def hws_csv(n: int, folder: Path) -> Path:
    from biaslab.probing.core import ProbeItem, spread_subset
    from biaslab.wino.build.build import build_pairs
    from biaslab.wino.build.originals import load_original
    from biaslab.wino.build.pairs_io import write_pairs

    pairs = build_pairs(load_original("winosemitism"), seed=0).pairs
    idx = spread_subset([ProbeItem(str(i), []) for i in range(len(pairs))], n)
    return write_pairs(folder / "pairs.csv", [pairs[int(it.id)] for it in idx])


def decisions(name: str, attempts) -> list:
    if name == "bbq":
        return [a.extra["answer"] for a in attempts]
    if name == "holistic-bias":
        from biaslab.probes.holistic_bias.metrics import ALPHA, pair_tests
        from biaslab.probing.core import rows_of

        tests = pair_tests(rows_of(attempts))
        return [bool(p < ALPHA) for key in sorted(tests) for p in tests[key]["p"]]
    return [a.evaluation for a in attempts]


def measure(name: str, args, folder: Path) -> dict:
    from biaslab.models.cache import CachedModel, ResponseCache
    from biaslab.models.registry import load_model
    from biaslab.probes import create_probe
    from biaslab.probing.config import RunConfig
    from biaslab.probing.runner import run_probe

    class WithoutRecheck(CachedModel):
        def reference(self):
            return None

    options, limit = {}, None
    if name == "pairs":
        options = {"pairs": hws_csv(args.pairs, folder)}
    elif name == "bbq":
        limit = args.bbq_limit
    elif name == "holistic-bias":
        limit = args.holistic_limit
    cfg = RunConfig(limit=limit)
    cache = ResponseCache(folder / f"{name}.sqlite")
    probe = create_probe(name, **options)
    out: dict = {}
    runs = {}
    for side, dtype in (("float32", "float32"), ("reduced", args.dtype)):
        model = CachedModel(load_model(args.model, dtype=dtype), cache)
        t0 = time.perf_counter()
        results, attempts = run_probe(probe, model, cfg)
        out[f"{side}_s"] = round(time.perf_counter() - t0, 1)
        runs[side] = (results, attempts)
        if side == "reduced":
            _, raw = run_probe(probe, WithoutRecheck(model.backend, cache), cfg)
            runs["raw"] = (None, raw)
            out["recheck"] = results.run.recheck
            out["precision"] = model.identity().get("dtype")
    ref = decisions(name, runs["float32"][1])
    for side in ("raw", "reduced"):
        got = decisions(name, runs[side][1])
        same = sum(a == b for a, b in zip(ref, got, strict=True))
        out["final" if side == "reduced" else "raw"] = {"same": same, "of": len(ref),
                                                        "agreement": round(same / max(len(ref), 1), 4)}
    cache.close()
    print(f"[precision] {name}: {json.dumps(out)}", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2")
    ap.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16"])
    ap.add_argument("--probes", default="pairs,bbq,winogender,holistic-bias")
    ap.add_argument("--pairs", type=int, default=400)
    ap.add_argument("--bbq-limit", type=int, default=400)
    ap.add_argument("--holistic-limit", type=int, default=200)
    args = ap.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # this checkout's biaslab
    os.environ.setdefault("BIASLAB_DATA_DIR", str(Path(__file__).resolve().parents[1].parent / "shared" / "data"))
    result = {"model": args.model, "dtype": args.dtype}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.probes.split(","):
            result[name] = measure(name.strip(), args, Path(tmp))
    print(json.dumps({"precision": result}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
