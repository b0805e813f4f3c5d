"""The declared lowest versions of torch, transformers, tokenizers and vLLM: one list, checked at use."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from biaslab.errors import ConfigError
from biaslab.models import versions
from biaslab.models.versions import MINIMUM, check_installed, release

PYPROJECT = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())


def declared(extra: str) -> dict[str, str]:
    found = {}
    for requirement in PYPROJECT["project"]["optional-dependencies"][extra]:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9.]+)", requirement)
        if match:
            found[match.group(1)] = match.group(2)
    return found


def test_pyproject_declares_the_minimums_the_code_checks():
    local = declared("local")
    assert {k: local[k] for k in ("torch", "transformers", "tokenizers")} == {
        k: MINIMUM[k] for k in ("torch", "transformers", "tokenizers")
    }
    assert declared("vllm") == {"vllm": MINIMUM["vllm"]}


def test_release_numbers():
    assert release("4.56.2") == (4, 56, 2) and release("2.13.0+cpu") == (2, 13, 0)
    assert release("5.0.0rc1") == (5, 0, 0) and release("0.32.0.dev12+g1a2b") == (0, 32, 0)
    assert release("4.56") < release("4.56.0.1") and release("4.9") < release("4.56")


def test_an_older_library_is_a_one_line_error(monkeypatch):
    monkeypatch.setattr(versions, "installed", lambda name: {"transformers": "4.46.3"}.get(name, "99.0"))
    with pytest.raises(ConfigError) as err:
        check_installed("torch", "transformers")
    assert str(err.value) == (
        f"transformers 4.46.3 is installed, but biaslab needs transformers >= "
        f"{MINIMUM['transformers']}; upgrade it: pip install -U "
        f"'transformers>={MINIMUM['transformers']}'"
    )
    check_installed("torch", "tokenizers")  # new enough
    with pytest.raises(ConfigError, match="vllm 0.10.1 is installed"):
        check_installed("vllm", version="0.10.1")
    monkeypatch.setattr(versions, "installed", lambda name: None)
    check_installed("torch", "vllm")  # not installed: the backend's own import error says so


def test_the_installed_ones_pass():
    check_installed("torch", "transformers", "tokenizers")
