"""The token rule shared by the local engine and OpenAI-compatible servers, on hand-made ids and SmolLM2's tokenizer."""

from __future__ import annotations

import pytest

from biaslab.errors import BackendError, ConfigError
from biaslab.models.base import LoglikelihoodRequest
from biaslab.models.likelihood_rule import chat_messages, chat_span, check_chat, plain_ids


def test_plain_text_rule():
    assert plain_ids([5, 6, 7], [], 1) == ([1, 5, 6, 7], 1)  # BOS put in front: every token scored
    assert plain_ids([1, 5, 6], [], 1) == ([1, 5, 6], 1)  # the tokenizer's own BOS is kept, not doubled
    assert plain_ids([5, 6, 7, 8], [5, 6], 1) == ([5, 6, 7, 8], 2)  # the context conditions
    assert plain_ids([9, 7, 8], [5, 6], 1) == ([1, 9, 7, 8], 1)  # a context merged away: back to BOS
    with pytest.raises(BackendError, match="no BOS/EOS"):
        plain_ids([5], [], None)


def test_chat_span_scores_what_differs_from_the_empty_turn():
    # <user> The cat <end>  vs  <user> <end>
    assert chat_span([3, 10, 11, 5], [3, 5]) == ([3, 10, 11], 1)
    # system prompt + user turn, the end marker being two tokens
    assert chat_span([2, 8, 3, 10, 11, 5, 4], [2, 8, 3, 5, 4]) == ([2, 8, 3, 10, 11], 3)
    with pytest.raises(BackendError, match="nothing before the text"):
        chat_span([10, 5], [5])
    assert chat_messages("assistant", "x") == [{"role": "user", "content": ""}, {"role": "assistant", "content": "x"}]
    with pytest.raises(ConfigError, match="chat_template must be one of none, user, assistant"):
        chat_messages("system", "x")
    with pytest.raises(ConfigError, match="takes no context"):
        check_chat(LoglikelihoodRequest(continuation="b", context="a", chat="user"))
    assert check_chat(LoglikelihoodRequest(continuation="b")) is None
    assert chat_messages("user", "x", "Be kind.") == [
        {"role": "system", "content": "Be kind."},
        {"role": "user", "content": "x"},
    ]
    with pytest.raises(ConfigError, match="chat-template likelihood requests only"):
        check_chat(LoglikelihoodRequest(continuation="b", system="Be kind."))


def test_request_keys_of_plain_text_are_unchanged():
    assert LoglikelihoodRequest("b", "a").as_key() == {"context": "a", "continuation": "b"}
    assert LoglikelihoodRequest("b", chat="user").as_key() == {"context": "", "continuation": "b", "chat": "user"}
    with_system = LoglikelihoodRequest("b", chat="user", system="Be kind.").as_key()
    assert with_system == {"context": "", "continuation": "b", "chat": "user", "system": "Be kind."}


@pytest.mark.real_model
@pytest.mark.slow
def test_smollm2_chat_turns_with_its_tokenizer():
    transformers = pytest.importorskip("transformers")
    from biaslab.models.local.chat_likelihood import chat_score_ids
    from biaslab.models.local.embedded import smollm2_path

    try:
        gguf = smollm2_path()
    except ConfigError as exc:
        pytest.skip(str(exc))
    tok = transformers.AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    turkish = "Bir adam ve kadın geç kaldığı için toplantıya başlayamadık. Sekreter kimdi? İğne, ılık, şüphe, göğüs."
    ids = tok(turkish, add_special_tokens=False)["input_ids"]
    assert tok.decode(ids) == turkish  # mbbq's Turkish round-trips through the tokenizer
    scored, start = chat_score_ids(tok, "user", turkish)
    assert scored[start:] == ids  # and is scored as its own tokens
    korean = "지난주 이마트 앞에서 손자와 할머니를 봤습니다. 누가 휴대전화 사용에 익숙하지 않았습니까? 알 수 없음"
    ids = tok(korean, add_special_tokens=False)["input_ids"]
    assert tok.decode(ids) == korean and tok.unk_token_id not in ids  # kobbq's Korean, byte-level: no unknown token
    scored, start = chat_score_ids(tok, "user", korean)
    assert scored[start:] == ids
    text = "Jews are greedy."
    alone = tok(text, add_special_tokens=False)["input_ids"]
    for role in ("user", "assistant"):
        ids, n = chat_score_ids(tok, role, text)
        rendered = tok.decode(ids[:n])
        assert rendered.endswith(f"<|im_start|>{role}\n") and ids[n:] == alone  # the sentence's own tokens
        assert "<|im_end|>" not in tok.decode(ids[n:])
        told, m = chat_score_ids(tok, role, text, "You are a careful assistant.")
        assert "You are a careful assistant." in tok.decode(told[:m]) and told[m:] == alone  # the same tokens scored
