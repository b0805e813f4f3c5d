"""CrowS-Pairs: biaslab's ``crows-pairs`` probe against lm-evaluation-harness on the same weights.

Setup, once (lm-evaluation-harness lives in its own venv and is never a biaslab dependency):

    python3 -m venv /tmp/lmeval-venv
    /tmp/lmeval-venv/bin/pip install "torch==2.13.0" "lm-eval[hf]==0.4.13" accelerate

Run (from the repository root, biaslab's venv):

    python bench/bench_crows.py [--pairs N] [--lmeval-python /tmp/lmeval-venv/bin/python] [--json OUT]

What each side runs, on every pair of ``benchmarks/crows_pairs/crows_pairs_anonymized.csv`` (or
``--pairs`` pairs spread evenly over it):

* biaslab: the ``crows-pairs`` probe on the embedded SmolLM2-135M-Instruct (the Q4_1 GGUF
  dequantised by transformers, float32, CPU), default rule for a causal LM (full-sentence),
  through a fresh run cache; ``pct_stereotype`` and ``likelihood_diff`` from results.json.
* lm-eval: ``HFLM(pretrained=<the same model saved as a transformers checkpoint>, dtype=float32,
  device=cpu).loglikelihood`` on ``("", sent_more)`` and ``("", sent_less)`` -- the requests its
  ``crows_pairs_english`` task makes (``doc_to_text: ""``, ``target_delimiter: ""``; an empty
  context is its prefix token) -- and each pair scored by the task's own
  ``lm_eval.tasks.crows_pairs.utils.process_results``; ``pct_stereotype`` = 100 x the mean of its
  per-pair values, ``likelihood_diff`` their mean. (The task itself reads a Hugging Face copy of
  the data; the same rows are fed here so that both sides score identical text.)

Printed: both figures, their difference, per-pair decision agreement, the largest difference of a
sentence log-likelihood, the prefix token, and ``uptime`` before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LMEVAL_PYTHON = "/tmp/lmeval-venv/bin/python"
LMEVAL_SCRIPT = r"""
import json, sys, time
from lm_eval.api.instance import Instance
from lm_eval.models.huggingface import HFLM
from lm_eval.tasks.crows_pairs.utils import process_results
ckpt, pairs_file, out_file = sys.argv[1:4]
pairs = json.load(open(pairs_file))
lm = HFLM(pretrained=ckpt, dtype="float32", batch_size=16, device="cpu")
reqs = [Instance(request_type="loglikelihood", doc=p, arguments=("", s), idx=j)
        for p in pairs for j, s in enumerate((p["sent_more"], p["sent_less"]))]
t0 = time.perf_counter()
res = lm.loglikelihood(reqs, disable_tqdm=True)
secs = time.perf_counter() - t0
per_pair = [process_results(p, [tuple(res[2 * i]), tuple(res[2 * i + 1])]) for i, p in enumerate(pairs)]
import lm_eval
json.dump({"seconds": secs, "lls": [float(r[0]) for r in res], "per_pair": per_pair,
           "prefix_token_id": lm.prefix_token_id, "prefix_token": lm.tokenizer.decode([lm.prefix_token_id]),
           "lm_eval": lm_eval.__version__}, open(out_file, "w"))
"""


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "uptime unavailable"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=None, help="score this many pairs spread over the set (default all)")
    ap.add_argument("--lmeval-python", default=LMEVAL_PYTHON)
    ap.add_argument("--json", type=Path, default=None, help="also write the summary here")
    args = ap.parse_args(argv)
    os.environ.setdefault("BIASLAB_DATA_DIR", str(Path(__file__).resolve().parents[1].parent / "shared" / "data"))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_wino import save_checkpoint

    from biaslab.models.cache import CachedModel, ResponseCache
    from biaslab.models.registry import load_model
    from biaslab.probes import create_probe
    from biaslab.probing.config import RunConfig
    from biaslab.probing.core import spread_subset
    from biaslab.probing.runner import run_probe

    out: dict = {"uptime_before": uptime()}
    probe = create_probe("crows-pairs")
    items = spread_subset(probe.load_items(), args.pairs)
    pairs = [{"sent_more": it.prompts[0].text, "sent_less": it.prompts[1].text,
              "bias_type": it.metadata["bias_type"]} for it in items]
    backend = load_model("smollm2")
    real = backend.backend()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        save_checkpoint(real._m.model, real._m.tokenizer, tmp / "ckpt")
        cached = CachedModel(backend, ResponseCache(tmp / "responses.sqlite"))
        t0 = time.perf_counter()
        results, attempts = run_probe(probe, cached, RunConfig(), items=items)
        out["biaslab"] = {"seconds": time.perf_counter() - t0, "rule": results["rule"],
                          "pct_stereotype": results["metrics"]["pct_stereotype"],
                          "likelihood_diff": results["metrics"]["likelihood_diff"]}
        cached.cache.close()
        (tmp / "pairs.json").write_text(json.dumps(pairs))
        (tmp / "run.py").write_text(LMEVAL_SCRIPT)
        proc = subprocess.run([args.lmeval_python, str(tmp / "run.py"), str(tmp / "ckpt"), str(tmp / "pairs.json"),
                               str(tmp / "lm.json")], capture_output=True, text=True)
        if proc.returncode != 0:
            print(proc.stderr[-3000:])
            raise SystemExit("lm-eval failed (see above)")
        lm = json.loads((tmp / "lm.json").read_text())
    pct = 100 * sum(p["pct_stereotype"] for p in lm["per_pair"]) / len(pairs)
    diff = sum(p["likelihood_diff"] for p in lm["per_pair"]) / len(pairs)
    rows = [a.to_json() for a in attempts]
    same = sum((r["evaluation"] == "stereotype") == bool(p["pct_stereotype"]) for r, p in zip(rows, lm["per_pair"]))
    mine = [s for r in rows for s in (r["score_more"], r["score_less"])]
    out["lmeval"] = {"seconds": lm["seconds"], "pct_stereotype": pct, "likelihood_diff": diff,
                     "prefix_token_id": lm["prefix_token_id"], "prefix_token": lm["prefix_token"],
                     "version": lm["lm_eval"]}
    out.update(pairs=len(pairs), pct_stereotype_difference=out["biaslab"]["pct_stereotype"]["value"] - pct,
               same_decision=same, max_abs_diff_sentence_loglik=max(abs(a - b) for a, b in zip(mine, lm["lls"])),
               uptime_after=uptime())
    text = json.dumps(out, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
