"""Paired sentences through a vLLM server: biaslab against lm-evaluation-harness's ``local-completions``.

Both score the same 400 H-WS pairs (biaslab's default build, seed 0, spread evenly) on the same
vLLM server, and each is timed as a whole process (Python start-up, imports, tokenizer, every
request, the metrics), in alternation for ``--rounds`` rounds; the ratio of the total times is
reported with ``uptime`` before and after.

* biaslab: ``python -m biaslab.cli run winosemitism --limit 400 --model openai/smol --base-url ...
  --max-concurrency C`` with a fresh response cache: exact scoring (the server's /tokenize, BOS
  first, token-id prompts with prompt_logprobs), shared-token decisions.
* lm-eval 0.4.13: ``LocalCompletionsAPI(base_url=.../v1/completions, tokenizer=<the same float32
  checkpoint>, num_concurrent=C, batch_size=B)`` -- ``loglikelihood`` on ``("", sentence)`` for both
  sentences of every pair (its CrowS-Pairs requests: the tokenizer's prefix token first, token-id
  prompts with echo + logprobs), local Hugging Face tokenizer.

Setup, once (lm-eval lives in its own venv, never a biaslab dependency; vLLM too, see
tests/models/openai/vllm_server.py, which builds it on first use):

    python3 -m venv /tmp/lmeval-venv && /tmp/lmeval-venv/bin/pip install "torch==2.13.0" "lm-eval[api]==0.4.13"

Run from the repository root with biaslab's venv:

    python bench/bench_vllm.py [--base-url http://127.0.0.1:PORT/v1 --model smol] [--rounds 2]
        [--concurrency 16] [--lmeval-batch 1] [--lmeval-python /tmp/lmeval-venv/bin/python]

Without ``--base-url`` it starts the CPU vLLM server (SmolLM2 as float32) and stops it at the end.

Measured (a 2-core machine shared with other work, load 21-28, vLLM CPU build 0.32,
concurrency 16 both sides, lm-eval batch_size 1, 2 rounds): biaslab 126.1 s and 100.2 s, lm-eval
130.4 s and 105.7 s; 3.53 against 3.39 pairs/s, biaslab 1.04x as fast. Against a server started with
``--enforce-eager`` (load 12-19, a vLLM test run beside it): biaslab 92.5 s and 145.4 s, lm-eval 111.2 s
and 123.1 s; 3.36 against 3.41 pairs/s (0.99x). Parity within the noise of this machine: both wait on
the server's forward passes, and biaslab's extra ``/tokenize`` request per sentence (the price of
using the server's own tokenizer) roughly cancels its lighter client. The
printed direction agreement compares lm-eval's full-sentence sums (conditioned on its prefix token,
EOS for SmolLM2) with biaslab's shared-token decisions: different rules, only a sanity check.
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

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "models" / "openai"))
from vllm_server import MODEL_NAME, VLLMServer, f32_checkpoint, vllm_python  # noqa: E402

LMEVAL_SCRIPT = r"""
import json, sys
from lm_eval.api.instance import Instance
from lm_eval.models.openai_completions import LocalCompletionsAPI
url, model, tokenizer, pairs_file, out_file, conc, batch = sys.argv[1:8]
pairs = json.load(open(pairs_file))
lm = LocalCompletionsAPI(base_url=url, model=model, tokenizer_backend="huggingface", tokenizer=tokenizer,
                         num_concurrent=int(conc), batch_size=int(batch), max_retries=3, tokenized_requests=True)
reqs = [Instance(request_type="loglikelihood", doc={}, arguments=("", s), idx=i)
        for i, s in enumerate(s for p in pairs for s in p)]
res = lm.loglikelihood(reqs, disable_tqdm=True)
json.dump([r[0] for r in res], open(out_file, "w"))
"""


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def pairs_of(n: int) -> list[list[str]]:
    from biaslab.probes import create_probe
    from biaslab.probing.core import spread_subset

    items = spread_subset(create_probe("winosemitism").load_items(), n)
    return [[it.prompts[0].text, it.prompts[1].text] for it in items]


def run_biaslab(base_url: str, model: str, n: int, conc: int, tmp: Path) -> tuple[float, Path]:
    out, cache = tmp / f"biaslab-{time.time_ns()}", tmp / f"cache-{time.time_ns()}"
    env = {**os.environ, "BIASLAB_CACHE_DIR": str(cache), "PYTHONPATH": str(REPO / "src")}
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "biaslab.cli", "run", "winosemitism", "--limit", str(n), "--model",
                    f"openai/{model}", "--base-url", base_url, "--max-concurrency", str(conc), "--out", str(out), "-q"],
                   check=True, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0, out


def run_lmeval(python: str, base_url: str, model: str, tokenizer: Path, pairs_file: Path, conc: int, batch: int,
               tmp: Path) -> tuple[float, list[float]]:
    script, out = tmp / "lmeval_run.py", tmp / f"lmeval-{time.time_ns()}.json"
    script.write_text(LMEVAL_SCRIPT)
    t0 = time.perf_counter()
    subprocess.run([python, str(script), f"{base_url}/completions", model, str(tokenizer), str(pairs_file), str(out),
                    str(conc), str(batch)], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0, json.loads(out.read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base-url")
    ap.add_argument("--model", default=MODEL_NAME)
    ap.add_argument("--pairs", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--lmeval-batch", type=int, default=1)
    ap.add_argument("--lmeval-python", default="/tmp/lmeval-venv/bin/python")
    args = ap.parse_args()
    ckpt = f32_checkpoint()
    server = None
    base_url = args.base_url
    if not base_url:
        server = VLLMServer(vllm_python(), ckpt).start()
        base_url = server.base_url
    try:
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            pairs = pairs_of(args.pairs)
            pairs_file = tmp / "pairs.json"
            pairs_file.write_text(json.dumps(pairs))
            print(f"{len(pairs)} pairs, {base_url}, concurrency {args.concurrency}; before: {uptime()}")
            totals = {"biaslab": 0.0, "lm-eval": 0.0}
            for r in range(args.rounds):
                tb, out = run_biaslab(base_url, args.model, args.pairs, args.concurrency, tmp)
                tl, lls = run_lmeval(args.lmeval_python, base_url, args.model, ckpt, pairs_file, args.concurrency,
                                     args.lmeval_batch, tmp)
                totals["biaslab"] += tb
                totals["lm-eval"] += tl
                print(f"round {r + 1}: biaslab {tb:.1f} s ({len(pairs) / tb:.2f} pairs/s), lm-eval {tl:.1f} s "
                      f"({len(pairs) / tl:.2f} pairs/s), ratio {tl / tb:.2f}; {uptime()}")
            rows = [json.loads(line) for line in (out / "attempts.jsonl").read_text().splitlines()]
            same = sum((lls[2 * i] > lls[2 * i + 1]) == (row["score_more"] > row["score_less"])
                       for i, row in enumerate(rows))
            n = len(pairs) * args.rounds
            print(f"total: biaslab {n / totals['biaslab']:.2f} pairs/s, lm-eval {n / totals['lm-eval']:.2f} pairs/s; "
                  f"biaslab is {totals['lm-eval'] / totals['biaslab']:.2f}x as fast (whole processes)")
            print(f"direction agreement of lm-eval's full-sentence sums with biaslab's shared-token decisions: "
                  f"{same}/{len(rows)} (different rules; a sanity check that both ran the same model)")
            print(f"after: {uptime()}")
    finally:
        if server is not None:
            server.kill()


if __name__ == "__main__":
    main()
