"""Model load time in a fresh process: ``load_model(spec).backend()``, interpreter and torch import included.

    python bench/bench_load.py                       # smollm2, 5 fresh processes
    python bench/bench_load.py smollm2 gemma3-270m --runs 3
    python bench/bench_load.py gguf/path/to/model.gguf --convert   # also time the first (converting) load

Each run is a new Python process that imports biaslab, loads the model and exits; the time is the
wall time of the whole process, seen from here (so interpreter start-up and every import count),
with its CPU time (user + sys) beside it. The first load of a GGUF file converts it into the cache
(``biaslab cache``); that happens before the timed runs (or is timed alone with ``--convert``, after
clearing the model's conversion). Specs alternate run by run, so a busy spell of the machine hits all.
``uptime`` is printed with every run: on a shared machine, compare CPU time as well as wall time.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

CODE = ("import sys; from biaslab.models.registry import load_model; "
        "b = load_model(sys.argv[1]).backend(); "
        "print('heavy:', sorted({m.split('.')[0] for m in sys.modules} & {'transformers', 'gguf'}))")


def uptime() -> str:
    try:
        out = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
        return out[out.index("load average"):] if "load average" in out else out
    except OSError:
        return "uptime unavailable"


def one_load(spec: str) -> tuple[float, float, str]:
    """(wall s, cpu s, what it imported) of a fresh process loading ``spec``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", CODE, spec], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"loading {spec} failed:\n{proc.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    heavy = next((ln for ln in proc.stdout.splitlines() if ln.startswith("heavy:")), "")
    return wall, cpu, heavy.removeprefix("heavy: ")


def clear_conversion(spec: str) -> None:
    from biaslab.models.local import conversion
    from biaslab.models.local.identity import gguf_source
    from biaslab.models.registry import split_spec

    prefix, name = split_spec(spec)
    if prefix != "gguf":
        return
    source, gguf_file = gguf_source(name, None)
    entry = conversion.find(conversion.source_sha256(conversion.local_gguf(source, gguf_file)))
    if entry is not None:
        conversion.remove(entry)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("specs", nargs="*", default=["smollm2"])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--convert", action="store_true", help="clear each conversion first and time the converting load")
    args = ap.parse_args(argv)
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    os.environ["PYTHONPATH"] = os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    sys.path.insert(0, src)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, cache: "
          f"{os.environ.get('BIASLAB_CACHE_DIR', '(platform cache dir)')}")
    for spec in args.specs:
        if args.convert:
            clear_conversion(spec)
        wall, cpu, _ = one_load(spec)  # converts if needed
        print(f"{'first load (converts)' if args.convert else 'warm-up load'} of {spec}: {wall:.1f} s wall, "
              f"{cpu:.1f} s CPU  [{uptime()}]")
    rows: dict[str, list[tuple[float, float]]] = {s: [] for s in args.specs}
    print(f"\n{'spec':<16} {'run':>3} {'wall s':>7} {'CPU s':>6}  imports  load")
    for r in range(args.runs):
        for spec in args.specs:
            wall, cpu, heavy = one_load(spec)
            rows[spec].append((wall, cpu))
            print(f"{spec[:16]:<16} {r + 1:>3} {wall:>7.2f} {cpu:>6.2f}  {heavy:<7}  {uptime()}", flush=True)
    print(f"\n{'spec':<16} {'median wall s':>13} {'min wall s':>10} {'median CPU s':>12}")
    for spec, vals in rows.items():
        print(f"{spec[:16]:<16} {statistics.median(v[0] for v in vals):>13.2f} {min(v[0] for v in vals):>10.2f} "
              f"{statistics.median(v[1] for v in vals):>12.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
