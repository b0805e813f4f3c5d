"""A mistyped model spec names the closest valid one."""

from __future__ import annotations

import pytest

from biaslab.errors import ConfigError
from biaslab.models.registry import closest_spec, split_spec


@pytest.mark.parametrize(
    "typed, meant",
    [
        ("smollm3", "smollm2"),
        ("SmolLM2", "smollm2"),
        ("gemma3", "gemma3-270m"),
        ("gemma-270m", "gemma3-270m"),
        ("hg/gpt2", "hf/gpt2"),
        ("hf:gpt2", "hf/gpt2"),
        ("openai:gpt-4o-mini", "openai/gpt-4o-mini"),
        ("gguff/model.gguf", "gguf/model.gguf"),
        ("scripted", "scripted/<name>"),
        ("gpt-4o-mini", "openai/gpt-4o-mini"),
        ("o3-mini", "openai/o3-mini"),
        ("claude-3-5-haiku-latest", "anthropic/claude-3-5-haiku-latest"),
        ("models/tiny.gguf", "gguf/models/tiny.gguf"),
    ],
)
def test_the_closest_alias_or_prefix_is_suggested(typed, meant):
    assert closest_spec(typed) == meant
    with pytest.raises(ConfigError) as err:
        split_spec(typed)
    assert f"unknown model spec {typed!r} (did you mean {meant!r}?)" in str(err.value)
    assert "smollm2" in str(err.value) and "hf/<name>" in str(err.value)  # and the full list


@pytest.mark.parametrize("typed", ["nothing-like-it", "zz:model"])
def test_no_suggestion_when_nothing_is_close(typed):
    assert closest_spec(typed) is None
    with pytest.raises(ConfigError, match="use one of") as err:
        split_spec(typed)
    assert "did you mean" not in str(err.value)


@pytest.mark.parametrize("hub_id", ["meta-llama/Llama-3.1-8B", "openai-community/gpt2", "Qwen/Qwen2.5-0.5B"])
def test_a_bare_hub_id_is_offered_with_the_hf_and_vllm_prefixes(hub_id):
    assert closest_spec(hub_id) == f"hf/{hub_id}"
    with pytest.raises(ConfigError) as err:
        split_spec(hub_id)
    assert f"(did you mean 'hf/{hub_id}', or 'vllm/{hub_id}' to run it with vLLM?)" in str(err.value)
