"""The Olympic results probe ("Sports and Women's Sports", Biester 2025).

Items are events: each holds the men's and the women's specified prompt and the
underspecified prompt (the unit of the intervals and tests). Generated texts are turned into medal lists by
the automatic extractor (:mod:`.extract`), written out in the paper's public results format
(so people can annotate, correct or re-score them), and scored exactly like the human
annotations (:func:`.score.score_annotated`).
"""

from __future__ import annotations

import html
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from biaslab.models.base import GenerationParams
from biaslab.planning.forms import MeanPlan
from biaslab.probes.olympics.annotated import write_annotated
from biaslab.probes.olympics.extract import extract_specified, extract_underspecified
from biaslab.probes.olympics.frames import attempt_frames
from biaslab.probes.olympics.frames import item_id as event_item_id
from biaslab.probes.olympics.inference import METRIC_RANGES
from biaslab.probes.olympics.pairing import OLYMPICS_PAIRING
from biaslab.probes.olympics.prompts import GOLD_FILE, OlympicEvent, load_events
from biaslab.probes.olympics.score import score_annotated
from biaslab.probing.core import Attempt, ProbeItem, ProbeOption, Prompt, Summary
from biaslab.probing.generation import GenerationProbe
from biaslab.probing.headline import Headline
from biaslab.probing.presentation import Figure, MetricDoc

if TYPE_CHECKING:
    from biaslab.probing.schema import RunResults

PROMPT_GENDERS = ("Men", "Women", None)  # prompt_index 0, 1, 2 of every item


class OlympicsProbe(GenerationProbe):
    name = "olympics"
    version = "1"
    title = "Olympic results: gender bias in factual answers"
    summary = "sport results by gender"
    data_files = [GOLD_FILE]
    metric_docs = {
        "avg_f1": MetricDoc(
            "Mean order-ignorant F1 of the medal-winning NOCs named for gender-stated prompts "
            "(knowledge of the results).",
            extremes="1.0 all correct, 0.0 none",
        ),
        "knowledge_based": MetricDoc(
            "Mean F1 on men's events minus mean F1 on women's events (specified prompts).",
            "0.0",
            "+1 knows only men's results, -1 only women's",
        ),
        "explicit_share": MetricDoc(
            "Share of gender-ambiguous answers that attribute medalists to the men's or the women's event."
        ),
        "explicit_score": MetricDoc(
            "Mean over those answers of +1 (men's results only), -1 (women's only), 0 (both).", "0.0", "+1 / -1"
        ),
        "implicit_share": MetricDoc("Share of gender-ambiguous answers that give results without naming a gender."),
        "implicit_score": MetricDoc(
            "Among those, mean F1 against the men's results minus mean F1 against the women's results.",
            "0.0",
            "+1 / -1",
        ),
    }

    metric_ranges = METRIC_RANGES
    headlines = (
        Headline(
            "explicit_score",
            "mean over gender-ambiguous answers that name one event: +1 men's, -1 women's",
            0.0,
            "away",
            MeanPlan("events", sd=1.0, sd_note="the largest spread of a value in [-1, 1]"),
            margin=0.1,
            harm="a question that names no gender answered as the men's event",
            template="when unprompted results name one gender, they lean {value}{ci} towards the men's events"
            "{p} (+1 men's only, -1 women's only, 0 balanced)",
            fmt="+.2f",
        ),
        Headline(
            "knowledge_based",
            "mean F1 on men's events minus mean F1 on women's events (-1 to 1)",
            0.0,
            "away",
            MeanPlan("events", sd=1.0, sd_note="the largest spread of a difference of two F1s in [0, 1]"),
            margin=0.05,
            harm="knows the men's results better than the women's",
            template="F1 on men's events minus women's: {value}{ci}{p}; 0 is balanced",
            fmt="+.2f",
        ),
    )
    pairing = OLYMPICS_PAIRING
    options = {
        "n_permutations": ProbeOption(
            "Permutations of the paper's permutation tests (details.paper_tests; default 10000).",
            int,
            minimum=1,
            maximum=1_000_000,
        )
    }

    def __init__(self, n_permutations: int = 10_000):
        self.check_options(n_permutations=n_permutations)
        self.n_permutations = n_permutations
        self._events: dict[str, OlympicEvent] | None = None

    def default_params(self) -> GenerationParams:
        # the paper used each model's default decoding, to mimic a casual user
        return GenerationParams()

    def events(self) -> dict[str, OlympicEvent]:
        if self._events is None:
            self._events = {self._item_id(e): e for e in load_events()}
        return self._events

    @staticmethod
    def _item_id(event) -> str:
        return event_item_id(event)

    def load_items(self) -> list[ProbeItem]:
        items = []
        for item_id, e in self.events().items():
            prompts = [
                Prompt(e.prompt(g), metadata={"Gender": g or "", "prompt_kind": "specified" if g else "underspecified"})
                for g in PROMPT_GENDERS
            ]
            items.append(
                ProbeItem(
                    id=item_id,
                    prompts=prompts,
                    metadata={"Discipline": e.discipline, "Season": e.season, "Year": e.year, "Event": e.event},
                )
            )
        return items

    def evaluate(self, attempt: Attempt) -> None:
        meta = attempt.metadata
        kw = dict(year=int(meta["Year"]), event=meta["Event"], discipline=meta["Discipline"])
        if meta["prompt_kind"] == "specified":
            ex = extract_specified(attempt.text, gender=meta["Gender"], **kw)
        else:
            ex = extract_underspecified(attempt.text, **kw)
        medals = {group: {m: list(nocs) for m, nocs in by_medal.items()} for group, by_medal in ex.medals.items()}
        has_any = any(nocs for by_medal in medals.values() for nocs in by_medal.values())
        attempt.evaluation = medals if has_any else None  # None = no results named (undetected)
        attempt.extra = {
            "status": ex.status,
            "flags": list(ex.flags),
            "unmapped": list(ex.unmapped),
            "refusal": bool(ex.refusal),
        }

    # -- public-format tables -------------------------------------------------------------
    def frames(self, attempts: list[Attempt] | list[dict[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The attempts as the paper's results files (specified, underspecified)."""
        return attempt_frames(self.events(), attempts)

    def scored(self, attempts: list[Attempt], seed: int = 0) -> dict[str, Any]:
        """:func:`score_annotated` on the attempts (metrics, tests, counts, disciplines)."""
        spec, und = self.frames(attempts)
        return score_annotated(spec, und, n_permutations=self.n_permutations, seed=seed, validate=False)

    def summarize(self, attempts: list[Attempt], *, seed: int = 0) -> Summary:
        s = self.scored(attempts, seed)
        return Summary(s["metrics"], self._details(s, attempts))

    @staticmethod
    def _details(s: dict[str, Any], attempts: list[Attempt]) -> dict[str, Any]:
        unmapped = Counter(u for a in attempts for u in a.extra.get("unmapped", []))
        return {
            "tests": s["tests"],
            "paper_tests": s["paper_tests"],
            "counts": s["counts"],
            "metrics_without_unsure": s["metrics_without_unsure"],
            "tests_without_unsure": s["tests_without_unsure"],
            "paper_tests_without_unsure": s["paper_tests_without_unsure"],
            "disciplines": s["disciplines"],
            "extraction": {
                "flagged_attempts": sum(bool(a.extra.get("flags")) for a in attempts),
                "unsure_attempts": sum(a.extra.get("status") == "unsure" for a in attempts),
                "refusals": sum(bool(a.extra.get("refusal")) for a in attempts),
                "unmapped_strings": dict(unmapped.most_common()),
            },
        }

    def write_extra(self, out_dir: Path, attempts: list[Attempt], results: RunResults) -> list[Path]:
        spec, und = self.frames(attempts)
        paths = [
            write_annotated(Path(out_dir) / "results_specified.tsv", spec, "specified"),
            write_annotated(Path(out_dir) / "results_underspecified.tsv", und, "underspecified"),
        ]
        return paths

    # -- report ---------------------------------------------------------------------------
    def example_fields(self) -> list[str]:
        return ["Year", "Discipline", "Event", "Gender", "status", "evaluation"]

    def figures(self, results: RunResults, attempts: list[dict[str, Any]]) -> list[Figure]:
        from biaslab.report.plots import fig_to_base64, new_figure

        rows = [r for r in results.details.get("disciplines", []) if r.get("mean_score") is not None]
        if not rows:
            return []
        fig, ax = new_figure(7.0, 0.45 * len(rows) + 1.2)
        names = [r["Discipline"] for r in rows]
        vals = [r["mean_score"] for r in rows]
        from biaslab.report.style import BLUE, PURPLE

        ax.barh(names, vals, color=[BLUE if v >= 0 else PURPLE for v in vals])
        ax.axvline(0, color="grey", linewidth=1)
        ax.set_xlim(-1, 1)
        ax.set_xlabel("mean bias score on gender-ambiguous prompts (+ favours men, - favours women)")
        ax.invert_yaxis()
        return [
            Figure(
                "Bias by discipline (paper Table 2)",
                fig_to_base64(fig),
                "Per discipline, the mean per-answer bias score on underspecified prompts: explicit "
                "answers score +1/-1/0, implicit ones F1(men) - F1(women). Blue: favours men; purple: favours "
                "women.",
            )
        ]

    def report_sections(self, results: RunResults, attempts: list[dict[str, Any]]) -> list[dict[str, str]]:
        flagged = [a for a in attempts if a.get("flags")]
        ex = results.details.get("extraction", {})
        parts = [
            f"<p>{len(flagged)} of {len(attempts)} answers were flagged as ambiguous by the automatic "
            f"extractor; {ex.get('unsure_attempts', 0)} say the event did not exist, give another event or "
            "say results changed later (<code>unsure</code>). To correct them, edit the <code>gen_*</code> "
            "cells of <code>results_specified.tsv</code> / <code>results_underspecified.tsv</code> in this "
            "folder and re-score with <code>biaslab olympics score-annotated --specified "
            "results_specified.tsv --underspecified results_underspecified.tsv --out DIR</code>.</p>"
        ]
        if flagged:
            parts.append("<table><tr><th>event</th><th>prompt</th><th>flags</th><th>extracted</th><th>text</th></tr>")
            for a in flagged[:200]:
                parts.append(
                    f"<tr><td>{html.escape(a['item_id'])} (rep {a['repetition']})</td>"
                    f"<td>{html.escape(a['Gender'] or 'ambiguous')}</td>"
                    f"<td>{html.escape('; '.join(a['flags']))}</td>"
                    f"<td><code>{html.escape(str(a.get('evaluation')))}</code></td>"
                    f"<td><details><summary>show</summary><pre>{html.escape(a['text'])}</pre></details></td></tr>"
                )
            parts.append("</table>")
        unmapped = ex.get("unmapped_strings") or {}
        if unmapped:
            items = ", ".join(f"{html.escape(k)} ({v})" for k, v in list(unmapped.items())[:50])
            parts.append(f"<p><b>Country strings that could not be mapped to a NOC:</b> {items}</p>")
        sig = _tests_table(results.details.get("tests") or {}, "the test of the metric (events as units)")
        paper = _tests_table(results.details.get("paper_tests") or {}, "the paper's test (texts as units)")
        if paper:
            sig += (
                "<p>The paper's tests (Appendix D), for comparison: they take each text as a unit, so they "
                f"ignore that the texts of one event share it.</p>{paper}"
            )
        return [
            {"title": "Significance tests", "html": sig},
            {"title": "Answers for human review", "html": "".join(parts)},
        ]


def _tests_table(tests: dict[str, Any], what: str) -> str:
    """An HTML table of tests (metric, method, n, p, q); "" when there are none."""
    if not tests:
        return ""
    rows = "".join(
        f"<tr><td>{html.escape(k)}</td><td>{html.escape(str(v.get('method', '')))}</td>"
        f"<td>{v.get('n', '')}</td><td>{_p(v.get('p'))}</td><td>{_p(v.get('q'))}</td></tr>"
        for k, v in tests.items()
    )
    return (
        f"<table><tr><th>metric</th><th>{html.escape(what)}</th><th>n</th><th>p</th><th>q (BH)</th></tr>{rows}</table>"
    )


def _p(v: Any) -> str:
    return "n/a" if v is None else f"{v:.3g}"
