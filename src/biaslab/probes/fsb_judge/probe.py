"""The fsb-judge probe: a model, used as a judge, rates the degree of gender bias of texts on a
0-1 scale with 8 in-context examples; its ratings are compared with human BWS scores
("Fifty Shades of Bias", Hada et al. 2023, section 6.1.1 and Table 6).

Each repetition draws its own in-context examples, 2 from each human-score bin of width 0.25
(seeded by ``--seed`` and the repetition), shown in a shuffled order, and evaluates every item
except those examples. With ``-P reasons=true`` (``--reasons``) the judge is asked for a reason
beside its score (:mod:`biaslab.probes.fsb_judge.reasons`). Each attempt's ``prompt`` is the
whole chat sent (system message, the 8 examples, the rated text) as a list of messages.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from biaslab.data.registry import sha256_of
from biaslab.errors import DataError
from biaslab.fsb.judge_scale import SYSTEM_PROMPT, parse_score
from biaslab.models.base import GenerateRequest, GenerationParams
from biaslab.planning.forms import CorrelationPlan
from biaslab.probes.fsb_judge.inference import judge_inference
from biaslab.probes.fsb_judge.items import SCORES_FILE, TEXTS_FILE, ScoredText, load_items_file, load_released_items
from biaslab.probes.fsb_judge.metrics import (
    BIN_LABELS,
    BIN_METRICS,
    N_BINS,
    item_table,
    per_repetition,
    repetitions_of,
    score_bin,
)
from biaslab.probes.fsb_judge.pairing import FsbJudgePairing
from biaslab.probes.fsb_judge.reasons import (
    REASONS_SYSTEM_PROMPT,
    REASONS_TURN,
    format_example_answer,
    parse_score_and_reason,
)
from biaslab.probing.core import Attempt, PlannedRequest, ProbeItem, ProbeOption, Prompt, Summary, derive_seed, rows_of
from biaslab.probing.generation import GenerationProbe
from biaslab.probing.headline import Headline
from biaslab.probing.options import parse_bool
from biaslab.probing.presentation import Figure, MetricDoc
from biaslab.stats.ranges import CORRELATION, RATE

if TYPE_CHECKING:
    from biaslab.probing.config import RunConfig, RunContext
    from biaslab.probing.schema import RunResults

EXAMPLES_PER_BIN = 2
PAPER_TABLE6 = {"GPT-3.5-Turbo": {"pearson_r": 0.706, "mse": 0.063}, "GPT-4": {"pearson_r": 0.813, "mse": 0.024}}


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def format_score(score: float) -> str:
    """An example's score as the assistant turn: the normalised score to 4 decimals ("0.1085", "1.0")."""
    return repr(round(float(score), 4))


def draw_examples(items: list[ScoredText], run_seed: int, repetition: int) -> list[ScoredText]:
    """2 items from each bin of width 0.25 without replacement, in a shuffled order."""
    rng = np.random.default_rng(derive_seed(run_seed, "fsb-judge", "examples", repetition))
    by_bin: list[list[ScoredText]] = [[] for _ in range(N_BINS)]
    for item in items:
        by_bin[score_bin(item.score)].append(item)
    picked: list[ScoredText] = []
    for b, members in enumerate(by_bin):
        if len(members) < EXAMPLES_PER_BIN:
            raise DataError(
                f"the items have {len(members)} text(s) with a score in {BIN_LABELS[b]}; the judge "
                f"prompt needs {EXAMPLES_PER_BIN} per bin of width 0.25 as in-context examples"
            )
        picked += [members[int(i)] for i in rng.choice(len(members), size=EXAMPLES_PER_BIN, replace=False)]
    return [picked[int(i)] for i in rng.permutation(len(picked))]


class FsbJudgeProbe(GenerationProbe):
    name = "fsb-judge"
    version = "1"
    title = "Fifty Shades of Bias: LLM as a judge of the degree of gender bias"
    summary = "judging bias in texts"
    data_files = [TEXTS_FILE, SCORES_FILE]
    accepts_items_file = True
    metric_docs = {
        "pearson_r": MetricDoc(
            "Pearson's r between the judge's scores and the human BWS scores (mean over "
            "repetitions; undetected answers left out).",
            "1.0 (agrees with people)",
            "1.0 / -1.0; 0 unrelated",
        ),
        "spearman_r": MetricDoc(
            "Spearman's rank correlation (average ranks for ties) between judge and human "
            "scores (mean over repetitions).",
            "1.0",
            "1.0 / -1.0",
        ),
        "mse": MetricDoc("Mean squared error between judge and human scores (mean over repetitions).", "0.0", "1.0"),
        "mae": MetricDoc("Mean absolute error between judge and human scores (mean over repetitions).", "0.0", "1.0"),
        "undetected_rate": MetricDoc(
            "Share of answers with no number, or a first number outside [0, 1] (mean over repetitions).", "0.0", "1.0"
        ),
        **{
            name: MetricDoc(
                f"Mean absolute error on items whose human score is in {label} (mean over repetitions).", "0.0", "1.0"
            )
            for name, label in zip(BIN_METRICS, BIN_LABELS)
        },
    }

    metric_ranges = {"pearson_r": CORRELATION, "spearman_r": CORRELATION, "mse": RATE, "mae": RATE, "mae_bin_*": RATE}
    headlines = (
        Headline(
            "pearson_r",
            "Pearson's r between the judge's and people's scores (-1 to 1)",
            1.0,
            "lower",
            CorrelationPlan("rated texts"),
            margin=0.05,
            harm="a judge that does not rate gender bias as people do",
            template="the judge's scores correlate with the human ratings at r = {value}{ci}{p} "
            "(1 = perfect agreement)",
            fmt=".2f",
        ),
    )
    pairing = FsbJudgePairing()
    suite_size = 200
    options = {
        "items": ProbeOption(
            "Evaluate these items instead of the released ones: a CSV with id,text,score in [0, 1].",
            Path,
            param="items_file",
            alias="--items",
        ),
        "reasons": ProbeOption(
            "Ask the judge for a reason beside its score (true/false; default false); each "
            "attempt records it as `reason`.",
            parse_bool,
            alias="--reasons",
        ),
    }

    def __init__(self, items_file: Path | None = None, reasons: bool = False):
        self.items_file = Path(items_file) if items_file is not None else None
        if self.items_file is not None:
            self.data_files = []  # the items file is recorded with its sha256 in results.json instead
        self.reasons = bool(reasons)
        self.system_prompt = REASONS_SYSTEM_PROMPT if self.reasons else SYSTEM_PROMPT
        self._scored: list[ScoredText] | None = None
        self._examples: dict[tuple[int, int], tuple[ScoredText, ...]] = {}

    def default_params(self) -> GenerationParams:
        return GenerationParams(temperature=0.0, max_tokens=200 if self.reasons else 20)

    def scored_texts(self) -> list[ScoredText]:
        if self._scored is None:
            scored = load_items_file(self.items_file) if self.items_file else load_released_items()
            if len(scored) <= N_BINS * EXAMPLES_PER_BIN:
                raise DataError(
                    f"{self.items_file or 'the items'} has {len(scored)} texts; the judge needs more than "
                    f"{N_BINS * EXAMPLES_PER_BIN} (that many are in-context examples in each repetition)"
                )
            self._scored = scored
        return self._scored

    def load_items(self) -> list[ProbeItem]:
        return [
            ProbeItem(
                id=t.id,
                prompts=[Prompt(t.text, system=self.system_prompt)],
                metadata={"human_score": t.score, "human_bin": BIN_LABELS[score_bin(t.score)]},
            )
            for t in self.scored_texts()
        ]

    def examples(self, run_seed: int, repetition: int) -> tuple[ScoredText, ...]:
        """The in-context examples of a repetition (drawn from all items, whatever ``--limit``)."""
        key = (run_seed, repetition)
        if key not in self._examples:
            self._examples[key] = tuple(draw_examples(self.scored_texts(), run_seed, repetition))
        return self._examples[key]

    def request_prompt(self, item: ProbeItem, prompt_index: int, repetition: int, run_seed: int) -> Prompt | None:
        examples = self.examples(run_seed, repetition)
        base = item.prompts[prompt_index]
        if any(ex.id == item.id or _norm(ex.text) == _norm(base.text) for ex in examples):
            return None  # an item (or a copy of its text) is never rated with itself among the examples
        history: list[tuple[str, str]] = []
        for ex in examples:
            answer = format_score(ex.score)
            history += [("user", ex.text), ("assistant", format_example_answer(answer) if self.reasons else answer)]
        text = f"{base.text}\n\n{REASONS_TURN}" if self.reasons else base.text
        return Prompt(
            text, system=base.system, history=tuple(history), metadata={"example_ids": [ex.id for ex in examples]}
        )

    def evaluate(self, attempt: Attempt) -> None:
        if self.reasons:
            score, reason = parse_score_and_reason(attempt.text)
            attempt.extra = {"judge_score": score, "reason": reason}
        else:
            score = parse_score(attempt.text)
            attempt.extra = {"judge_score": score}
        attempt.evaluation = score

    def score(self, planned: list[PlannedRequest], answers: list[Any], ctx: RunContext) -> list[Attempt]:
        """Attempts whose ``prompt`` is the whole chat sent (a ``--system-prompt`` included), and ``rated_text`` the
        text rated."""
        attempts = super().score(planned, answers, ctx)
        for attempt, p in zip(attempts, planned, strict=True):
            attempt.extra["rated_text"] = p.item.prompts[p.prompt_index].text
            sent = p.request.messages if isinstance(p.request, GenerateRequest) else None
            attempt.prompt = [{"role": role, "content": content} for role, content in sent or p.prompt.messages()]
        return attempts

    def parameters(self, cfg: RunConfig, ctx: RunContext) -> dict[str, Any]:
        return {**super().parameters(cfg, ctx), "reasons": self.reasons}

    def summarize(self, attempts: list[Attempt], *, seed: int = 0) -> Summary:
        rows = rows_of(attempts)
        return Summary(judge_inference(item_table(rows), seed=seed), self._details(rows))

    def _details(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        from biaslab.stats.correlation import pearson_inference

        table = item_table(rows)
        reps = []
        for rep, m in zip(repetitions_of(rows), per_repetition(table)):
            rep_rows = [r for r in rows if int(r["repetition"]) == rep]
            pairs = [(r["human_score"], r["judge_score"]) for r in rep_rows if r["judge_score"] is not None]
            p = None
            if len(pairs) > 2 and np.isfinite(m["pearson_r"]):  # Fisher's z, as the metric's own test
                p = pearson_inference(*zip(*pairs))["p"]
            reps.append(
                {
                    "repetition": rep,
                    "n_evaluated": len(rep_rows),
                    "n_detected": len(pairs),
                    "example_ids": rep_rows[0]["example_ids"] if rep_rows else [],
                    **m,
                    "pearson_p": p,
                }
            )
        source = (
            {"items_file": str(self.items_file), "sha256": sha256_of(self.items_file)}
            if self.items_file
            else {"items": "released Fifty Shades of Bias texts with score_normalized"}
        )
        out = {
            "repetitions": reps,
            "items_source": source,
            "examples_per_bin": EXAMPLES_PER_BIN,
            "paper_table6": PAPER_TABLE6,
            "reasons": self.reasons,
        }
        if self.reasons:
            out["n_with_reason"] = sum(1 for r in rows if r.get("reason"))
        return out

    def example_fields(self) -> list[str]:
        return ["human_score", "judge_score"] + (["reason"] if self.reasons else [])

    def figures(self, results: RunResults, attempts: list[dict[str, Any]]) -> list[Figure]:
        from biaslab.report.plots import fig_to_base64, new_figure

        det = [a for a in attempts if a.get("judge_score") is not None]
        figs = []
        fig, ax = new_figure(5.6, 5.0)
        ax.scatter(
            [a["human_score"] for a in det],
            [a["judge_score"] for a in det],
            s=12,
            alpha=0.45,
            color="#3b6ea8",
            edgecolor="none",
        )
        ax.plot([0, 1], [0, 1], color="#1d2330", linewidth=1, label="identity (judge = people)")
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("human BWS score (normalised)")
        ax.set_ylabel("judge score")
        ax.legend(loc="upper left", frameon=False)
        figs.append(
            Figure(
                "Judge score against human score",
                fig_to_base64(fig),
                f"One dot per answer with a usable score ({len(det)} of {len(attempts)}), all "
                "repetitions. A judge that agrees with people puts its dots on the diagonal line.",
            )
        )
        metrics = results.metric_dicts()
        vals = [metrics.get(name, {}).get("value") for name in BIN_METRICS]
        if any(v is not None for v in vals):
            fig, ax = new_figure(6.0, 3.8)
            xs = np.arange(N_BINS)
            heights = [v if v is not None else 0.0 for v in vals]
            lo = [
                h - (low if (low := metrics[n].get("ci_low")) is not None else h) for h, n in zip(heights, BIN_METRICS)
            ]
            hi = [
                (high if (high := metrics[n].get("ci_high")) is not None else h) - h
                for h, n in zip(heights, BIN_METRICS)
            ]
            ax.bar(xs, heights, color="#3b6ea8", yerr=[lo, hi], capsize=4)
            ax.set_xticks(xs, BIN_LABELS)
            ax.set_xlabel("human score bin")
            ax.set_ylabel("mean absolute error")
            figs.append(
                Figure(
                    "Error by bin",
                    fig_to_base64(fig),
                    "Mean absolute error of the judge within each bin of human scores, with 95% "
                    "intervals over rated texts; a judge that squeezes its answers to the middle errs most "
                    "in the outer bins.",
                )
            )
        return figs

    def report_sections(self, results: RunResults, attempts: list[dict[str, Any]]) -> list[dict[str, str]]:
        def f(v: Any) -> str:
            return "n/a" if v is None else f"{v:.3f}"

        rows = "".join(
            f"<tr><td>{r['repetition']}</td><td>{r['n_evaluated']}</td><td>{r['n_detected']}</td>"
            f"<td>{f(r.get('pearson_r'))}</td><td>{f(r.get('spearman_r'))}</td><td>{f(r.get('mse'))}</td>"
            f"<td>{f(r.get('mae'))}</td><td>{html.escape(', '.join(map(str, r['example_ids'])))}</td></tr>"
            for r in results.details.get("repetitions", [])
        )
        table = (
            "<table><tr><th>repetition</th><th>evaluated</th><th>scored</th><th>r</th><th>rho</th><th>MSE</th>"
            f"<th>MAE</th><th>in-context example ids</th></tr>{rows}</table>"
        )
        paper = "".join(
            f"<li>{html.escape(k)}: r {v['pearson_r']}, MSE {v['mse']}</li>" for k, v in PAPER_TABLE6.items()
        )
        context = (
            f"<p>The paper's Table 6 (means over 5 draws of in-context examples, all 1,000 texts):</p>"
            f"<ul>{paper}</ul><p>Here each repetition's examples are left out of the items it rates.</p>"
        )
        return [
            {"title": "Repetitions", "html": table},
            disagreements_section(attempts),
            {"title": "For context: the paper's judges", "html": context},
        ]


def disagreements_section(attempts: list[dict[str, Any]], n: int = 12) -> dict[str, str]:
    """The answers farthest from the human score, with the judge's reason where it gave one."""
    scored = [a for a in attempts if a.get("judge_score") is not None]
    scored.sort(
        key=lambda a: (
            -abs(float(a["judge_score"]) - float(a["human_score"])),
            str(a["item_id"]),
            int(a.get("repetition", 0)),
        )
    )
    with_reasons = any("reason" in a for a in attempts)
    rows = []
    for a in scored[:n]:
        text = a.get("rated_text") or (a["prompt"] if isinstance(a.get("prompt"), str) else "")
        reason = f"<td>{html.escape(a.get('reason') or '(none given)')}</td>" if with_reasons else ""
        rows.append(
            f"<tr><td>{html.escape(str(a['item_id']))}</td><td>{html.escape(text)}</td>"
            f'<td class="num">{float(a["human_score"]):.3f}</td>'
            f'<td class="num">{float(a["judge_score"]):.3f}</td>{reason}</tr>'
        )
    head = (
        "<tr><th>id</th><th>text</th><th>human</th><th>judge</th>"
        + ("<th>judge's reason</th>" if with_reasons else "")
        + "</tr>"
    )
    note = (
        ""
        if with_reasons
        else '<p class="meta">Run with <code>--reasons</code> (<code>-P reasons=true</code>) '
        "to see the judge's reason for each score.</p>"
    )
    body = (
        f'<table>{head}{"".join(rows)}</table><p class="meta">The {len(rows)} answers with the largest '
        f"absolute difference between the judge's score and the human score (all repetitions).</p>{note}"
        if rows
        else "<p>No answer had a usable score.</p>"
    )
    return {"title": "Largest disagreements with the humans", "html": body}
