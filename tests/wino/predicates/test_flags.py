"""The quality flags on hand-written cases (word rules without embeddings, plus a tiny vector model)."""

import numpy as np
import pytest

from biaslab.wino.predicates.flags import FLAGS, flag_predicates, flag_rates, grounding, negation_reasons, shape_flags
from biaslab.wino.predicates.formats import PredicateRow, SurveyAnswer


@pytest.mark.parametrize(
    "predicate",
    [
        "Jews control the media.",  # starts with the identity noun: a full sentence
        "They are greedy",  # starts with a pronoun subject
        "All Jews are cheap",  # quantifier + subject
        "greedy",  # an adjective, no verb
        "The statement is about money",  # a determiner first
        "controls the banks",  # 3rd person singular: 'All Jews controls'
        "controlling the media",  # -ing form: no finite verb
        "not greedy",
        "g, r, e, e, d",  # the prompt forbids single characters separated by commas
        "are late. They never show up.",  # several sentences
        "are they greedy?",  # a question
    ],
)
def test_not_a_predicate_fires(predicate):
    bad, _ = shape_flags(predicate, "Jews")
    assert bad, predicate


@pytest.mark.parametrize(
    "predicate",
    [
        "are greedy",
        "control the media",
        "killed Jesus",
        "often complain about everything",
        "have big noses",
        "don't tip",
        "are bad with technology",
        "objectify others",
        "drive too slowly",
    ],
)
def test_well_formed_predicates_pass_both_shape_flags(predicate):
    assert shape_flags(predicate, "Jews") == ([], [])


@pytest.mark.parametrize(
    "predicate,why",
    [
        ("control", "bare verb"),
        ("believe", "bare verb"),
        ("are", "auxiliaries"),
        ("are not", "auxiliaries"),
        ("are good at", "ends on 'at'"),
        ("believe that", "ends on 'that'"),
        ("consider themselves superior to", "ends on"),
    ],
)
def test_incomplete_fires_on_bare_verbs_and_dangling_ends(predicate, why):
    _, short = shape_flags(predicate, "Jews")
    assert short and why in short[0]


def test_truncated_answer_is_incomplete_and_empty_is_not_a_predicate():
    assert shape_flags("are good with money", "Jews", truncated=True)[1] == ["the answer hit the token limit"]
    assert shape_flags("  ", "Jews")[0] == ["no words"]


def test_grounding_by_word_overlap_and_by_cosine():
    answer = "People assume I cannot use my phone because I am old."
    # no shared content word and no cosine: not grounded
    assert grounding("are greedy", answer, None)[0] is True
    # half the content words shared (lemma 'use' / stem 'phone'): grounded without embeddings
    flagged, share, _ = grounding("cannot use phones", answer, None)
    assert flagged is False and share == 1.0
    # no shared words, but a cosine above the threshold: grounded
    assert grounding("are bad with technology", answer, 0.45)[0] is False
    assert grounding("are bad with technology", answer, 0.10)[0] is True


def test_possible_negation_victim_turned_perpetrator_and_polarity():
    assert negation_reasons("catcall others", "As a lesbian I get catcalled on the street all the time.")
    assert negation_reasons("objectify others", "Men objectify us constantly.")
    assert negation_reasons("harass people", "I was harassed at work for years.")
    # the same polarity as the answer: no flag
    assert negation_reasons("are catcalled", "I get catcalled on the street.") == []
    assert negation_reasons("are cheap", "People say we are cheap. It is not true.") == []
    # negation flipped on the clause that shares the predicate's words
    assert negation_reasons("do not work hard", "People say we work too hard and never rest.")
    assert negation_reasons("work hard", "They think we do not work hard.")
    # a paraphrase with no shared word is not judged
    assert negation_reasons("are lazy", "People think we do not work hard.") == []


class TinyEmbedder:
    """Deterministic vectors: a text's bag of known words; cosine of normalised vectors."""

    vocab = ["money", "greedy", "phone", "technology", "old", "drive", "slow", "car", "music", "food"]
    synonyms = {"cheap": "money", "stingy": "money", "smartphone": "phone", "computer": "technology"}

    def embed(self, texts):
        out = []
        for t in texts:
            v = np.full(len(self.vocab), 1e-3)
            for w in t.lower().replace(".", " ").split():
                w = self.synonyms.get(w, w)
                if w in self.vocab:
                    v[self.vocab.index(w)] += 1
            out.append(v / np.linalg.norm(v))
        return np.array(out)

    def cosine(self, a, b):
        return self.embed(list(a)) @ self.embed(list(b)).T


def _answers():
    texts = {
        "r1": "My neighbour said I must be stingy with money because of where I come from.",
        "r2": "At work they gave me the old phone and said I would not manage a smartphone.",
        "r3": "I play music at the synagogue every week.",
        "r4": "When I drive my car someone always honks at me.",
        "r5": "We cook traditional food for every holiday.",
    }
    return {k: SurveyAnswer(k, "Jewish", "Jews", t) for k, t in texts.items()}


def test_repeated_prior_flags_a_predicate_proposed_for_unrelated_answers():
    survey = _answers()
    rows = [PredicateRow(rid, "Jewish", "are greedy") for rid in ("r1", "r3", "r4", "r5")]
    rows += [PredicateRow("r2", "Jewish", "cannot use a smartphone")]
    flags = flag_predicates(rows, survey, TinyEmbedder())
    # 'are greedy' for four answers, grounded only in r1 (money): a repeated prior, all four flagged
    assert [f["repeated_prior"] for f in flags] == [True, True, True, True, False]
    assert [f["not_grounded"] for f in flags] == [False, True, True, True, False]
    assert all(f["repeat_responses"] == 4 for f in flags[:4])
    assert "repeated_prior: near-same predicate for 4 answers" in flags[0]["flag_notes"]


def test_a_predicate_repeated_where_the_answers_support_it_is_not_a_prior():
    money = {
        f"m{i}": SurveyAnswer(f"m{i}", "Jewish", "Jews", t)
        for i, t in enumerate(
            ["They call us greedy with money.", "Coworkers joke that I am greedy.", "People think we are greedy."]
        )
    }
    rows = [PredicateRow(rid, "Jewish", "are greedy") for rid in money]
    flags = flag_predicates(rows, money, None)
    assert not any(f["repeated_prior"] for f in flags) and not any(f["not_grounded"] for f in flags)


def test_flag_rates_count_each_flag_and_any():
    flags = [dict.fromkeys(FLAGS, False) for _ in range(4)]
    flags[0]["incomplete"] = True
    flags[1]["incomplete"] = flags[1]["not_grounded"] = True
    rates = flag_rates(flags)
    assert rates["incomplete"] == {"count": 2, "share": 0.5}
    assert rates["not_grounded"]["count"] == 1 and rates["any_flag"] == {"count": 2, "share": 0.5}
    assert rates["n_predicates"]["count"] == 4
