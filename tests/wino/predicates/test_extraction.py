"""Extraction: the paper's prompt, the <PREV> iteration, the three modes, the cache."""

import pytest

from biaslab.errors import ConfigError
from biaslab.models.base import GenerateResult
from biaslab.models.cache import CachedModel, ResponseCache
from biaslab.models.scripted import ScriptedBackend
from biaslab.wino.predicates.extraction import build_prompt, clean_answer, extract, is_none, parse_mode, plan
from biaslab.wino.predicates.formats import SurveyAnswer

EXPECTED_FIRST = (
    "From the following sentence, extract a statement of one discrete stereotype about Jewish women. \n"
    "Stereotypes should be in the form of a predicate that would fit in the sentence 'All Jewish women <predicate>.' \n"
    "The predicate should start with a verb and SHOULD NOT inlcude individual characters separated by commas.\n"
    "Do not respond with a full sentence.\n"
    "There may be multiple stereotypes in the sentence, so extract one that is not already in the list.\n"
    "\nSentence: They say we are pushy.\n\nPreviously Extracted: None\n\nPredicate: "
)


def test_prompt_is_the_papers_text_with_none_then_the_comma_joined_answers():
    assert build_prompt("Jewish women", "They say we are pushy.", []) == EXPECTED_FIRST
    second = build_prompt("Jewish women", "They say we are pushy.", ["are pushy", "are loud"])
    assert second.endswith("Previously Extracted: are pushy, are loud\n\nPredicate: ")
    until = build_prompt("Jews", "x", [], until_none=True)
    assert (
        "already in the list.\nIf every stereotype in the sentence is already in the list, answer NONE.\n\n"
        "Sentence: x" in until
    )


def test_clean_answer_and_none():
    assert clean_answer('\n  Predicate: "are greedy."\nExplanation: ...') == "are greedy."
    assert clean_answer("- control the banks") == "control the banks"
    assert clean_answer("   ") == ""
    assert is_none("NONE") and is_none("None.") and is_none("") and is_none("No stereotype left")
    assert not is_none("are nonetheless rude") and not is_none("never tip")


def test_parse_mode():
    assert parse_mode("human") == ("human", None)
    assert parse_mode("3") == ("fixed", 3)
    assert parse_mode("until-none") == ("until-none", None)
    for bad in ("0", "-2", "all", "2.5"):
        with pytest.raises(ConfigError, match="--per-response"):
            parse_mode(bad)


SURVEY = [
    SurveyAnswer("a1", "Jewish", "Jews", "People say we are greedy and control the banks."),
    SurveyAnswer("a2", "Women", "Jewish women", "I was told Jewish women are loud."),
    SurveyAnswer("a3", "Jewish", "Jews", "Nothing comes to mind."),
]


class Recorder:
    """A rule that answers from a script per answer text and records every prompt it saw."""

    def __init__(self, script):
        self.script, self.prompts = script, []

    def __call__(self, request):
        text = request.display()
        self.prompts.append(text)
        sentence = text.split("Sentence: ")[1].split("\n")[0]
        prev = text.split("Previously Extracted: ")[1].split("\n")[0]
        k = 0 if prev == "None" else len(prev.split(", "))
        answers = self.script[sentence]
        return answers[k] if k < len(answers) else "NONE"


def _model(tmp_path, rule):
    return CachedModel(ScriptedBackend(rule, name="recorder"), ResponseCache(tmp_path / "c.sqlite"))


SCRIPT = {
    SURVEY[0].text: ["are greedy", "control the banks", "are greedy", "x"],
    SURVEY[1].text: ["are loud", "NONE"],
    SURVEY[2].text: ["NONE"],
}


def test_human_mode_asks_as_often_as_the_humans_extracted_and_skips_answers_without(tmp_path):
    limits, skipped = plan(SURVEY, "human", None, {"a1": 2, "a2": 1}, 10)
    assert limits == {"a1": 2, "a2": 1} and skipped == ["a3"]
    rule = Recorder(SCRIPT)
    run = extract(SURVEY, _model(tmp_path, rule), limits, until_none=False, seed=1)
    assert [(r.response_id, r.iteration, r.predicate) for r in run.rows] == [
        ("a1", 1, "are greedy"),
        ("a2", 1, "are loud"),
        ("a1", 2, "control the banks"),
    ]
    assert rule.prompts[2].endswith("Previously Extracted: are greedy\n\nPredicate: ")
    assert run.stops["count"] == 2


def test_fixed_mode_keeps_whatever_the_model_says_including_repeats(tmp_path):
    limits, _ = plan(SURVEY[:1], "fixed", 3, None, 10)
    run = extract(SURVEY[:1], _model(tmp_path, Recorder(SCRIPT)), limits, until_none=False)
    assert [r.predicate for r in run.rows] == ["are greedy", "control the banks", "are greedy"]


def test_until_none_stops_on_none_on_a_repeat_and_at_the_cap(tmp_path):
    limits, _ = plan(SURVEY, "until-none", None, None, 10)
    run = extract(SURVEY, _model(tmp_path, Recorder(SCRIPT)), limits, until_none=True)
    assert [(r.response_id, r.predicate) for r in run.rows] == [
        ("a1", "are greedy"),
        ("a2", "are loud"),
        ("a1", "control the banks"),
    ]
    assert run.stops == {"count": 0, "none": 2, "repeat": 1, "limit": 0}
    capped, _ = plan(SURVEY[:1], "until-none", None, None, 1)
    run = extract(SURVEY[:1], _model(tmp_path, Recorder(SCRIPT)), capped, until_none=True)
    assert len(run.rows) == 1 and run.stops["limit"] == 1


def test_seeds_temperature_and_cache_resume(tmp_path):
    seen = []

    def rule(request):
        seen.append(request.params)
        return "are greedy"

    limits = {"a1": 2}
    model = _model(tmp_path, rule)
    first = extract(SURVEY[:1], model, limits, until_none=False, seed=7)
    assert [p.temperature for p in seen] == [0.3, 0.3] and len({p.seed for p in seen}) == 2
    assert model.stats.model_calls == 2
    again = _model(tmp_path, rule)
    second = extract(SURVEY[:1], again, limits, until_none=False, seed=7)
    assert again.stats.model_calls == 0 and again.stats.cache_hits == 2
    assert [r.predicate for r in first.rows] == [r.predicate for r in second.rows]


def test_answer_cut_by_the_token_limit_is_marked_truncated(tmp_path):
    class Cut(ScriptedBackend):
        def generate(self, requests, on_result=None):
            out = [GenerateResult("are always late to every single", 5, 6, "length") for _ in requests]
            for i, r in enumerate(out):
                on_result and on_result(i, r)
            return out

    model = CachedModel(Cut("echo"), ResponseCache(tmp_path / "cut.sqlite"))
    run = extract(SURVEY[:1], model, {"a1": 1}, until_none=False)
    assert run.rows[0].truncated is True
