"""Load and fault benchmark of `biaslab annotate serve`: 20 annotators x 500 submissions on loopback.

    python bench/bench_annotate.py [--annotators 20] [--per-annotator 500] [--kills 5] [--only plain|kill]

For each mode it builds a fresh project (2,000 synthetic texts, 4,000 designed 4-tuples, 3
annotations per tuple, cap 12.5% = 500 tuples per annotator), starts the server as a child
process on 127.0.0.1, and runs one thread per annotator doing GET /api/next -> POST
/api/annotations with a fresh submission_id each time. In the `kill` mode the server is SIGKILLed
and restarted each time another N/(kills+1) submissions have been acknowledged; clients retry the
same request (same submission_id) until it is answered. Afterwards the database is checked against
every acknowledgement the clients received: lost, duplicated, per-tuple count, cap, integrity.

Prints throughput (acknowledged submissions per second of wall time, restarts included), the
latency of a POST /api/annotations attempt and of GET /api/next (p50/p95/max), retries and the
checks. Only loopback is used; every loop is bounded by a deadline.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # the load generator lives with the tests: tests/annotate/loadgen.py
    sys.path.insert(0, str(REPO))


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def build(folder: Path, annotators: int, per_annotator: int) -> tuple[Path, dict[str, str], int]:
    from biaslab.annotate.auth import add_annotator
    from biaslab.annotate.db import Database
    from biaslab.annotate.project import init_project
    from biaslab.bws.design import design_tuples

    n_items = max(200, annotators * per_annotator // 5)           # 2,000 for 20 x 500
    ids = [str(i) for i in range(1, n_items + 1)]
    items = folder / "items.csv"
    items.write_text("id,text\n" + "".join(f"{i},Statement {i}: someone did something on day {i}.\n" for i in ids))
    tuples = folder / "tuples.csv"
    designed = design_tuples(ids, seed=0, attempts=5)
    tuples.write_text("Item1,Item2,Item3,Item4\n" + "".join(",".join(t) + "\n" for t in designed))
    cap = per_annotator / len(designed)
    project = folder / "project"
    summary = init_project(project, items, tuples_file=tuples, per_tuple=3, cap=cap)
    db = Database(project)
    with ThreadPoolExecutor(4) as pool:
        names = [f"ann{k:02d}" for k in range(annotators)]
        passwords = dict(zip(names, pool.map(lambda n: add_annotator(db, n), names)))
    db.close()
    return project, passwords, summary["cap_count"]


def run_mode(mode: str, args) -> dict:
    from tests.annotate.loadgen import ServerProcess, run_load, verify_store

    with tempfile.TemporaryDirectory(prefix=f"bench-annotate-{mode}-") as tmp:
        project, passwords, cap_count = build(Path(tmp), args.annotators, args.per_annotator)
        total = args.annotators * args.per_annotator
        kills = args.kills if mode == "kill" else 0
        server = ServerProcess(project).start()
        try:
            runs, info = run_load(server, passwords, args.per_annotator, kills=kills,
                                  kill_every=max(total // (kills + 1), 1), deadline_s=args.deadline)
        finally:
            server.stop()
        checks = verify_store(project, runs, per_tuple=3, cap_count=cap_count)
    posts = [x for r in runs for x in r.latencies]
    nexts = [x for r in runs for x in r.next_latencies]
    acked = checks["acknowledged"]
    return {"mode": mode, "kills": info["kills"], "elapsed": info["elapsed"], "downtime": info["downtime"],
            "acknowledged": acked, "throughput": acked / info["elapsed"],
            "post_p50": _pct(posts, 0.5), "post_p95": _pct(posts, 0.95), "post_max": max(posts, default=float("nan")),
            "next_p50": _pct(nexts, 0.5), "next_p95": _pct(nexts, 0.95),
            "retries": sum(r.retries for r in runs), "errors": [e for r in runs for e in r.errors][:5],
            "mean_post": statistics.fmean(posts) if posts else float("nan"), **checks}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotators", type=int, default=20)
    parser.add_argument("--per-annotator", type=int, default=500)
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--only", choices=("plain", "kill"))
    parser.add_argument("--deadline", type=float, default=1800.0, help="seconds before clients give up")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    ok = True
    for mode in ([args.only] if args.only else ["plain", "kill"]):
        t = time.perf_counter()
        r = run_mode(mode, args)
        print(f"\n== {mode}: {args.annotators} annotators x {args.per_annotator} submissions, {r['kills']} SIGKILLs "
              f"(restarts took {r['downtime']:.1f} s) -- {time.perf_counter() - t:.0f} s with setup")
        print(f"acknowledged {r['acknowledged']} in {r['elapsed']:.1f} s: {r['throughput']:.1f} submissions/s")
        print(f"POST /api/annotations p50 {1000 * r['post_p50']:.1f} ms, p95 {1000 * r['post_p95']:.1f} ms, "
              f"max {1000 * r['post_max']:.0f} ms; GET /api/next p50 {1000 * r['next_p50']:.1f} ms, "
              f"p95 {1000 * r['next_p95']:.1f} ms; client retries {r['retries']}")
        print(f"stored {r['stored']}, lost {r['lost']}, duplicated {r['duplicated']}, stored unacknowledged "
              f"{r['unacknowledged_stored']}, over per-tuple {r['over_per_tuple']}, over cap {r['over_cap']}, "
              f"counter drift {r['counter_drift']}, integrity {r['integrity']}")
        if r["errors"]:
            print("client errors:", *r["errors"], sep="\n  ")
        ok &= (r["lost"] == 0 and r["duplicated"] == 0 and r["integrity"] == "ok" and not r["errors"]
               and r["acknowledged"] == args.annotators * args.per_annotator)
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
