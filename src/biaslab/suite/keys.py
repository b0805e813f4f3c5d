"""What a suite's run depends on (:func:`run_key`): a later suite reuses a finished run whose key is the same."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from biaslab.probing.config import RunConfig


def run_key(
    probe: Any,
    identity: dict[str, Any],
    limit: int | None,
    options: dict[str, Any] | None = None,
    settings: RunConfig | None = None,
) -> str:
    """What a finished run depends on: when an earlier suite wrote a run with the same key, it is reused. A set's
    ``options`` change the probe's parameters too; they are in the key besides (where there are any); so do the
    ``settings`` (decoding parameters, system prompt), through the parameters."""
    from biaslab import __version__
    from biaslab.probing.config import RunContext
    from biaslab.probing.system_prompt import run_parameters

    parameters = run_parameters(probe, replace(settings or RunConfig(), limit=limit), RunContext(model=identity))
    return json.dumps(
        {
            "model": identity,
            "probe": probe.name,
            "version": probe.version,
            "limit": limit,
            "parameters": parameters,
            "data": list(probe.data_files),
            "biaslab": __version__,
        }
        | ({"options": options} if options else {}),
        sort_keys=True,
        default=str,
    )
