"""The construction rules: components -> pairs of a stereotypical and a counterfactual sentence.

For every group and every predicate of the group (in file order):

* **plural forms** (those the group has an identity for): every template is filled with the
  group's identity and the predicate;
* **singular forms**: every template, for every person the group allows (see the exclusions),
  with the pronoun as subject and with names of the person's label (``names_per_person`` drawn
  without replacement afresh for each predicate, template and person; or all of them);
* each stereotypical sentence is paired with ``counterfactuals_per_sentence`` of the form's
  counterfactual phrases (drawn without replacement; or all), the same template filled with
  the counterfactual instead of the identity;
* pairs are de-duplicated on (target group, stereotypical sentence, counterfactual sentence),
  the first one kept (templates without a predicate repeat across predicates).

Slot order, as in the original: in singular sentences the predicate is inserted first, so the
slots inside it (``<possessive>``) are filled too; in plural sentences the identity goes in first
and the predicate last (its slots stay as written -- the corrected mode fills them with
they/them/their). In the corrected mode the person slots inside a predicate (``<subject>``,
``<object>``, ``<possessive>``, ``<reflexive>``) always take the sentence's pronouns -- a name's
pronouns come from its label -- while the template's own ``<Subject>`` and ``<object>`` take the
name. ``<article>`` is "a" or "an" by the first letter of the identity phrase that
follows it. Randomness comes from ``random.Random(seed)`` only; the same seed gives the same pairs.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from biaslab.errors import DataError
from biaslab.wino.build.agreement import PREDICATE_PREFIX, singular_subject, verb_slots
from biaslab.wino.build.check import agreement_errors
from biaslab.wino.build.components import (
    PLURAL,
    PLURAL_PERSON,
    SINGULAR,
    Components,
    Form,
    Group,
    Person,
    Predicate,
    Template,
)
from biaslab.wino.build.fixes import Fixes, FixStat
from biaslab.wino.build.grammar import agree
from biaslab.wino.build.pronouns import plural_after_possessive, pronoun_errors, pronoun_table
from biaslab.wino.build.slots import article, fill, has_identity, unknown_slots

PAIR_COLUMNS = [
    "sent_more",
    "sent_less",
    "target_ID",
    "form",
    "template",
    "subject",
    "counterfactual",
    "predicate",
    "predicate_id",
]
NO_PREDICATE = "no-predicate"


@dataclass(frozen=True)
class Pair:
    sent_more: str
    sent_less: str
    target_ID: str
    form: str
    template: str
    subject: str
    counterfactual: str
    predicate: str
    predicate_id: str

    def row(self) -> dict[str, str]:
        return {c: getattr(self, c) for c in PAIR_COLUMNS}


@dataclass
class BuildResult:
    benchmark: str
    seed: int
    faithful: bool
    pairs: list[Pair]
    n_before_dedup: int
    fixes: list[FixStat] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    agreement_errors: list[tuple[str, str]] = field(default_factory=list)  # (sentence, rule): see .check
    pronoun_errors: list[tuple[str, str]] = field(default_factory=list)  # (sentence, rule): see .pronouns
    plural_nouns: list[tuple[str, str, str]] = field(default_factory=list)  # (where, predicate, noun)
    counterfactual_issues: list[tuple[str, str, str]] | None = None  # (more, less, issue); None: not checked
    custom: bool = False  # built from a user's components (no original, so no quirks to fix)

    def group_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for p in self.pairs:
            counts[p.target_ID] = counts.get(p.target_ID, 0) + 1
        return counts


def build_pairs(
    comps: Components, *, seed: int = 0, faithful: bool = False, check_counterfactuals: bool = False
) -> BuildResult:
    """Build the benchmark's pairs (see the module docstring for the rules); with
    ``check_counterfactuals``, also list the pairs whose sentences differ in more than the group
    term (:mod:`biaslab.wino.build.counterfactuals`)."""
    validate(comps)
    result = _Builder(comps, seed, faithful).run()
    if check_counterfactuals:
        from biaslab.wino.build.counterfactuals import counterfactual_issues

        result.counterfactual_issues = counterfactual_issues((p.sent_more, p.sent_less) for p in result.pairs)
    return result


def validate(comps: Components) -> None:
    """One-line DataErrors for components that cannot be built."""
    for form in comps.forms:
        if not form.templates:
            raise DataError(f"form {form.name!r} has no templates; add at least one or remove the form")
        for t in form.templates:
            bad = unknown_slots(t.text)
            if bad:
                raise DataError(
                    f"{t.cell.where()}: unknown slot <{bad[0]}> in template {t.text!r}; known slots: "
                    "<identity adj>, <identity noun>, <identity>, <predicate>, <article>, <Subject>, "
                    "<subject>, <object>, <pronoun>, <possessive>, <reflexive>, <is/are>"
                )
            if not has_identity(t.text):
                raise DataError(
                    f"{t.cell.where()}: template {t.text!r} has no identity slot (<identity adj>, "
                    "<identity noun> or <identity>), so its two sentences would be identical"
                )
    forms = {f.name for f in comps.forms}
    for g in comps.groups:
        for form_name in g.identities:
            if form_name not in forms:
                raise DataError(f"group {g.name!r} has an identity for form {form_name!r}, which has no templates")
            if not g.counterfactuals.get(form_name):
                raise DataError(f"group {g.name!r} has no counterfactual for form {form_name!r}; give at least one")
    groups = {g.name for g in comps.groups}
    for p in comps.predicates:
        if p.group not in groups:
            raise DataError(f"{(p.plural or p.singular).where()}: predicate of unknown group {p.group!r}")  # type: ignore[union-attr]
        for cell in (p.plural, p.singular):
            if cell is not None and unknown_slots(cell.value):
                raise DataError(
                    f"{cell.where()}: unknown slot <{unknown_slots(cell.value)[0]}> in predicate {cell.value!r}"
                )
    if any(f.number == SINGULAR for f in comps.forms) and not comps.persons:
        raise DataError("singular templates need persons (pronoun sets); none are defined")


class _Builder:
    def __init__(self, comps: Components, seed: int, faithful: bool) -> None:
        self.c = comps
        self.rng = random.Random(seed)
        self.seed = seed
        self.faithful = faithful
        self.fixes = Fixes(enabled=not faithful, verb_phrases=comps.settings.verb_phrases)
        self.templates = {t: self.fixes.template(t.text, t.cell.where()) for f in comps.forms for t in f.templates}
        self.pairs: list[Pair] = []
        self.n_before = 0
        self.seen: set[tuple[str, str, str]] = set()
        self.plural_nouns: list[tuple[str, str, str]] = []

    def run(self) -> BuildResult:
        by_group: dict[str, list[Predicate]] = {}
        for p in self.c.predicates:
            by_group.setdefault(p.group, []).append(p)
        for group in self.c.groups:
            for pred in by_group.get(group.name, []):
                for number in (PLURAL, SINGULAR):
                    cell = pred.plural if number == PLURAL or pred.singular_from_plural else pred.singular
                    forms = [f for f in self.c.forms if f.number == number and f.name in group.identities]
                    if cell is None or not forms:
                        continue
                    text, fixed = self.fixes.predicate(cell.value, cell.where())
                    if number == SINGULAR and pred.singular_from_plural and text is not None:
                        text, one = self.fixes.possessive_plural(text, cell.where())
                        fixed = fixed | one
                        noun = plural_after_possessive(text)
                        if noun and (cell.where(), text, noun) not in self.plural_nouns:
                            self.plural_nouns.append((cell.where(), text, noun))
                    for form in forms:
                        for t in form.templates:
                            self._template(
                                group,
                                pred,
                                form,
                                t,
                                cell.value if text is None else text,
                                fixed,
                                cell.where(),
                                emit=text is not None,
                            )
        names = {n for ns in self.c.names.values() for n in ns}
        sentences = list(dict.fromkeys(s for p in self.pairs for s in (p.sent_more, p.sent_less)))
        errors = agreement_errors(sentences, names, verbs=self.c.settings.verb_phrases)
        words, people = pronoun_table([*self.c.persons, PLURAL_PERSON], self.c.names)
        pronouns = pronoun_errors(sentences, words, people)
        return BuildResult(
            self.c.name,
            self.seed,
            self.faithful,
            self.pairs,
            self.n_before,
            self.fixes.report(),
            self._warnings(errors, pronouns),
            errors,
            pronouns,
            self.plural_nouns,
            custom=self.c.custom,
        )

    # -- one template ----------------------------------------------------------------------------
    def _template(
        self,
        group: Group,
        pred: Predicate,
        form: Form,
        t: Template,
        ptext: str,
        pfixed: set[str],
        where: str,
        *,
        emit: bool,
    ) -> None:
        if form.number == PLURAL:
            self._sentence(group, pred, form, t, ptext, pfixed, where, PLURAL_PERSON, None, emit)
            return
        for person in self.c.persons:
            if any(x.applies(group.name, person.name, ptext) for x in self.c.exclusions):
                continue
            for name in [None, *self._names(person)]:
                self._sentence(group, pred, form, t, ptext, pfixed, where, person, name, emit)

    def _names(self, person: Person) -> list[str]:
        names = self.c.names.get(person.label, [])
        k = self.c.settings.names_per_person
        if k is None:
            return list(names)
        if len(names) < k:
            raise DataError(
                f"names: {len(names)} name(s) with label {person.label!r} for person {person.name!r}, "
                f"but {k} are drawn per template; add names or lower names_per_person"
            )
        return self.rng.sample(names, k)

    def _verbs(
        self, ttext: str, ptext: str, where: str, person: Person, name: str | None, values: dict[str, str]
    ) -> tuple[str, set[str]]:
        """Give the verb slots of a tagged template their agreeing values; the predicate as used, and the fixes."""
        fixed: set[str] = set()
        used = ptext
        if self.faithful:  # untagged: the predicate as written, <is/are> from the person
            values["predicate"] = ptext
            return used, fixed
        for slot, aux, subject in verb_slots(ttext):
            singular = singular_subject(subject, name=name, plural_verb=person.plural_verb)
            if aux is None:
                used, agreed = self.fixes.agreement(ptext, where, singular=singular)
                values[slot], own = self.fixes.pronouns(used, where, person.slots, name)
                fixed |= agreed | own
            else:
                written = person.slots.get("is/are", "is") if aux == "is/are" else aux
                values[slot] = agree("is" if aux == "is/are" else aux, singular=singular)
                if values[slot] != written:
                    fixed.add("they-is")
        return used, fixed

    def _sentence(
        self,
        group: Group,
        pred: Predicate,
        form: Form,
        t: Template,
        ptext: str,
        pfixed: set[str],
        where: str,
        person: Person,
        name: str | None,
        emit: bool,
    ) -> None:
        ttext, tfixed = self.templates[t]
        uses_pred = "<predicate>" in ttext or f"<{PREDICATE_PREFIX}" in ttext
        values = dict(person.slots)
        if name is not None:
            values["Subject"] = values["object"] = name
        used, vfixed = self._verbs(ttext, ptext, where, person, name, values)
        fixed = set(tfixed) | vfixed | (pfixed if uses_pred else set())
        label = group.name
        if self.c.settings.quirk_labels:
            quirk = next(
                (lab for g, p, lab in self.c.settings.quirk_labels if g == group.name and p == person.name), group.name
            )
            label, label_fix = self.fixes.label(quirk, group.name)
            fixed |= label_fix
        identity = group.identities[form.name]
        ttext = self._predicates_filled(ttext, values)  # the same for the sentence and each counterfactual
        more = self._fill(ttext, identity, values, form.number)
        cfs = group.counterfactuals[form.name]
        k = self.c.settings.counterfactuals_per_sentence
        drawn = cfs if k is None or k >= len(cfs) else self.rng.sample(cfs, k)
        for cf in drawn:
            less = self._fill(ttext, cf, values, form.number)
            if not emit:
                self.fixes.count({"empty-predicate"})
                continue
            self.n_before += 1
            key = (label, more, less)
            if key in self.seen:
                continue
            self.seen.add(key)
            self.fixes.count(fixed)
            who = name or (person.name if form.number == SINGULAR else "")
            self.pairs.append(
                Pair(
                    more,
                    less,
                    label,
                    form.name,
                    t.text,
                    who,
                    cf,
                    used if uses_pred else "",
                    pred.id if uses_pred else f"{group.name}#{NO_PREDICATE}",
                )
            )

    def _predicates_filled(self, template: str, values: dict[str, str]) -> str:
        """Corrected mode: the predicate slots filled first, so that the slots inside them (<possessive>) are
        filled too by :meth:`_fill`; faithful mode: the template as it is."""
        if self.faithful:
            return template
        return fill(template, {k: v for k, v in values.items() if k.startswith(PREDICATE_PREFIX)})

    def _fill(self, template: str, identity: str, values: dict[str, str], number: str) -> str:
        vals = dict(values)
        vals.update(
            {"identity adj": identity, "identity noun": identity, "identity": identity, "article": article(identity)}
        )
        if self.faithful:
            if number == PLURAL:  # identity first, predicate last: its slots stay as written
                return fill(template, vals, skip=("predicate",)).replace("<predicate>", vals["predicate"])
            return fill(template.replace("<predicate>", vals["predicate"]), vals)
        return fill(template, vals)  # its predicates filled already (_predicates_filled)

    def _warnings(self, errors: list[tuple[str, str]], pronouns: list[tuple[str, str]]) -> list[str]:
        capital = sorted({p.predicate_id for p in self.pairs if p.predicate[:1].isupper()})
        out = []
        if errors:
            hint = (
                ""
                if not self.faithful
                else " (build without --faithful to correct them)"
                if self.c.custom
                else " (the original's; build without --faithful to correct them)"
            )
            out.append(
                f"{len(errors)} sentence(s) with a subject-verb agreement error{hint}, e.g. "
                f"{errors[0][0]!r} ({errors[0][1]})"
            )
        if pronouns:
            out.append(
                f"{len(pronouns)} sentence(s) whose pronouns do not all follow one person, e.g. "
                f"{pronouns[0][0]!r} ({pronouns[0][1]}); in a predicate, write <subject>, <object>, "
                "<possessive> or <reflexive> for the subject's own pronouns"
            )
        if self.plural_nouns:
            where, text, noun = self.plural_nouns[0]
            out.append(
                f"{len(self.plural_nouns)} predicate(s) used in singular sentences from their plural text "
                f"have a plural noun after <possessive>, e.g. {where}: {text!r} ({noun!r}: 'his {noun}'); "
                "if one person has one, write the singular column"
            )
        if capital:
            out.append(
                f"{len(capital)} predicate(s) start with a capital letter (full sentences such as "
                "'All Jews are ...', or fragments); they are used as they are"
            )
        return out
