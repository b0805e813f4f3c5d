"""Generation throughput and peak memory of a local model on JobsLum-style prompts.

    python bench/bench_generate.py                      # smollm2, 64 requests, 300 tokens
    python bench/bench_generate.py --requests 128 --max-slots 64 --kv-budget-mb 1000
    python bench/bench_generate.py --engine static --batch-size 32   # transformers' generate

Prints the number of requests, new tokens, generation wall time, aggregate new tokens/s and
the process's peak RSS (resource.getrusage, which includes loading the model). Loading time
is reported separately and not counted in tokens/s. Run it by hand on an otherwise idle
machine: other processes competing for the cores distort the numbers a lot.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

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
    ap.add_argument("--engine", choices=["auto", "continuous", "static"], default=None)
    ap.add_argument("--max-slots", type=int, default=None, help="concurrent requests (continuous engine)")
    ap.add_argument("--kv-budget-mb", type=int, default=None, help="KV cache memory (continuous engine)")
    ap.add_argument("--batch-size", type=int, default=None, help="rows per batch (static engine)")
    ap.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    ap.add_argument("--workers", type=int, default=None, help="decoding loops (continuous engine; default: threads)")
    ap.add_argument("--device", default=None)
    ap.add_argument("--dtype", default=None)
    ap.add_argument("--show", type=int, default=1, help="print this many generated texts")
    args = ap.parse_args(argv)

    from biaslab.models.base import GenerateRequest, GenerationParams
    from biaslab.models.registry import load_model

    t0 = time.perf_counter()
    backend = load_model(args.model, engine=args.engine, max_slots=args.max_slots, kv_budget_mb=args.kv_budget_mb,
                         batch_size=args.batch_size, threads=args.threads, workers=args.workers, device=args.device,
                         dtype=args.dtype)
    load_s = time.perf_counter() - t0
    rss_after_load = peak_rss_mb()
    params = GenerationParams(temperature=args.temperature, top_p=args.top_p, max_tokens=args.max_tokens)
    requests = [GenerateRequest.chat(jobs_prompt(JOBS[i % len(JOBS)]), params=params, repetition=i // len(JOBS))
                for i in range(args.requests)]
    done = [0]

    def on_result(i: int, result: object) -> None:
        done[0] += 1

    t0 = time.perf_counter()
    results = backend.generate(requests, on_result=on_result)
    gen_s = time.perf_counter() - t0
    new_tokens = sum(r.n_new_tokens or 0 for r in results)
    stopped = sum(r.finish_reason == "stop" for r in results)
    import torch

    print(f"model          {args.model} {backend.identity().get('model')}")
    print(f"torch threads  {torch.get_num_threads()}")
    print(f"requests       {len(requests)} (on_result calls: {done[0]}; {stopped} stopped, "
          f"{len(results) - stopped} hit max_tokens={args.max_tokens})")
    print(f"new tokens     {new_tokens}")
    print(f"load time      {load_s:.1f} s (peak RSS after load {rss_after_load:.0f} MB)")
    print(f"generate time  {gen_s:.1f} s")
    print(f"throughput     {new_tokens / gen_s:.1f} new tokens/s")
    print(f"peak RSS       {peak_rss_mb():.0f} MB")
    stats = getattr(backend, "engine_stats", dict)()
    if stats:
        print("engine         " + ", ".join(f"{k}={v:.1f}" for k, v in sorted(stats.items())))
    for r in results[: args.show]:
        print("--- sample ---")
        print(r.text[:600])
    return 0


if __name__ == "__main__":
    sys.exit(main())
