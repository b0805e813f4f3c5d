"""The components of a paired-sentence benchmark, as every source is loaded.

* A :class:`Form` is a set of templates of one grammatical number (``plural`` or ``singular``).
  A group takes part in a form only if it has an identity phrase for it.
* A :class:`Group` is a target group: its name (the pairs' ``target_ID``), its identity phrase
  per form ("Jews", "Orthodox Jewish", "Jew") and its counterfactual phrases per form.
* A :class:`Person` is a pronoun set with a name label (``he`` / ``male``); singular templates
  are filled once with the pronoun and once with each of the names drawn for the person.
* A :class:`Predicate` is one attested stereotype of a group: its plural form, its singular
  form (or None), and where it came from.
* :class:`Settings` holds the sampling rules and the quirks of an original recipe.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from biaslab.wino.build.tables import Cell

PLURAL, SINGULAR = "plural", "singular"
NUMBERS = (PLURAL, SINGULAR)


@dataclass(frozen=True)
class Template:
    form: str
    index: int  # 1-based position within its form
    cell: Cell

    @property
    def text(self) -> str:
        return self.cell.value


@dataclass
class Form:
    name: str
    number: str  # PLURAL or SINGULAR
    templates: list[Template]


@dataclass
class Group:
    name: str  # the target_ID of its pairs
    identities: dict[str, str]  # form name -> identity phrase
    counterfactuals: dict[str, list[str]]  # form name -> counterfactual phrases


@dataclass(frozen=True)
class Person:
    name: str  # "he", "she", "they"
    label: str  # the names label it takes ("male", "female", "NB")
    slots: dict[str, str]  # lower-case slot -> value: subject, object, pronoun, possessive, reflexive, is/are

    @property
    def plural_verb(self) -> bool:
        return self.slots.get("is/are", "is") == "are"


# Pronoun set for the slots of plural sentences (used only where a plural predicate has slots).
PLURAL_PERSON = Person(
    "they",
    "",
    {
        "subject": "they",
        "object": "them",
        "pronoun": "they",
        "possessive": "their",
        "reflexive": "themselves",
        "is/are": "are",
    },
)


@dataclass
class Predicate:
    group: str
    id: str  # stable id: "<group>#<row>" of the first row holding the same text
    plural: Cell | None
    singular: Cell | None
    singular_from_plural: bool = False  # the singular text is the plural one (one column for both)


@dataclass(frozen=True)
class Exclusion:
    """No sentences with ``person`` for ``group`` (for predicates containing ``contains``, if given)."""

    group: str
    person: str
    contains: str | None = None

    def applies(self, group: str, person: str, predicate_text: str) -> bool:
        return (
            self.group == group and self.person == person and (self.contains is None or self.contains in predicate_text)
        )


@dataclass
class Settings:
    names_per_person: int | None = 5  # None: every name of the person's label, in file order
    counterfactuals_per_sentence: int | None = 2  # None: every counterfactual
    verb_phrases: bool = True  # predicates are verb phrases (regular verbs may be conjugated)
    # faithful-only quirks of an original recipe
    quirk_labels: list[tuple[str, str, str]] = field(default_factory=list)  # (group, person, target_ID)


@dataclass
class Components:
    name: str
    forms: list[Form]
    groups: list[Group]
    persons: list[Person]
    names: dict[str, list[str]]  # label -> names in file order
    predicates: list[Predicate]
    exclusions: list[Exclusion] = field(default_factory=list)
    settings: Settings = field(default_factory=Settings)
    files: list[str] = field(default_factory=list)  # registered data files it was read from
    custom: bool = False  # a user's components folder (no original whose quirks could be fixed)

    def form(self, name: str) -> Form:
        return next(f for f in self.forms if f.name == name)

    def group(self, name: str) -> Group:
        return next(g for g in self.groups if g.name == name)


def canonical_ids(group: str, cells: list[tuple[int, str]]) -> dict[int, str]:
    """``row -> predicate id``: identical texts of one group share the id of their first row."""
    first: dict[str, int] = {}
    out = {}
    for row, text in cells:
        key = " ".join(text.split()).rstrip(".").strip().lower()
        first.setdefault(key, row)
        out[row] = f"{group}#{first[key]}"
    return out
