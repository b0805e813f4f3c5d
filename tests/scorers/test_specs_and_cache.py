"""Scorer specs (argument and options), the disk cache, and the profanity scorer."""

import json
import math
import sys

import pytest

from biaslab.errors import ConfigError
from biaslab.scorers import cached_scorer, get_scorer, parse_spec


@pytest.mark.parametrize(
    "spec, expected",
    [
        ("vader", ("vader", "", {})),
        ("vader:x=1", ("vader", "", {"x": "1"})),
        ("hf/models/corgi", ("hf", "models/corgi", {})),
        ("hf//abs/ckpt:label=biased,output=logit", ("hf", "/abs/ckpt", {"label": "biased", "output": "logit"})),
        ("judge-run:runs/judge", ("judge-run", "runs/judge", {})),
        ("judge-run:/tmp/a/b", ("judge-run", "/tmp/a/b", {})),
        (
            "openai/gpt-4o-mini:mode=moderation,category=hate",
            ("openai", "gpt-4o-mini", {"mode": "moderation", "category": "hate"}),
        ),
        ("openai/omni:batch-size=3", ("openai", "omni", {"batch_size": "3"})),
    ],
)
def test_specs_split_into_prefix_argument_and_options(spec, expected):
    assert parse_spec(spec) == expected


def test_unknown_scorer_and_options_are_one_line_errors():
    with pytest.raises(ConfigError, match="unknown scorer 'nope'.*vader"):
        get_scorer("nope")
    with pytest.raises(ConfigError, match="takes no argument or option"):
        get_scorer("vader:x=1")


class Counting:
    """A scorer that records what it was asked: the text length, or NaN for an empty text."""

    name = "counting"

    def __init__(self, identity="counting:1"):
        self.identity = identity
        self.calls = []

    def score(self, texts):
        self.calls.append(list(texts))
        return [float(len(t)) if t else math.nan for t in texts]


def test_the_cache_scores_each_text_once_per_identity(tmp_path):
    inner = Counting()
    scorer = cached_scorer(inner, tmp_path)
    assert scorer.name == "counting" and scorer.identity == "counting:1"
    first = scorer.score(["ab", "abc", "ab", ""])
    assert first[:3] == [2.0, 3.0, 2.0] and math.isnan(first[3])
    assert inner.calls == [["ab", "abc", ""]]  # unique texts only
    again = cached_scorer(Counting(), tmp_path)  # a new process: reads the file
    assert again.score(["abc", "", "ab"])[0::2] == [3.0, 2.0]
    assert again.inner.calls == [] and again.hits == 3 and again.computed == 0
    data = json.loads(scorer.path.read_text())
    assert data["identity"] == "counting:1" and len(data["scores"]) == 3
    other = cached_scorer(Counting("counting:2"), tmp_path)  # another identity: its own file, computed afresh
    other.score(["ab"])
    assert other.inner.calls == [["ab"]] and other.path != scorer.path


def test_the_cache_saves_after_every_chunk_and_survives_a_damaged_file(tmp_path):
    class FailsOnThirdChunk(Counting):
        def score(self, texts):
            if len(self.calls) == 2:
                raise KeyboardInterrupt
            return super().score(texts)

    texts = [f"text {i}" for i in range(10)]
    scorer = cached_scorer(FailsOnThirdChunk(), tmp_path)
    scorer.chunk = 4
    with pytest.raises(KeyboardInterrupt):
        scorer.score(texts)
    resumed = cached_scorer(Counting(), tmp_path)
    assert resumed.score(texts) == [float(len(t)) for t in texts]
    assert resumed.inner.calls == [texts[8:]]  # the two finished chunks were kept
    resumed.path.write_text("{not json")
    fresh = cached_scorer(Counting(), tmp_path)
    assert fresh.score(["x"]) == [1.0] and fresh.computed == 1


def test_profanity_scores_profane_text_higher():
    pytest.importorskip("profanity_check")
    scorer = get_scorer("profanity")
    clean, profane = scorer.score(["The committee met on Tuesday to review the budget.", "You are a fucking idiot."])
    assert 0.0 <= clean < 0.5 < profane <= 1.0
    assert scorer.identity.startswith("profanity:alt-profanity-check=")


def test_a_missing_scorer_package_names_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "profanity_check", None)  # makes `import profanity_check` fail
    with pytest.raises(ConfigError) as err:
        get_scorer("profanity")
    assert "pip install alt-profanity-check" in str(err.value) and "\n" not in str(err.value)
