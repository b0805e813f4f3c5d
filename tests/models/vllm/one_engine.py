"""The in-process checks of ``vllm/<dir>`` after the killed run, on one vLLM engine: run in the vLLM venv by
:func:`tests.models.vllm.test_inprocess.test_a_killed_run_resumes_and_scores_generates_and_judges_on_one_engine`
(each engine start costs about a minute of CPU on 2 cores, so the four steps share one).

    python one_engine.py SPEC CACHE OUT N_PAIRS

1. ``winosemitism`` on N_PAIRS pairs, resumed from the killed run's answers in CACHE, written to ``OUT/vllm``;
2. ``jobs-lum`` on 3 occupations (48 new tokens), its requests batched, written to ``OUT/jobs``;
3. the same requests again straight to the engine, one at a time (no cache): one sequence in flight;
4. ``fsb-judge`` on 12 texts (greedy), written to ``OUT/judge``.

Prints ``{item_id: text}`` of step 3 as JSON on its last line. The model options are those of the killed run but
for ``max_num_seqs`` (not part of the identity): eager, the KV cache and context biaslab sizes, vLLM in this
process (with ``VLLM_ENABLE_V1_MULTIPROCESSING=0``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

OPTIONS = {"enforce_eager": "true", "distributed_executor_backend": "uni"}


def main(spec: str, cache: str, out: str, n_pairs: str) -> None:
    from biaslab.app.results import write_run
    from biaslab.models.base import GenerationParams
    from biaslab.models.open import open_cached_model
    from biaslab.probes import create_probe
    from biaslab.probing.config import RunConfig
    from biaslab.probing.runner import plan_run, run_probe

    cached = open_cached_model(spec, cache_dir=cache, model_options=OPTIONS)
    try:
        for name, cfg in (
            ("winosemitism", RunConfig(limit=int(n_pairs))),
            ("jobs-lum", RunConfig(limit=3, params=GenerationParams(max_tokens=48))),
            ("fsb-judge", RunConfig(limit=12)),
        ):
            probe = create_probe(name)
            items = probe.load_items()
            results, attempts = run_probe(probe, cached, cfg, items=items)
            write_run(
                Path(out) / {"winosemitism": "vllm", "jobs-lum": "jobs"}.get(name, "judge"), probe, results, attempts
            )
            if name == "jobs-lum":
                alone = {}
                for planned in plan_run(probe, probe.select_items(items, cfg), cfg):
                    [answer] = cached.backend.generate([planned.request])
                    alone[planned.item.id] = answer.text
    finally:
        cached.close()
    print(json.dumps(alone))


if __name__ == "__main__":
    main(*sys.argv[1:5])
