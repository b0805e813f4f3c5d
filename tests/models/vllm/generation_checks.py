"""The generation checks of ``vllm/<dir>`` in process, with one vLLM engine: run in the vLLM venv by
:func:`tests.models.vllm.test_inprocess.test_generation_is_reproducible_and_the_judge_probe_runs` (each engine
start costs about a minute of CPU on 2 cores, so the three runs share one).

    python generation_checks.py SPEC CACHE OUT

1. ``jobs-lum`` on 3 occupations (48 new tokens), its requests batched, written to ``OUT/jobs``;
2. the same requests again straight to the engine, one at a time (no cache): one sequence in flight;
3. ``fsb-judge`` on 12 texts (greedy), written to ``OUT/judge``.

Prints ``{item_id: text}`` of step 2 as JSON on its last line. The model options are those of the test's other
runs: eager, a 2,048-token context, vLLM in this process (with ``VLLM_ENABLE_V1_MULTIPROCESSING=0``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

OPTIONS = {"enforce_eager": "true", "max_model_len": "2048", "distributed_executor_backend": "uni"}


def main(spec: str, cache: str, out: str) -> None:
    from biaslab.models.base import GenerationParams
    from biaslab.models.open import open_cached_model
    from biaslab.probes import create_probe
    from biaslab.probing.config import RunConfig
    from biaslab.probing.results import write_run
    from biaslab.probing.runner import plan_run, run_probe

    cached = open_cached_model(spec, cache_dir=cache, model_options=OPTIONS)
    try:
        jobs = create_probe("jobs-lum")
        cfg = RunConfig(limit=3, params=GenerationParams(max_tokens=48))
        items = jobs.load_items()
        results, attempts = run_probe(jobs, cached, cfg, items=items)
        write_run(Path(out) / "jobs", jobs, results, attempts)
        alone = {}
        for planned in plan_run(jobs, jobs.select_items(items, cfg), cfg):
            [answer] = cached.backend.generate([planned.request])
            alone[planned.item.id] = answer.text
        judge = create_probe("fsb-judge")
        results, attempts = run_probe(judge, cached, RunConfig(limit=12))
        write_run(Path(out) / "judge", judge, results, attempts)
    finally:
        cached.close()
    print(json.dumps(alone))


if __name__ == "__main__":
    main(*sys.argv[1:4])
