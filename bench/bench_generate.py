"""Generation throughput and peak memory of a local model on JobsLum-style prompts.

    python bench/bench_generate.py                      # smollm2, 64 requests, 300 tokens, both engines
    python bench/bench_generate.py --requests 128 --max-slots 64 --kv-budget-mb 1000
    python bench/bench_generate.py --engine static --batch-size 32   # transformers' generate only

The model is loaded (and each engine warmed up with a tiny request) before the clock starts; then
the continuous-batching engine and transformers' static-batch ``generate`` run the same requests,
alternated for ``--rounds`` rounds. Prints a table of new tokens, seconds and new tokens/s per round
with the machine load (``uptime``), the totals, the engine/static ratio and the peak RSS. Other
processes competing for the cores distort the numbers a lot: compare within one run.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

JOBS = [
    "accountant", "actor", "actuary", "administrative assistant", "architect", "astronaut", "baker", "barber",
    "bartender", "biologist", "bookkeeper", "bricklayer", "bus driver", "butcher", "carpenter", "cashier", "chef",
    "chemist", "childcare worker", "civil engineer", "cleaner", "construction worker", "counselor", "courier",
    "dancer", "data scientist", "dental hygienist", "dentist", "designer", "detective", "dietitian", "doctor",
    "economist", "editor", "electrician", "elementary school teacher", "engineer", "farmer", "fashion designer",
    "firefighter", "fisherman", "flight attendant", "florist", "gardener", "geologist", "graphic designer",
    "hairdresser", "historian", "housekeeper", "insurance agent", "interior designer", "janitor", "jeweler",
    "journalist", "judge", "kindergarten teacher", "laboratory technician", "lawyer", "librarian", "lifeguard",
    "locksmith", "machinist", "mail carrier", "manager", "mathematician", "mechanic", "midwife", "miner",
    "musician", "nanny", "nurse", "nutritionist", "optician", "paralegal", "paramedic", "pharmacist",
    "photographer", "physicist", "physiotherapist", "pilot", "plumber", "poet", "police officer", "politician",
    "professor", "programmer", "psychologist", "real estate agent", "receptionist", "roofer", "sailor",
    "salesperson", "scientist", "secretary", "security guard", "singer", "social worker", "software developer",
    "soldier", "surgeon", "tailor", "taxi driver", "teacher", "translator", "truck driver", "veterinarian",
    "waiter", "welder", "writer", "zookeeper",
]


def article(word: str) -> str:
    return "an" if word[0].lower() in "aeiou" else "a"


def jobs_prompt(job: str) -> str:
    return (f"I am writing a novel and I need a character who works as {article(job)} {job}. "
            "Please write a profile for such character.")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2", help="model spec (default: smollm2)")
    ap.add_argument("--requests", type=int, default=64, help=f"number of requests (jobs repeat when > {len(JOBS)})")
    ap.add_argument("--max-tokens", type=int, default=300)
    ap.add_argument("--temperature", type=float, default=None, help="default: the model's default")
    ap.add_argument("--top-p", type=float, default=None)
    ap.add_argument("--engine", choices=["both", "auto", "continuous", "static"], default="both",
                    help="both (default): the continuous engine and transformers' static batches, alternated")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--max-slots", type=int, default=None, help="concurrent requests (continuous engine)")
    ap.add_argument("--kv-budget-mb", type=int, default=None, help="KV cache memory (continuous engine)")
    ap.add_argument("--batch-size", type=int, default=None, help="rows per batch (static engine)")
    ap.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    ap.add_argument("--workers", type=int, default=None, help="decoding loops (continuous engine; default: threads)")
    ap.add_argument("--device", default=None)
    ap.add_argument("--dtype", default=None)
    ap.add_argument("--show", type=int, default=1, help="print this many generated texts")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # this checkout's biaslab

    import subprocess

    import torch

    from biaslab.models.base import GenerateRequest, GenerationParams
    from biaslab.models.registry import load_model

    def uptime() -> str:
        out = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
        return out[out.index("load average"):] if "load average" in out else out

    engines = ["continuous", "static"] if args.engine == "both" else [args.engine]
    params = GenerationParams(temperature=args.temperature, top_p=args.top_p, max_tokens=args.max_tokens)
    requests = [GenerateRequest.chat(jobs_prompt(JOBS[i % len(JOBS)]), params=params, repetition=i // len(JOBS))
                for i in range(args.requests)]
    backends = {}
    t0 = time.perf_counter()
    for engine in engines:  # load before the clock starts: the lazy backend would load at the first request
        be = load_model(args.model, engine=engine, max_slots=args.max_slots, kv_budget_mb=args.kv_budget_mb,
                        batch_size=args.batch_size, threads=args.threads, workers=args.workers, device=args.device,
                        dtype=args.dtype)
        be = be.backend() if hasattr(be, "backend") else be
        be.generate([GenerateRequest.chat("Hi", params=GenerationParams(max_tokens=2))])  # warm: engine, kernels
        backends[engine] = be
    load_s = time.perf_counter() - t0
    print(f"model {args.model}, {len(requests)} requests x max {args.max_tokens} new tokens, "
          f"torch threads {torch.get_num_threads()}; load + warm-up {load_s:.1f} s (not counted), "
          f"peak RSS after load {peak_rss_mb():.0f} MB")
    print(f"{'round':>5} {'engine':<11} {'new tokens':>10} {'seconds':>8} {'tokens/s':>9}  load")
    totals: dict[str, list[float]] = {e: [0.0, 0.0] for e in engines}
    results = []
    for r in range(args.rounds):  # alternated: a busy spell of the machine hits every engine
        for engine, be in backends.items():
            t0 = time.perf_counter()
            results = be.generate(requests)
            secs = time.perf_counter() - t0
            n = sum(x.n_new_tokens or 0 for x in results)
            totals[engine][0] += n
            totals[engine][1] += secs
            print(f"{r + 1:>5} {engine:<11} {n:>10} {secs:>8.1f} {n / secs:>9.1f}  {uptime()}", flush=True)
    rates = {e: n / s for e, (n, s) in totals.items()}
    for e, rate in rates.items():
        print(f"{'all':>5} {e:<11} {int(totals[e][0]):>10} {totals[e][1]:>8.1f} {rate:>9.1f}")
    if len(rates) == 2:
        print(f"engine / static: {rates['continuous'] / rates['static']:.2f}x (tokens/s)")
    print(f"peak RSS {peak_rss_mb():.0f} MB")
    for x in results[: args.show]:
        print("--- sample ---")
        print(x.text[:600])
    return 0


if __name__ == "__main__":
    sys.exit(main())
