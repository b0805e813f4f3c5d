"""Whether a probe can run here, and why not (``biaslab probes``: a few words per probe, every reason with --json).

A probe can run here when it needs no file of the user's (an ``input_option`` such as ``-P pairs=FILE``), its
registered data files are in ``BIASLAB_DATA_DIR`` or the download cache, the optional packages it declares
(``Probe.requires``) are installed, and a model backend that gives its kind of answer is installed: log-likelihoods
come from local models (torch and transformers) or vLLM; generated text from those or a hosted API's client.
Nothing is imported to find out (packages are looked up, not loaded) and nothing is downloaded.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from biaslab.errors import BiaslabError

LOCAL_PACKAGES = ("torch", "transformers")  # the hf/ and gguf/ backends and the embedded models
LIKELIHOOD_BACKENDS = ("local", "vllm")


def installed(module: str) -> bool:
    """Whether ``module`` can be imported here (looked up, not imported)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def backends_here() -> dict[str, bool]:
    """Which model backends have their packages installed: the pip extra's name -> installed."""
    return {
        "local": all(installed(m) for m in LOCAL_PACKAGES),
        "vllm": installed("vllm"),
        "openai": installed("openai"),
        "anthropic": installed("anthropic"),
    }


def _option_reason(cls: Any) -> dict[str, Any]:
    key = cls.input_option
    option = cls.options.get(key)
    flag = option.alias if option is not None and option.alias else None
    how = f"biaslab run {cls.name} -P {key}=FILE" + (f" (or {flag} FILE)" if flag else "")
    return {
        "what": "option",
        "short": f"-P {key}=FILE",
        "option": key,
        "flag": flag,
        "detail": f"it needs a file of yours: {how}",
    }


def _data_reason(files: list[str]) -> dict[str, Any] | None:
    from biaslab.data.availability import data_dir, fetch_command, missing, missing_message
    from biaslab.data.registry import FILES, cache_dir

    gone = missing(files)
    if not gone:
        return None
    pinned = [f for f in gone if f in FILES and FILES[f].sha256 is not None]
    root = data_dir()
    return {
        "what": "data",
        "short": "data missing",
        "files": gone,
        "fetchable": pinned,  # those `fetch` downloads (the others are the user's to put in BIASLAB_DATA_DIR)
        "looked_in": [str(root) if root is not None else None, str(cache_dir() / "data")],
        "fetch": fetch_command(pinned) if pinned else None,
        "detail": missing_message(files),
    }


def _package_reasons(cls: Any, likelihood: bool, backends: dict[str, bool]) -> list[dict[str, Any]]:
    out = []
    absent = [m for m in cls.requires if not installed(m)]
    if absent:
        install = "pip install " + " ".join(cls.requires[m] for m in absent)
        out.append(
            {
                "what": "packages",
                "short": f"needs {absent[0]}",
                "packages": absent,
                "install": install,
                "detail": f"it needs {', '.join(absent)}, not installed here: {install}",
            }
        )
    if likelihood and not any(backends[b] for b in LIKELIHOOD_BACKENDS):
        absent = [m for m in LOCAL_PACKAGES if not installed(m)]
        out.append(
            {
                "what": "backend",
                "short": f"needs {absent[0] if absent else 'torch'}",
                "packages": absent,
                "install": "pip install 'biaslab[local]'",
                "detail": "it scores log-likelihoods, which only a local model gives (pip install 'biaslab[local]') "
                "or vLLM (pip install 'biaslab[vllm]')",
            }
        )
    elif not any(backends.values()):
        out.append(
            {
                "what": "backend",
                "short": "no backend",
                "packages": list(LOCAL_PACKAGES),
                "install": "pip install 'biaslab[local]'",
                "detail": "no model backend is installed: pip install 'biaslab[local]' for local models, "
                "'biaslab[openai]' or 'biaslab[anthropic]' for hosted ones",
            }
        )
    return out


def readiness(name: str, backends: dict[str, bool] | None = None) -> dict[str, Any]:
    """``{"can_run", "why_not", "reasons"}`` of the probe ``name`` with its default options: ``why_not`` is the
    first reason in a few words (None when it can run); each reason has ``what`` (option, data, packages, backend,
    probe), ``short``, ``detail`` (a sentence that says what to do) and its facts (``files``, ``fetchable``,
    ``looked_in`` and ``fetch`` for data, ``option`` and ``flag``, ``packages`` and ``install``)."""
    from biaslab.app.resolve import resolve_probe
    from biaslab.probing.likelihood import LikelihoodProbe

    backends = backends_here() if backends is None else backends
    resolved = resolve_probe(name)  # looked up once
    cls = resolved.cls
    reasons: list[dict[str, Any]] = []
    files, likelihood = list(cls.data_files), issubclass(cls, LikelihoodProbe)
    if cls.input_option is not None:
        reasons.append(_option_reason(cls))
    else:
        try:
            probe = resolved.build()
        except BiaslabError as exc:  # an option's default it rejects, data it reads when built
            reasons.append({"what": "probe", "short": "cannot be built", "detail": str(exc)})
        else:
            files, likelihood = probe.needed_data(), isinstance(probe, LikelihoodProbe)
    data = _data_reason(files)
    reasons += ([data] if data else []) + _package_reasons(cls, likelihood, backends)
    return {"can_run": not reasons, "why_not": reasons[0]["short"] if reasons else None, "reasons": reasons}
