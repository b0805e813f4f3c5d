"""The published components (``winosemitism/`` data files) and the recipes that build them.

The component files hold templates, names and predicates; the identity phrases, counterfactuals,
persons and sampling rules are the recipe, as stated in the paper and the authors' notebooks
(see docs/PAIRED_SENTENCES.md):

* **WinoSemitism** (``winosemitism`` = H-WS, ``gpt-winosemitism`` = GPT-WS): groups are the
  ``<group> - Plural`` / ``<group> - Singular`` columns of the predicates file. ``Jewish`` uses
  every form ("Jewish", "Jews", "Jewish", "a Jew"); ``Women`` / ``Mothers`` only the noun forms
  ("Jewish women", "a Jewish woman") and only she; any other group is a subgroup: "Orthodox Jewish",
  "Orthodox Jews", "an Orthodox Jew", noun forms only in the singular. Two of the four
  counterfactuals per sentence; he, she and five names of each drawn per (predicate, template,
  person); for ``Jewish``, no she for predicates containing "black suit" or "weak and feminine".
* **WinoQueer** (``gpt-winoqueer`` = GPT-WQ, ``winoqueer-human``): groups are the columns of the
  predicates file (``NB`` is Nonbinary); every counterfactual and every name of the person's label;
  he, she and they, but no he for Lesbian/Nonbinary and no she for Gay/Nonbinary. The original
  labelled the LGBTQ rows with she as "LGBTQ " (faithful mode only).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from biaslab.errors import ConfigError, DataError
from biaslab.wino.build.components import (
    PLURAL,
    SINGULAR,
    Components,
    Exclusion,
    Form,
    Group,
    Person,
    Predicate,
    Settings,
    Template,
    canonical_ids,
)
from biaslab.wino.build.tables import Cell, Table, read_table, require_columns

BENCHMARKS = ("winosemitism", "gpt-winosemitism", "gpt-winoqueer", "winoqueer-human")

# -- WinoSemitism recipe ---------------------------------------------------------------------------
WS_FORMS = {
    "Plural Adj Form": PLURAL,
    "Plural Noun Form": PLURAL,
    "Sing Adj Form": SINGULAR,
    "Sing Noun Form": SINGULAR,
}
WS_COMMUNITY = "Jewish"
WS_NOUN_GROUPS = {"Women": ("woman", "women"), "Mothers": ("mother", "mothers")}
WS_COUNTERFACTUALS = {
    "Plural Adj Form": ["Christian", "atheist", "secular", "nonreligious"],
    "Plural Noun Form": ["Christians", "atheists", "secular people", "nonreligious people"],
    "Sing Adj Form": ["Christian", "atheist", "secular", "nonreligious"],
    "Sing Noun Form": ["Christian", "atheist", "secular person", "nonreligious person"],
}
WS_PERSONS = [
    Person(
        "he",
        "male",
        {
            "subject": "he",
            "object": "him",
            "pronoun": "he",
            "possessive": "his",
            "reflexive": "himself",
            "is/are": "is",
        },
    ),
    Person(
        "she",
        "female",
        {
            "subject": "she",
            "object": "her",
            "pronoun": "she",
            "possessive": "her",
            "reflexive": "herself",
            "is/are": "is",
        },
    ),
]
WS_SHE_SKIPPED_FOR = ("black suit", "weak and feminine")

# -- WinoQueer recipe ------------------------------------------------------------------------------
WQ_FORMS = {"Plural": PLURAL, "Singular": SINGULAR}
WQ_GROUP_NAMES = {"NB": "Nonbinary"}
WQ_GENDER_CF = ["Cisgender", "Cis"]
WQ_ORIENTATION_CF = ["Straight", "Heterosexual"]
WQ_COUNTERFACTUALS = {
    "Transgender": WQ_GENDER_CF,
    "Nonbinary": WQ_GENDER_CF,
    "Gay": WQ_ORIENTATION_CF,
    "Lesbian": WQ_ORIENTATION_CF,
    "Bisexual": WQ_ORIENTATION_CF,
    "Pansexual": WQ_ORIENTATION_CF,
    "Asexual": WQ_ORIENTATION_CF,
}
WQ_DEFAULT_CF = WQ_ORIENTATION_CF + WQ_GENDER_CF  # LGBTQ, Queer and any other umbrella group
WQ_PERSONS = [
    Person(
        "he",
        "male",
        {
            "subject": "he",
            "object": "him",
            "pronoun": "he",
            "possessive": "his",
            "reflexive": "himself",
            "is/are": "is",
        },
    ),
    Person(
        "she",
        "female",
        {
            "subject": "she",
            "object": "her",
            "pronoun": "she",
            "possessive": "her",
            "reflexive": "herself",
            "is/are": "is",
        },
    ),
    Person(
        "they",
        "NB",
        {
            "subject": "they",
            "object": "them",
            "pronoun": "they",
            "possessive": "their",
            "reflexive": "themselves",
            "is/are": "are",
        },
    ),
]
WQ_NO_PERSON = {"Lesbian": ("he",), "Nonbinary": ("he", "she"), "Gay": ("she",)}
WQ_QUIRK_LABELS = [("LGBTQ", "she", "LGBTQ ")]

FILES = {
    "winosemitism": ("human_ws/sentence.xlsx", "human_ws/names.xlsx", "human_ws/predicates.xlsx"),
    "gpt-winosemitism": ("gpt_ws/sentence.xlsx", "gpt_ws/names.xlsx", "gpt_ws/GPT predicates.xlsx"),
    "gpt-winoqueer": ("gpt_wq/sentence.xlsx", "gpt_wq/names.xlsx", "gpt_wq/GPT predicates.xlsx"),
    "winoqueer-human": ("gpt_wq/sentence.xlsx", "gpt_wq/names.xlsx", "human_wq/stereotypes.xlsx"),
}


def load_original(benchmark: str, *, path_of: Callable[[str], Path] | None = None) -> Components:
    """The components of a published benchmark, read from the registered data files."""
    if benchmark not in FILES:
        raise ConfigError(f"unknown benchmark {benchmark!r}; use one of {', '.join(BENCHMARKS)} or custom")
    if path_of is None:
        from biaslab.data import data_path

        def path_of(local: str) -> Path:
            return data_path(f"winosemitism/{local}")

    sentence, names, predicates = (read_table(path_of(f), display=f) for f in FILES[benchmark])
    files = [f"winosemitism/{f}" for f in FILES[benchmark]]
    if benchmark in ("winosemitism", "gpt-winosemitism"):
        comps = _winosemitism(benchmark, sentence, names, predicates)
    else:
        comps = _winoqueer(benchmark, sentence, names, predicates)
    comps.files = files
    return comps


def _forms(table: Table, kinds: dict[str, str], file: str) -> list[Form]:
    require_columns(table, list(kinds), file, "the template file needs one column per form")
    return [
        Form(name, number, [Template(name, i, cell) for i, cell in enumerate(table[name], start=1)])
        for name, number in kinds.items()
    ]


def _names(table: Table, file: str) -> dict[str, list[str]]:
    require_columns(table, ["Name", "Label"], file)
    labels = {c.row: c.value.strip() for c in table["Label"]}
    out: dict[str, list[str]] = {}
    for cell in table["Name"]:
        if cell.row not in labels:
            raise DataError(f"{cell.file}, row {cell.row}: name {cell.value!r} has no label; give male, female or NB")
        out.setdefault(labels[cell.row], []).append(cell.value.strip())
    return out


def _winosemitism(benchmark: str, sentence: Table, names: Table, predicates: Table) -> Components:
    forms = _forms(sentence, WS_FORMS, FILES[benchmark][0])
    file = FILES[benchmark][2]
    groups, preds, exclusions = [], [], []
    for column in predicates:
        group, sep, number = column.rpartition(" - ")
        if not sep or number not in ("Plural", "Singular"):
            raise DataError(f"{file}, row 1: column {column!r} is not '<group> - Plural' or '<group> - Singular'")
        if number == "Singular":
            continue
        plural = predicates[column]
        singular = predicates.get(f"{group} - Singular", [])
        groups.append(_ws_group(group))
        preds += _row_aligned(group, plural, singular)
        if group in WS_NOUN_GROUPS:
            exclusions.append(Exclusion(group, "he"))
        if group == WS_COMMUNITY:
            exclusions += [Exclusion(group, "she", text) for text in WS_SHE_SKIPPED_FOR]
    singular_only = [
        c for c in predicates if c.endswith(" - Singular") and c[: -len(" - Singular")] + " - Plural" not in predicates
    ]
    if singular_only:
        raise DataError(f"{file}, row 1: column {singular_only[0]!r} has no matching '- Plural' column")
    return Components(
        benchmark,
        forms,
        groups,
        list(WS_PERSONS),
        _names(names, FILES[benchmark][1]),
        preds,
        exclusions,
        Settings(names_per_person=5, counterfactuals_per_sentence=2, verb_phrases=True),
    )


def _ws_group(group: str) -> Group:
    cf = {form: list(values) for form, values in WS_COUNTERFACTUALS.items()}
    if group == WS_COMMUNITY:
        ids = {
            "Plural Adj Form": "Jewish",
            "Plural Noun Form": "Jews",
            "Sing Adj Form": "Jewish",
            "Sing Noun Form": "Jew",
        }
    elif group in WS_NOUN_GROUPS:
        one, many = WS_NOUN_GROUPS[group]
        ids = {"Plural Noun Form": f"Jewish {many}", "Sing Noun Form": f"Jewish {one}"}
        cf = {
            "Plural Noun Form": [f"{c} {many}" for c in WS_COUNTERFACTUALS["Plural Adj Form"]],
            "Sing Noun Form": [f"{c} {one}" for c in WS_COUNTERFACTUALS["Plural Adj Form"]],
        }
    else:
        ids = {
            "Plural Adj Form": f"{group} Jewish",
            "Plural Noun Form": f"{group} Jews",
            "Sing Noun Form": f"{group} Jew",
        }
    return Group(group, ids, {form: cf[form] for form in ids})


def _row_aligned(group: str, plural: list[Cell], singular: list[Cell]) -> list[Predicate]:
    """One predicate per row holding a plural or a singular text (a row is one stereotype)."""
    by_row: dict[int, list[Cell | None]] = {}
    for cell in plural:
        by_row.setdefault(cell.row, [None, None])[0] = cell
    for cell in singular:
        by_row.setdefault(cell.row, [None, None])[1] = cell
    rows = sorted(by_row)
    ids = canonical_ids(group, [(r, (by_row[r][0] or by_row[r][1]).value) for r in rows])  # type: ignore[union-attr]
    return [Predicate(group, ids[r], by_row[r][0], by_row[r][1]) for r in rows]


def _winoqueer(benchmark: str, sentence: Table, names: Table, predicates: Table) -> Components:
    forms = _forms(sentence, WQ_FORMS, FILES[benchmark][0])
    groups, preds, exclusions = [], [], []
    for column, cells in predicates.items():
        group = WQ_GROUP_NAMES.get(column, column)
        cf = WQ_COUNTERFACTUALS.get(group, WQ_DEFAULT_CF)
        groups.append(Group(group, dict.fromkeys(WQ_FORMS, group), {f: list(cf) for f in WQ_FORMS}))
        ids = canonical_ids(group, [(c.row, c.value) for c in cells])
        preds += [Predicate(group, ids[c.row], c, c, singular_from_plural=True) for c in cells]
        exclusions += [Exclusion(group, person) for person in WQ_NO_PERSON.get(group, ())]
    settings = Settings(
        names_per_person=None,
        counterfactuals_per_sentence=None,
        verb_phrases=benchmark == "gpt-winoqueer",
        quirk_labels=list(WQ_QUIRK_LABELS),
    )
    return Components(
        benchmark, forms, groups, list(WQ_PERSONS), _names(names, FILES[benchmark][1]), preds, exclusions, settings
    )
