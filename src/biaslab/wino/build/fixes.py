"""The corrections of the default build mode, and the record of what each one changed.

``--faithful`` builds the benchmarks exactly as the original code did, quirks included. The
default mode corrects the quirks listed in docs/PAIRED_SENTENCES.md, and reports, per fix, the
components it changed and how many pairs it touched:

``whitespace``      non-breaking and repeated spaces, leading/trailing space in templates and predicates
``final-period``    a predicate's own final period (the template adds one: "hats.." -> "hats."),
                    and a template with no final punctuation gets a period
``empty-predicate`` a predicate with no text (a lone space) is dropped, with its pairs
``verb-agreement``  the predicate's first verb agrees with its subject ("He is a Jew and are greedy"
                    -> "... is greedy"; "Gay people is wrong" -> "... are wrong"; "They ... and drives"
                    -> "... and drive"); see :mod:`.grammar` and :mod:`.agreement`
``they-is``         an auxiliary right after a subject slot agrees with that subject ("They is" ->
                    "They are", but "Sam is" for a name whose pronoun is *they*)
``label``           the original's stray target label ("LGBTQ " with a trailing space)
``possessive-plural`` a singular sentence made from a predicate's plural text takes the singular of
                    a noun one person has one of after ``<possessive>`` ("are a burden on
                    <possessive> families" -> "is a burden on his family"); see :mod:`.pronouns`
``predicate-pronoun`` a person slot inside a predicate follows the sentence's person, never the name
                    ("David is Jewish and should have change thrown at <object>" -> "... at him",
                    where the original put the name: "... thrown at David"), and ``<pronoun>`` takes
                    the form its place needs ("helps <pronoun>" -> "helps him", not "helps he")
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from biaslab.wino.build.agreement import tag_verbs, untag
from biaslab.wino.build.grammar import agree
from biaslab.wino.build.pronouns import one_each_singular, place_pronouns
from biaslab.wino.build.slots import fill

DESCRIPTIONS = {
    "whitespace": "non-breaking, repeated, leading or trailing spaces removed",
    "final-period": "stray final periods removed from predicates; final period added to templates without one",
    "empty-predicate": "predicates with no text dropped (their pairs are not built)",
    "verb-agreement": "first verb of the predicate made to agree with its subject",
    "they-is": "'<subject> is' made to agree with its subject ('They are', 'Sam is')",
    "label": "stray target labels of the original corrected",
    "possessive-plural": "'<possessive> families' made '<possessive> family' where a singular sentence uses "
    "a plural predicate",
    "predicate-pronoun": "person slots in a predicate: the subject's pronoun in the form its place needs, never the "
    "name ('helps <object>', 'helps <pronoun>': 'helps him')",
}
# a subject slot inside a predicate and the words after it up to the next clause boundary or slot
_SUBJECT_VERB = re.compile(r"(<[Ss]ubject>\s+)([^<,;:.!?]*?)(?=\s+and\s|\s+but\s|\s+or\s|[<,;:.!?]|$)")
_SPACES = re.compile(r"[\s\u00a0\u2000-\u200b\u202f\u205f\u3000]+")
_END_PUNCT = (".", "!", "?")


@dataclass
class FixStat:
    name: str
    components: list[str] = field(default_factory=list)  # "where: before -> after"
    pairs: int = 0

    @property
    def description(self) -> str:
        return DESCRIPTIONS[self.name]


class Fixes:
    """Applies the corrections (or nothing, when faithful) and counts what they touched."""

    def __init__(self, enabled: bool, verb_phrases: bool) -> None:
        self.enabled = enabled
        self.verb_phrases = verb_phrases
        self.stats: dict[str, FixStat] = {name: FixStat(name) for name in DESCRIPTIONS}
        self._seen: set[tuple[str, str]] = set()

    def _note(self, name: str, where: str, before: str, after: str) -> None:
        if (name, where) not in self._seen:
            self._seen.add((name, where))
            self.stats[name].components.append(f"{where}: {before!r} -> {untag(after)!r}")

    def count(self, names: set[str]) -> None:
        for name in names:
            self.stats[name].pairs += 1

    # -- components ----------------------------------------------------------------------------
    def _spaces(self, text: str, where: str) -> tuple[str, set[str]]:
        clean = _SPACES.sub(" ", text).strip()
        if clean == text:
            return clean, set()
        self._note("whitespace", where, text, clean)
        return clean, {"whitespace"}

    def template(self, text: str, where: str) -> tuple[str, set[str]]:
        if not self.enabled:
            return text, set()
        clean, done = self._spaces(text, where)
        if clean and not clean.endswith(_END_PUNCT):
            self._note("final-period", where, clean, clean + ".")
            clean += "."
            done.add("final-period")
        tagged = tag_verbs(clean)  # each verb slot names the subject it agrees with
        if untag(tagged) != clean:
            self._note("they-is", where, clean, tagged)
        return tagged, done

    def predicate(self, text: str, where: str) -> tuple[str | None, set[str]]:
        """The cleaned predicate (None: dropped) and the fixes that changed it."""
        if not self.enabled:
            return text, set()
        clean, done = self._spaces(text, where)
        stripped = clean.rstrip(".").rstrip()
        if stripped != clean and stripped:
            self._note("final-period", where, clean, stripped)
            done.add("final-period")
            clean = stripped
        if not clean.strip(" ."):
            self._note("empty-predicate", where, text, "(dropped)")
            return None, done | {"empty-predicate"}
        return clean, done

    def agreement(self, text: str, where: str, *, singular: bool) -> tuple[str, set[str]]:
        if not self.enabled:
            return text, set()
        fixed = agree(text, singular=singular, verbs=self.verb_phrases)
        if fixed != text:
            self._note(
                "verb-agreement", where + (" (singular subject)" if singular else " (plural subject)"), text, fixed
            )
            return fixed, {"verb-agreement"}
        return text, set()

    def possessive_plural(self, text: str, where: str) -> tuple[str, set[str]]:
        """A plural predicate used for one person: ``<possessive> families`` -> ``<possessive> family``."""
        if not self.enabled:
            return text, set()
        fixed = one_each_singular(text)
        if fixed == text:
            return text, set()
        self._note("possessive-plural", where + " (singular subject)", text, fixed)
        return fixed, {"possessive-plural"}

    def pronouns(self, text: str, where: str, person_slots: dict[str, str], name: str | None) -> tuple[str, set[str]]:
        """The person slots of a predicate filled with the sentence's pronouns (he/him/his/himself for a
        name labelled male), never with the name the template's own ``<Subject>``/``<object>`` take."""
        if not self.enabled:
            return text, set()
        placed = place_pronouns(text)
        # the verb after a subject slot agrees with the pronoun ("unless <pronoun> is" -> "unless they are")
        plural = person_slots.get("is/are", "is") == "are"
        placed = _SUBJECT_VERB.sub(
            lambda m: m.group(1) + agree(m.group(2), singular=not plural, verbs=self.verb_phrases), placed
        )
        filled = fill(placed, person_slots)
        plain = fill(text, {**person_slots, "Subject": name, "object": name} if name else person_slots)
        if plain == filled:
            return filled, set()
        self._note("predicate-pronoun", where, text, filled)
        return filled, {"predicate-pronoun"}

    def label(self, faithful_label: str, group: str) -> tuple[str, set[str]]:
        if not self.enabled or faithful_label == group:
            return faithful_label, set()
        self._note("label", f"target_ID {faithful_label!r}", faithful_label, group)
        return group, {"label"}

    def report(self) -> list[FixStat]:
        return [s for s in self.stats.values() if s.pairs]
