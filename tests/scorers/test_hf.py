"""The hf/<dir> scorer on a tiny sequence classifier built and saved in the test (no download)."""

import math

import pytest

from biaslab.errors import ConfigError
from biaslab.scorers import get_scorer

pytestmark = [pytest.mark.real_model]

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
WORDS = ["women", "men", "are", "bad", "good", "drivers", "cooks", "the", "table", "is", "red"]


def save_checkpoint(folder, num_labels=2, id2label=None, seed=0):
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {w: i for i, w in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", *WORDS])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]"
    )
    config = transformers.BertConfig(
        vocab_size=len(vocab),
        hidden_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=16,
        max_position_embeddings=32,
        num_labels=num_labels,
        id2label=id2label or {i: f"L{i}" for i in range(num_labels)},
        label2id={v: k for k, v in (id2label or {}).items()} or None,
    )
    torch.manual_seed(seed)
    model = transformers.BertForSequenceClassification(config).eval()
    fast.save_pretrained(folder)
    model.save_pretrained(folder)
    return fast, model


def reference(fast, model, texts, index, softmax=True):
    with torch.no_grad():
        logits = model(**fast(texts, padding=True, return_tensors="pt")).logits
    values = torch.softmax(logits, -1)[:, index] if softmax else logits[:, index]
    return [float(v) for v in values]


TEXTS = ["women are bad drivers", "the table is red", "men are good cooks and women are good cooks"]


def test_label_probability_and_logit_match_the_model(tmp_path):
    fast, model = save_checkpoint(tmp_path / "ckpt", id2label={0: "neutral", 1: "biased"})
    spec = f"hf/{tmp_path / 'ckpt'}"
    by_default = get_scorer(spec).score(TEXTS)  # two labels: index 1
    assert by_default == pytest.approx(reference(fast, model, TEXTS, 1), abs=1e-6)
    named = get_scorer(spec + ":label=NEUTRAL")
    assert named.score(TEXTS) == pytest.approx(reference(fast, model, TEXTS, 0), abs=1e-6)
    logit = get_scorer(spec, label="biased", output="logit")
    assert logit.score(TEXTS) == pytest.approx(reference(fast, model, TEXTS, 1, softmax=False), abs=1e-5)
    assert len({get_scorer(spec).identity, named.identity, logit.identity}) == 3
    assert all(0 <= v <= 1 for v in by_default) and not any(math.isnan(v) for v in by_default)


def test_identity_follows_the_weights(tmp_path):
    save_checkpoint(tmp_path / "ckpt", seed=0)
    before = get_scorer(f"hf/{tmp_path / 'ckpt'}").identity
    save_checkpoint(tmp_path / "ckpt", seed=1)
    assert get_scorer(f"hf/{tmp_path / 'ckpt'}").identity != before


def test_bad_checkpoints_and_options_are_one_line_errors(tmp_path):
    save_checkpoint(tmp_path / "three", num_labels=3)
    with pytest.raises(ConfigError, match="has 3 labels .*label=NAME"):
        get_scorer(f"hf/{tmp_path / 'three'}")
    with pytest.raises(ConfigError, match="no label 'x'.*0=L0"):
        get_scorer(f"hf/{tmp_path / 'three'}:label=x")
    assert len(get_scorer(f"hf/{tmp_path / 'three'}:label=2").score(["the table"])) == 1
    with pytest.raises(ConfigError, match="not found"):
        get_scorer(f"hf/{tmp_path / 'missing'}")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="no config.json"):
        get_scorer(f"hf/{tmp_path / 'empty'}")
    with pytest.raises(ConfigError, match="output=prob or output=logit"):
        get_scorer(f"hf/{tmp_path / 'three'}:label=1,output=odds")
    with pytest.raises(ConfigError, match="not colour"):
        get_scorer(f"hf/{tmp_path / 'three'}:colour=red")
