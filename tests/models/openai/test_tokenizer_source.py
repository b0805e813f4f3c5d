"""A stock vLLM server (no /tokenizer_info): the BOS token from the model files /v1/models names, or the tokenizer
named with -P tokenizer=hf/<dir>; against the loopback test server (the real one: test_vllm_server.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("openai")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from openai_test_server import SPECIAL_IDS, OpenAITestServer, fake_ids, fake_logprob, fake_tokenize, token_id

from biaslab.errors import ConfigError
from biaslab.models.base import LoglikelihoodRequest
from biaslab.models.openai.backend import OpenAIBackend
from biaslab.models.openai.options import parse_tokenizer_option
from biaslab.models.openai.tokenizer_source import CHECK_TEXT

TEXTS = ("nurses are kind", "The cat", "The cat sat on", CHECK_TEXT)
REQUESTS = [
    LoglikelihoodRequest(continuation="nurses are kind"),
    LoglikelihoodRequest(context="The cat", continuation=" sat on"),
    LoglikelihoodRequest(continuation="nurses are kind", chat="user"),
]


def fake_tokenizer_dir(directory: Path, *, off_by_one: str | None = None) -> Path:
    """A Hugging Face tokenizer that splits and numbers tokens as the test server does (``off_by_one``: a token
    it numbers differently, to be the wrong tokenizer)."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers

    vocab = dict(SPECIAL_IDS)
    for text in TEXTS:
        for piece, _ in fake_tokenize(text):
            vocab[piece] = token_id(piece) + (1000 if piece == off_by_one else 0)
    vocab["<unk>"] = 9999
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"\s*\S+"), behavior="isolated")
    tok.add_special_tokens(list(SPECIAL_IDS))
    directory.mkdir(parents=True, exist_ok=True)
    tok.save(str(directory / "tokenizer.json"))
    template = "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    (directory / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "tokenizer_class": "PreTrainedTokenizerFast",
                "bos_token": "<s>",
                "eos_token": "</s>",
                "chat_template": template,
            }
        )
    )
    return directory


def scores(srv: OpenAITestServer, **options) -> list[tuple[list[int], list[float]]]:
    backend = OpenAIBackend("test-model", base_url=srv.base_url, retry_base_delay=0.01, timeout=5.0, **options)
    return [(r.token_ids, r.token_logprobs) for r in backend.loglikelihood(REQUESTS)]


@pytest.fixture
def described(make_server):
    """What a server with --enable-tokenizer-info-endpoint gives: the reference scores."""
    return scores(make_server())


def test_reference_scores(described):
    words = fake_ids("nurses are kind")
    assert described[0] == (words, [fake_logprob(t) for t in ("nurses", " are", " kind")])
    assert described[1][0] == fake_ids(" sat on") and described[2][0] == words


def test_stock_server_bos_from_the_files_v1_models_names(make_server, tmp_path, described):
    model_dir = tmp_path / "served"
    model_dir.mkdir()
    (model_dir / "tokenizer_config.json").write_text(json.dumps({"bos_token": {"content": "<s>"}}))
    srv = make_server(tokenizer_info=False, model_root=str(model_dir))
    assert scores(srv) == described
    assert srv.stats.by_path["/v1/models"] == 1 and srv.stats.by_path["/tokenizer_info"] == 1


def test_stock_server_whose_model_files_are_elsewhere_is_a_one_line_error(make_server):
    srv = make_server(tokenizer_info=False, model_root="/srv/models/not-here")
    with pytest.raises(ConfigError) as err:
        scores(srv)
    msg = str(err.value)
    assert "-P tokenizer=hf/<hub id or dir>" in msg and "--enable-tokenizer-info-endpoint" in msg and "\n" not in msg


@pytest.mark.parametrize("has_tokenize", [True, False])
def test_named_tokenizer(make_server, tmp_path, described, has_tokenize):
    """-P tokenizer=hf/<dir>: tokenized here; the server only scores ids (with or without /tokenize)."""
    srv = make_server(tokenizer_info=False, tokenize=has_tokenize)
    assert scores(srv, tokenizer=f"hf/{fake_tokenizer_dir(tmp_path / 'tok')}") == described
    # the tokenizer was checked against the server's once (where it can be), and /tokenize used for nothing else
    assert srv.stats.by_path["/tokenize"] == 1 and srv.stats.by_path["/tokenizer_info"] == 0


def test_a_tokenizer_that_is_not_the_served_models_is_refused(make_server, tmp_path):
    srv = make_server(tokenizer_info=False)
    wrong = fake_tokenizer_dir(tmp_path / "wrong", off_by_one=" nurse")
    with pytest.raises(ConfigError) as err:
        scores(srv, tokenizer=f"hf/{wrong}")
    assert "tokenizes differently from the model test-model" in str(err.value)
    assert not [b for b in srv.stats.bodies if isinstance(b.get("prompt"), list)]  # nothing was scored


def test_the_option(tmp_path):
    assert parse_tokenizer_option("hf/HuggingFaceTB/SmolLM2-135M") == "HuggingFaceTB/SmolLM2-135M"
    for bad in ("gpt2", "hf/", "openai/x"):
        with pytest.raises(ConfigError, match="tokenizer=hf/<hub id or dir>"):
            parse_tokenizer_option(bad)
    with pytest.raises(ConfigError, match="cannot load the tokenizer hf/"):
        from biaslab.models.openai.tokenizer_source import _load

        _load(str(tmp_path))  # a folder without a tokenizer


def test_p_tokenizer_reaches_the_openai_backend(tmp_path):
    from biaslab.app.resolve import split_model_options
    from biaslab.models.open import open_cached_model

    probe, model = split_model_options("winosemitism", {"tokenizer": "hf/x", "tensor_parallel_size": "2"})
    assert model == {"tokenizer": "hf/x", "tensor_parallel_size": "2"} and probe == {}
    with OpenAITestServer() as srv:
        cached = open_cached_model(
            "openai/test-model",
            base_url=srv.base_url,
            cache_dir=tmp_path,
            model_options={"tokenizer": "hf/some/tokenizer"},
        )
        assert cached.backend._echo.tokens.name == "some/tokenizer"
        cached.close()
        with pytest.raises(
            ConfigError,
            match=r"model options \(tensor_parallel_size\) apply to vllm/ models, "
            r"not openai/test-model",
        ):
            open_cached_model(
                "openai/test-model",
                base_url=srv.base_url,
                cache_dir=tmp_path,
                model_options={"tensor_parallel_size": "2"},
            )
