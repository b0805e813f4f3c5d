"""The matrix products of one decoding step, by weight layout and kernel: why one sequence decodes as fast as it does.

    python bench/bench_products.py                 # SmolLM2-135M's shapes, 1 thread
    python bench/bench_products.py --threads 2     # (run with OMP_WAIT_POLICY=PASSIVE, as biaslab sets it, or not)
    python bench/bench_products.py --hidden 960 --intermediate 2560 --layers 32   # SmolLM2-360M's shapes

Random weights of the model's shapes (q/k/v and gate/up fused as the engine fuses them, the LM head), enough copies
that they are read from memory, not cache. For 1, 2 and 8 rows, the milliseconds of every product of one step with:
oneDNN on plain weights (the engine before the layout; one row there uses a matrix-vector kernel, so the engine
padded to 8 rows), oneDNN on laid-out weights (the engine now), and MKL on transposed weights (``x @ w.T``
stored transposed; its fastest kernel for one row). Then whether each gives a row the same numbers alone as in a
block of 9 rows, and the bandwidth the fastest one-row product reaches (weights bytes / time).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hidden", type=int, default=576)
    ap.add_argument("--intermediate", type=int, default=1536)
    ap.add_argument("--layers", type=int, default=30)
    ap.add_argument("--heads", type=int, default=9)
    ap.add_argument("--kv-heads", type=int, default=3)
    ap.add_argument("--vocab", type=int, default=49152)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--reps", type=int, default=7, help="timings per cell (the median is shown)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

    import torch

    from biaslab.models.local.llama import packing

    if not packing.available():
        raise SystemExit("this torch lacks oneDNN's linear")
    torch.set_num_threads(args.threads)
    h, d = args.hidden, args.hidden // args.heads
    shapes = [((args.heads + 2 * args.kv_heads) * d, h), (h, h), (2 * args.intermediate, h), (h, args.intermediate)]
    g = torch.Generator().manual_seed(0)
    plain = [torch.randn(n, k, generator=g) for _ in range(args.layers) for n, k in shapes]
    plain.append(torch.randn(args.vocab, h, generator=g))
    laid_out = packing.pack(plain, 8, free=1 << 50)
    if not laid_out.packed:
        print(f"note: not laid out ({laid_out.reason})")
    transposed = [w.t().contiguous() for w in plain]
    nbytes = sum(w.numel() * 4 for w in plain)
    kernels = {
        "oneDNN, plain weights": lambda x, i: packing.linear(x, plain[i]),
        "oneDNN, laid out": lambda x, i: packing.linear(x, laid_out.weights[i]),
        "MKL, transposed weights": lambda x, i: torch.mm(x, transposed[i]),
    }

    def step_ms(kernel, rows: int) -> float:
        xs = {w.shape[1]: torch.randn(rows, w.shape[1], generator=g) for w in plain}
        times = []
        for _ in range(args.reps + 1):
            t0 = time.perf_counter()
            for i, w in enumerate(plain):
                kernel(xs[w.shape[1]], i)
            times.append(time.perf_counter() - t0)
        return 1e3 * statistics.median(times[1:])

    print(f"{len(plain)} products, {nbytes / 1e6:.0f} MB of float32 weights, {args.threads} thread(s)")
    print(f"{'kernel':<26}{'1 row':>9}{'2 rows':>9}{'8 rows':>9}  rows alone = in a block")
    best = float("inf")
    with torch.inference_mode():
        for name, kernel in kernels.items():
            cells = [step_ms(kernel, rows) for rows in (1, 2, 8)]
            best = min(best, cells[0])
            x = torch.randn(9, h, generator=g)
            independent = all(torch.equal(kernel(x[k : k + 1], 1), kernel(x, 1)[k : k + 1]) for k in (0, 4))
            print(f"{name:<26}" + "".join(f"{c:>7.1f}ms" for c in cells) + f"  {'yes' if independent else 'no'}")
    print(f"fastest one-row step: {best:.1f} ms, {nbytes / best / 1e6:.1f} GB/s, at most {1e3 / best:.1f} tokens/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
