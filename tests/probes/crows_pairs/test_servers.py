"""crows-pairs, bbq and winogender over an OpenAI-compatible server (the exact path: token ids from the
server's /tokenize sent back as the prompt, scored with prompt_logprobs)."""

from __future__ import annotations

import math

import pytest

from tests.conftest import requires_data
from tests.models.openai.openai_test_server import SPECIAL_IDS, OpenAITestServer, token_text
from tests.probes.paired_sentences.test_probe_run import attempts, biaslab

pytestmark = requires_data


@pytest.mark.slow
@pytest.mark.parametrize("probe", ["crows-pairs", "bbq", "winogender"])
def test_probe_runs_over_an_openai_compatible_server(tmp_path, probe):
    srv = OpenAITestServer(add_bos=True).start()
    try:
        out = tmp_path / "run"
        biaslab(
            "run",
            probe,
            "--model",
            "openai/test-model",
            "--base-url",
            srv.base_url,
            "--limit",
            "6",
            "--out",
            out,
            "-q",
            cache=tmp_path / "c",
        )
        rows = attempts(out)
        scored = [b for b in srv.stats.bodies if "prompt_logprobs" in b]
        assert len(rows) == 6 and scored
        assert all(isinstance(b["prompt"], list) and all(isinstance(t, int) for t in b["prompt"]) for b in scored)
        if probe == "bbq":  # context + answer: the context's tokens are not scored
            special = set(SPECIAL_IDS.values())
            sent = {"".join(token_text(t) for t in b["prompt"] if t not in special) for b in scored}
            assert all(r["prompt"] + " " + r["text"] in sent for r in rows)
            for r in rows:
                assert r["answer"] == max(range(3), key=lambda i: (r["answer_logliks"][i], -i))
        elif probe == "crows-pairs":
            assert all(math.isfinite(r["score_more"]) and r["rule"] == "full-sentence" for r in rows)
        else:
            assert all(abs(r["p_female"] + r["p_male"] + r["p_neutral"] - 1) < 1e-9 for r in rows)
    finally:
        srv.stop()
