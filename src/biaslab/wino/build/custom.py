"""A user's own components folder (``biaslab wino build custom --components DIR``).

Layout (CSV files, UTF-8, a header row; ``.xlsx`` with the same columns works too):

``templates.csv``        ``form, number, template`` -- number is ``plural`` or ``singular``
``identities.csv``       ``group, form, identity`` -- a group takes part in the forms it has an identity for
``counterfactuals.csv``  ``group, form, counterfactual`` -- one row per phrase; group ``*`` = every group
                         without its own rows for that form
``predicates.csv``       ``group, plural[, singular]`` -- one stereotype per row; an empty singular cell
                         (or no singular column) means the plural text is used in singular sentences too
                         (its first verb made to agree in the default mode)
``names.csv``            ``name, label`` -- needed when there are singular templates
``persons.csv``          optional: ``person, label, subject, object, pronoun, possessive, reflexive, is/are``
                         (default: he/male, she/female, they/NB)
``exclusions.csv``       optional: ``group, person[, predicate_contains]`` -- no sentences with that person
``settings.toml``        optional: ``names_per_person`` (default 5, or "all"), ``counterfactuals_per_sentence``
                         (default 2, or "all"), ``verb_phrases`` (default true: predicates start with a verb)

``biaslab wino example DIR`` writes a small working example.

Slots. A template holds an identity slot (``<identity noun>``, ``<identity adj>`` or
``<identity>``: the group's phrase in one sentence, the counterfactual in the other),
``<predicate>``, ``<article>`` (a/an for the phrase after it) and, in singular templates, the
subject's slots: ``<Subject>`` (a name, else the pronoun), ``<subject>``/``<pronoun>``
(he/she/they), ``<object>`` (the name, else him/her/them), ``<possessive>``, ``<reflexive>``,
``<is/are>``. A predicate refers to its subject with the same slots -- ``<subject>``,
``<object>``, ``<possessive>``, ``<reflexive>`` -- and these always take pronouns: the
person's own (a name takes those of its label: ``male`` he/him/his/himself, ``female``
she/her/her/herself, ``NB`` they/them/their/themselves, or the rows of persons.csv) and, in a
plural sentence, they/them/their/themselves::

    predicates.csv: wheelchair,go out only when someone helps <object>,
    He is a wheelchair user and goes out only when someone helps him.
    Ruth is a wheelchair user and goes out only when someone helps her.
    Wheelchair users go out only when someone helps them.

``<pronoun>`` in a predicate takes the form its place needs: the object form after a verb or a
preposition ("someone helps <pronoun>": him), the subject form at the start, after a conjunction
or before an auxiliary ("unless <pronoun> is driven": he); a verb after a subject slot agrees with
it ("unless they are driven"). A slot written with a capital first letter (``<Possessive>``) takes
a capitalised value. When a
singular sentence takes a predicate's plural text (no singular column), its first verb agrees
with the subject and a noun one person has one of after ``<possessive>`` is made singular ("a
burden on <possessive> families" -> "a burden on his family"). Every build checks each sentence's
verbs and pronouns against its subject and notes what does not agree (a fixed "them" in a
predicate: "He ... helps them"), and notes other plural nouns after ``<possessive>`` in such
sentences ("his children"), to be checked by eye. ``--faithful`` turns these rules off: the
components are used exactly as written.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from biaslab.errors import DataError
from biaslab.wino.build.components import (
    NUMBERS,
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
from biaslab.wino.build.originals import WQ_PERSONS
from biaslab.wino.build.tables import Cell, records

FILES = ("templates", "identities", "counterfactuals", "predicates", "names", "persons", "exclusions")


def _find(folder: Path, stem: str, required: bool) -> Path | None:
    for ext in (".csv", ".xlsx"):
        p = folder / f"{stem}{ext}"
        if p.is_file():
            return p
    if required:
        raise DataError(
            f"{folder}: missing {stem}.csv (see `biaslab wino build --help` for the components layout, "
            "or `biaslab wino example DIR` for a working example)"
        )
    return None


def _v(cell: Cell | None) -> str:
    return cell.value.strip() if cell is not None else ""


def load_custom(folder: Path) -> Components:
    folder = Path(folder)
    if not folder.is_dir():
        raise DataError(f"--components {folder}: not a directory")
    forms = _templates(_find(folder, "templates", True))  # type: ignore[arg-type]
    groups = _groups(_find(folder, "identities", True), _find(folder, "counterfactuals", True), forms)  # type: ignore[arg-type]
    preds = _predicates(_find(folder, "predicates", True), {g.name for g in groups})  # type: ignore[arg-type]
    needs_people = any(f.number == "singular" for f in forms)
    names_path = _find(folder, "names", needs_people)
    names: dict[str, list[str]] = {}
    if names_path is not None:
        for rec in records(names_path, ["name", "label"]):
            if not _v(rec["name"]) or not _v(rec["label"]):
                cell = rec["name"] or rec["label"]
                raise DataError(f"{cell.file}, row {cell.row}: a name needs both name and label")  # type: ignore[union-attr]
            names.setdefault(_v(rec["label"]), []).append(_v(rec["name"]))
    persons = _persons(_find(folder, "persons", False))
    excl_path = _find(folder, "exclusions", False)
    exclusions = []
    if excl_path is not None:
        for rec in records(excl_path, ["group", "person"], optional=("predicate_contains",)):
            exclusions.append(Exclusion(_v(rec["group"]), _v(rec["person"]), _v(rec["predicate_contains"]) or None))
    return Components(
        folder.name or "custom",
        forms,
        groups,
        persons,
        names,
        preds,
        exclusions,
        _settings(folder / "settings.toml"),
        custom=True,
    )


def _templates(path: Path) -> list[Form]:
    forms: dict[str, Form] = {}
    for rec in records(path, ["form", "number", "template"]):
        cell = rec["template"]
        where = cell or rec["form"] or rec["number"]
        form, number = _v(rec["form"]), _v(rec["number"]).lower()
        if not form or cell is None:
            raise DataError(f"{where.file}, row {where.row}: a template needs form, number and template")  # type: ignore[union-attr]
        if number not in NUMBERS:
            raise DataError(f"{where.file}, row {where.row}: number must be plural or singular, got {number!r}")  # type: ignore[union-attr]
        f = forms.setdefault(form, Form(form, number, []))
        if f.number != number:
            raise DataError(f"{where.file}, row {where.row}: form {form!r} is {f.number} in an earlier row")  # type: ignore[union-attr]
        f.templates.append(Template(form, len(f.templates) + 1, cell))
    if not forms:
        raise DataError(f"{path.name}: no templates")
    return list(forms.values())


def _groups(ident_path: Path, cf_path: Path, forms: list[Form]) -> list[Group]:
    known = {f.name for f in forms}
    groups: dict[str, Group] = {}
    for rec in records(ident_path, ["group", "form", "identity"]):
        cell = rec["identity"] or rec["group"] or rec["form"]
        group, form = _v(rec["group"]), _v(rec["form"])
        if not group or not _v(rec["identity"]):
            raise DataError(f"{cell.file}, row {cell.row}: an identity needs group, form and identity")  # type: ignore[union-attr]
        if form not in known:
            raise DataError(
                f"{cell.file}, row {cell.row}: form {form!r} has no templates "  # type: ignore[union-attr]
                f"(forms: {', '.join(sorted(known))})"
            )
        groups.setdefault(group, Group(group, {}, {})).identities[form] = _v(rec["identity"])
    shared: dict[str, list[str]] = {}
    for rec in records(cf_path, ["group", "form", "counterfactual"]):
        cell = rec["counterfactual"] or rec["group"] or rec["form"]
        group, form, phrase = _v(rec["group"]), _v(rec["form"]), _v(rec["counterfactual"])
        if not group or not phrase or form not in known:
            raise DataError(
                f"{cell.file}, row {cell.row}: a counterfactual needs group (or *), a form with "  # type: ignore[union-attr]
                "templates and a phrase"
            )
        if group == "*":
            shared.setdefault(form, []).append(phrase)
        elif group not in groups:
            raise DataError(f"{cell.file}, row {cell.row}: group {group!r} has no identity in identities.csv")  # type: ignore[union-attr]
        else:
            groups[group].counterfactuals.setdefault(form, []).append(phrase)
    for g in groups.values():
        for form in g.identities:
            g.counterfactuals.setdefault(form, list(shared.get(form, [])))
        g.counterfactuals = {f: v for f, v in g.counterfactuals.items() if f in g.identities}
    return list(groups.values())


def _predicates(path: Path, groups: set[str]) -> list[Predicate]:
    recs = records(path, ["group", "plural"], optional=("singular",))
    by_group: dict[str, list[tuple[Cell | None, Cell | None, int]]] = {}
    for rec in recs:
        cell = rec["plural"] or rec["group"] or rec["singular"]
        group = _v(rec["group"])
        if group not in groups:
            raise DataError(f"{cell.file}, row {cell.row}: group {group!r} has no identity in identities.csv")  # type: ignore[union-attr]
        if rec["plural"] is None and rec["singular"] is None:
            raise DataError(f"{cell.file}, row {cell.row}: a predicate needs a plural or a singular text")  # type: ignore[union-attr]
        by_group.setdefault(group, []).append((rec["plural"], rec["singular"], cell.row))  # type: ignore[union-attr]
    out = []
    for group, rows in by_group.items():
        ids = canonical_ids(group, [(r, (p or s).value) for p, s, r in rows])  # type: ignore[union-attr]
        out += [
            Predicate(group, ids[r], p, s if s is not None else p, singular_from_plural=s is None and p is not None)
            for p, s, r in rows
        ]
    return out


def _persons(path: Path | None) -> list[Person]:
    if path is None:
        return list(WQ_PERSONS)
    cols = ["person", "label", "subject", "object", "pronoun", "possessive", "reflexive", "is/are"]
    persons = []
    for rec in records(path, cols):
        empty = [c for c in cols if not _v(rec[c])]
        if empty:
            cell = next(rec[c] for c in cols if rec[c] is not None)
            raise DataError(f"{cell.file}, row {cell.row}: person is missing {', '.join(empty)}")  # type: ignore[union-attr]
        persons.append(Person(_v(rec["person"]), _v(rec["label"]), {c: _v(rec[c]).lower() for c in cols[2:]}))
    return persons


def _settings(path: Path) -> Settings:
    if not path.is_file():
        return Settings()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: not valid TOML ({exc})") from None
    unknown = set(data) - {"names_per_person", "counterfactuals_per_sentence", "verb_phrases"}
    if unknown:
        raise DataError(f"{path}: unknown setting(s) {', '.join(sorted(unknown))}")

    def count(key: str, default: int) -> int | None:
        value = data.get(key, default)
        if value == "all":
            return None
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise DataError(f'{path}: {key} must be a positive whole number or "all", got {value!r}')
        return value

    verb = data.get("verb_phrases", True)
    if not isinstance(verb, bool):
        raise DataError(f"{path}: verb_phrases must be true or false, got {verb!r}")
    return Settings(count("names_per_person", 5), count("counterfactuals_per_sentence", 2), verb)
