"""Automatic medal extraction for the Olympic results probe.

The paper's annotators turned every generated answer into NOC codes for gold, silver and bronze
(and, for gender-ambiguous prompts, into men's / women's / unstated results). This package does
the same with rules, one step per module:

* ``text``       clean-up (chat template, echoed prompt), lines, sentences, clauses, cue words
* ``countries``  country mentions -> NOC codes (year-aware, "X (Y)" qualifiers folded)
* ``pairs``      mentions + medal words -> (country, medal) pairs inside a sentence (the medal, weak and
                 gender cues in ``cues``, the pairing clause by clause in ``clauses``)
* ``lines``      walks the answer line by line keeping the context a reader keeps: the
                 current men's / women's section, a medal heading ("**Gold:**") waiting
                 for its country, ranked lists (1. 2. 3.), parts about another event
                 (beach volleyball, world championships) that do not count, results that
                 changed later, and corrections that replace earlier results
                 (helpers in ``context``; markdown tables in ``tables``).
* ``result``     the hits -> an :class:`Extraction`: results per gender group and medal.
* this module    the entry points: one answer (:func:`extract_specified`,
                 :func:`extract_underspecified`) or a whole annotated-style frame
                 (:func:`extract_frame`).
"""

from __future__ import annotations

import pandas as pd

from biaslab.probes.olympics.annotated import split_nocs
from biaslab.probes.olympics.extract.cues import MEDALS
from biaslab.probes.olympics.extract.lines import extract_medals
from biaslab.probes.olympics.extract.result import Extraction
from biaslab.probes.olympics.nocs_history import same_country

__all__ = ["Extraction", "extract_specified", "extract_underspecified", "extract_frame"]


def _gender_code(gender: str | None) -> str | None:
    if not gender:
        return None
    g = gender.strip().lower()
    if g.startswith(("w", "f")):
        return "f"
    if g.startswith("m"):
        return "m"
    return None


def extract_specified(
    text: str,
    *,
    year: int,
    gender: str | None = None,
    event: str | None = None,
    discipline: str | None = None,
    official: bool = False,
) -> Extraction:
    """Medals named in an answer to a prompt that states the gender ("Men's ..."); group "x".

    ``official=True`` maps names to the team that competed that year ("Russia" in 2020 -> ROC);
    the default follows the paper's annotators, who mapped names literally ("Russia" -> RUS).
    """
    return extract_medals(text, int(year), _gender_code(gender), event, discipline, True, official)


def extract_underspecified(
    text: str, *, year: int, event: str | None = None, discipline: str | None = None, official: bool = False
) -> Extraction:
    """Medals named in an answer to a gender-free prompt, split into groups "u", "f" and "m"."""
    return extract_medals(text, int(year), None, event, discipline, False, official)


def _cell(row: dict, col: str) -> str:
    v = row.get(col)
    return "" if v is None or (isinstance(v, float) and v != v) else str(v).strip()


def _gold_spelling(row_gold: set[str], file_gold: set[str]):
    """Write an extracted code the way the gold columns spell that country's code.

    The extractor writes current codes ("Singapore" -> SGP); a file whose gold columns use a
    former code of the same country (SIN) gets SIN, so codes compare as the annotators wrote them.
    The row's own gold comes first, then the codes used anywhere in the file's gold columns.
    """

    def spell(code: str) -> str:
        for pool in (row_gold, file_gold):
            if code in pool:
                return code
            for g in sorted(pool):
                if same_country(g, code):
                    return g
        return code

    return spell


def extract_frame(df: pd.DataFrame, *, official: bool = False) -> pd.DataFrame:
    """Fill the ``gen_*`` and ``status`` columns of an annotated-style frame from ``text``.

    Underspecified frames are recognised by a ``real_f_g`` column. Existing ``gen_*`` values are
    ignored. Columns ``flags`` and ``unmapped`` (";"-joined) are appended at the end.
    """
    under = "real_f_g" in df.columns
    out = df.copy()
    cols = [f"gen_{g}_{m}" for g in ("u", "f", "m") for m in MEDALS] if under else [f"gen_{m}" for m in MEDALS]
    values: dict[str, list[str]] = {c: [] for c in cols + ["status", "flags", "unmapped"]}
    gold_cols = [c for c in df.columns if str(c).startswith("real_")]
    file_gold = {c for col in gold_cols for v in df[col].astype(str) for c in split_nocs(v)}
    for r in df.to_dict("records"):
        spell = _gold_spelling({c for col in gold_cols for c in split_nocs(_cell(r, col))}, file_gold)
        year = int(float(_cell(r, "Year") or 0))
        ev, disc, text = _cell(r, "Event"), _cell(r, "Discipline"), _cell(r, "text")
        if under:
            x = extract_underspecified(text, year=year, event=ev, discipline=disc, official=official)
            for g in ("u", "f", "m"):
                for m in MEDALS:
                    values[f"gen_{g}_{m}"].append(",".join(map(spell, x.medals[g][m])))
        else:
            x = extract_specified(
                text, year=year, gender=_cell(r, "Gender"), event=ev, discipline=disc, official=official
            )
            for m in MEDALS:
                values[f"gen_{m}"].append(",".join(map(spell, x.medals["x"][m])))
        values["status"].append(x.status)
        values["flags"].append(";".join(x.flags))
        values["unmapped"].append(";".join(x.unmapped))
    for c, v in values.items():
        if c in ("flags", "unmapped") and c in out.columns:
            out = out.drop(columns=c)
        out[c] = v
    return out
