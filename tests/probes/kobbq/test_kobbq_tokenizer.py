"""The embedded model's tokenizer (SmolLM2, converted once into the model store) round-trips KoBBQ's Korean prompts
and options, token for token back to the same text: what the likelihood mode scores is the Korean text itself."""

from __future__ import annotations

import pytest

from biaslab.errors import ConfigError
from tests.conftest import requires_data


@requires_data
def test_the_embedded_tokenizer_round_trips_a_korean_prompt_and_its_options():
    from biaslab.models.local.conversion import find, source_sha256
    from biaslab.models.local.embedded import smollm2_path
    from biaslab.models.local.light_tokenizer import LightTokenizer
    from biaslab.probes.kobbq.probe import KobbqProbe

    try:
        entry = find(source_sha256(smollm2_path()))
    except ConfigError as exc:
        pytest.skip(str(exc))
    if entry is None or not (entry / "tokenizer.json").is_file():
        pytest.skip("SmolLM2 is not converted in this model store yet (any local run of it converts it)")
    tok = LightTokenizer(entry)
    item = KobbqProbe(prompts="3", permutations=1, categories="age").load_items()[0]
    prompt = item.prompts[0]
    assert "질문: 누가" in prompt.text and prompt.text.endswith("답:")
    for text in [prompt.text, *(f" {o}" for o in prompt.metadata["options"])]:
        ids = tok(text, add_special_tokens=False)["input_ids"]
        assert ids and tok.unk_token_id not in ids
        assert tok.decode(ids) == text
