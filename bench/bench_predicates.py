"""Time PCS/SCS for 1,000 human x 1,000 model predicates with all-MiniLM-L6-v2 (target: < 30 s).

    python bench/bench_predicates.py [--n 1000] [--embedding all-minilm-l6-v2] [--groups 1]

Predicates are synthetic and distinct (verb x object x modifier, seeded). With ``--groups 1``
(the default) every human predicate is compared with all 1,000 model predicates (a 1,000 x
1,000 cosine matrix: the worst case of ``--match-by group``). Prints the model load time, then
the timed part: embedding every phrase and sentence, the best matches, exact match, and the
Table 2 metrics with their cluster bootstrap (1,000 resamples). Also prints ``uptime``: the
machine may be shared.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import time

TARGET_S = 30.0
VERBS = ["are", "control", "hate", "love", "avoid", "fear", "own", "run", "join", "mock", "ignore", "praise",
         "distrust", "exploit", "support", "oppose", "study", "teach", "fund", "sell"]
OBJECTS = ["money", "the media", "banks", "children", "their neighbours", "holidays", "politics", "science", "music",
           "food", "the news", "technology", "sports", "religion", "work", "cars", "books", "art", "the law",
           "their families", "old traditions", "new ideas", "big cities", "small towns", "strangers"]
MODIFIERS = ["", " all the time", " in secret", " too much", " for profit", " without reason", " at any cost",
             " on purpose", " every day", " loudly", " quietly", " openly", " badly", " well", " as a group"]


def predicates(n: int, rng: random.Random) -> list[str]:
    pool = [f"{v} {o}{m}" for v in VERBS for o in OBJECTS for m in MODIFIERS]
    return rng.sample(pool, n)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--groups", type=int, default=1)
    ap.add_argument("--embedding", default="all-minilm-l6-v2")
    args = ap.parse_args()

    from biaslab.wino.predicates.embeddings import Embedder
    from biaslab.wino.predicates.formats import PredicateRow
    from biaslab.wino.predicates.quality import match_predicates, model_exact_rows, quality_metrics

    rng = random.Random(0)
    texts = predicates(2 * args.n, rng)
    groups = [f"g{i % args.groups}" for i in range(args.n)]
    human = [PredicateRow(f"h{i}", groups[i], texts[i]) for i in range(args.n)]
    model = [PredicateRow(f"m{i}", groups[i], texts[args.n + i]) for i in range(args.n)]
    t0 = time.perf_counter()
    emb = Embedder(args.embedding)
    emb.embed(["warm up"])
    load = time.perf_counter() - t0
    t0, c0 = time.perf_counter(), time.process_time()
    per = match_predicates(human, model, emb, match_by="group")
    metrics, _ = quality_metrics(per, model_exact_rows(human, model, "group"), match_by="group")
    took, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"{args.embedding}: model load {load:.1f} s")
    print(f"PCS/SCS {args.n} human x {args.n} model predicates ({args.groups} group(s)): {took:.1f} s "
          f"(target < {TARGET_S:.0f} s; CPU time of all threads {cpu:.1f} s) -> PCS {metrics['pcs']['value']:.3f}, "
          f"SCS {metrics['scs']['value']:.3f}")
    print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    return 0 if took < TARGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
