"""The `mbbq` probe: MBBQ, BBQ in English, Spanish, Dutch and Turkish with control sets (Neplenbroek et al. 2024).

Each question is asked in the authors' prompt wordings (``prompts.json`` beside this file) in its own language:

* ``likelihood`` (default): the filled wording as context, each option's text as the continuation; the option with
  the highest log-likelihood is the answer.
* ``generate`` (chat models): the filled wording as a chat message; the reply is read by :mod:`.parse`.

The card is README.md beside this file; the metrics are in :mod:`.metrics`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biaslab.errors import ConfigError
from biaslab.models.base import (
    GenerateRequest,
    GenerateResult,
    GenerationParams,
    LoglikelihoodRequest,
    LoglikelihoodResult,
)
from biaslab.probes.bbq.probe import BbqProbe, answer_kind
from biaslab.probes.mbbq.data import (
    CATEGORIES,
    LANGUAGES,
    MbbqQuestion,
    available_categories,
    files_for,
    load_questions,
    split_names,
)
from biaslab.probes.mbbq.metrics import METRIC_RANGES, mbbq_metrics
from biaslab.probes.mbbq.pairing import MbbqPairing
from biaslab.probes.mbbq.parse import parse_answer
from biaslab.probing.core import (
    Attempt,
    PlannedRequest,
    ProbeItem,
    ProbeOption,
    Prompt,
    Summary,
    rows_of,
    spread_subset,
)
from biaslab.probing.generation import answer_plan
from biaslab.probing.likelihood import LikelihoodProbe
from biaslab.probing.presentation import MetricDoc, MetricDocs

if TYPE_CHECKING:
    from biaslab.probing.config import RunConfig, RunContext
    from biaslab.probing.schema import RunResults

MODES = ("likelihood", "generate")
N_WORDINGS = 5
KEEP = (
    "language", "set", "category", "example_id", "parallel_id", "question_index", "prompt", "context_condition",
    "question_polarity", "label", "unknown_answer", "target_answer", "biased_answer",
)  # fmt: skip


@cache
def wordings() -> dict[str, list[str]]:
    """The authors' five prompt wordings per language (``prompts.json``, with their provenance)."""
    doc = json.loads((Path(__file__).parent / "prompts.json").read_text(encoding="utf-8"))
    return {k: list(v) for k, v in doc["prompts"].items()}


def parse_prompts(text: str | int | None) -> list[int]:
    """``1``..``5``, a comma-separated list of them, or ``all`` (the default)."""
    if text is None or str(text).strip().lower() == "all":
        return list(range(1, N_WORDINGS + 1))
    try:
        chosen = [int(p) for p in str(text).split(",") if p.strip()]
    except ValueError:
        chosen = []
    if not chosen or any(not 1 <= p <= N_WORDINGS for p in chosen):
        raise ConfigError(f"-P prompt(s) takes 1 to {N_WORDINGS}, a list such as 1,3, or all; got {text!r}")
    return list(dict.fromkeys(chosen))


_DIFFED = ("bias_score_ambig", "bias_score_disambig", "accuracy_ambig", "accuracy_disambig",
           "control_accuracy_ambig", "control_accuracy_disambig")  # fmt: skip
METRIC_DOCS = MetricDocs(
    {
        **{k: v for k, v in BbqProbe.metric_docs.items() if not k.startswith(("stereotype", "logical", "undetected"))},
        "control_accuracy_ambig": MetricDoc(
            "Accuracy on the control set's ambiguous questions (group words replaced by names).", "1.0", "0.0 / 1.0"
        ),
        "control_accuracy_disambig": MetricDoc("Accuracy on the control set's disambiguated questions.", "1.0", "0.0"),
        **{
            f"control_{a}:<group>": MetricDoc(f"control_{a} over one language or category.", "1.0", "0.0")
            for a in ("accuracy_ambig", "accuracy_disambig")
        },
        **{
            f"wording_range_{m}:<lang>": MetricDoc(
                f"Largest minus smallest {m} of one language across the prompt wordings asked.",
                "0",
                "a metric that moves with the wording",
            )
            for m in _DIFFED[:4]
        },
        **{
            f"lang_diff_{m}:<lang>": MetricDoc(
                f"{m} of the language minus English's, over their parallel items (paired over "
                "templates; q: Benjamini-Hochberg across languages and bias scores, accuracies apart).",
                "0",
                "- / -",
            )
            for m in _DIFFED
        },
        **{
            f"lang_diff_adjusted_{s}:<lang>": MetricDoc(
                f"The {s} gap (language - English) expected for a template answered equally well in both languages "
                "on the control set: intercept of the templates' gaps regressed on their control-accuracy gaps.",
                "0",
                "- / -",
            )
            for s in ("bias_score_ambig", "bias_score_disambig")
        },
    }
)


class MbbqProbe(LikelihoodProbe):
    name = "mbbq"
    version = "2"
    title = "MBBQ: BBQ in English, Spanish, Dutch and Turkish, with control sets (Neplenbroek et al. 2024)"
    summary = "stereotypes in 4 languages"
    metric_docs = METRIC_DOCS
    pairing = MbbqPairing()
    headlines = BbqProbe.headlines[:2]  # BBQ's two bias scores, read the same way
    diagnostics = ("accuracy_ambig", "accuracy_disambig", "unparsed_rate", "control_accuracy_ambig",
                   "control_accuracy_disambig")  # fmt: skip
    metric_ranges = METRIC_RANGES
    options = {
        "mode": ProbeOption("likelihood (default) or generate (chat models: the reply is read per language)."),
        "languages": ProbeOption("Comma-separated languages of en, es, nl, tr (default: all four)."),
        "categories": ProbeOption(
            "Comma-separated categories (default: every category whose files are here for the languages asked)."
        ),
        "prompt": ProbeOption("The authors' prompt wording(s): 1 to 5, a list (1,3) or all (the default)."),
        "prompts": ProbeOption("Same as prompt (prompts=all: the five wordings)."),
    }
    suite_size = 200  # 10 questions in 4 languages and 5 wordings
    min_limit = len(LANGUAGES) * N_WORDINGS  # one question in every language and wording (the defaults)
    item_noun = "questions"

    def __init__(
        self,
        mode: str = "likelihood",
        languages: str | list[str] | None = None,
        categories: str | list[str] | None = None,
        prompt: str | int | None = None,
        prompts: str | int | None = None,
    ) -> None:
        if mode not in MODES:
            raise ConfigError(f"-P mode must be one of {', '.join(MODES)}, got {mode!r}")
        if prompt is not None and prompts is not None:
            raise ConfigError("-P prompt and -P prompts say the same thing; give one")
        self.mode = mode
        self.languages = split_names(languages, LANGUAGES, "languages") or list(LANGUAGES)
        self.categories = split_names(categories, CATEGORIES, "categories")
        self.prompts = parse_prompts(prompt if prompt is not None else prompts)
        self.left_out: dict[str, str] = {}
        self.data_files: list[str] = []
        self._items: list[ProbeItem] | None = None

    def _chosen_categories(self) -> list[str]:
        if self.categories is not None:
            return self.categories
        here, _ = available_categories(self.languages)
        return here or list(CATEGORIES)  # none here: all of them (downloaded, or the error says how)

    def needed_data(self) -> list[str]:
        return files_for(self._chosen_categories(), self.languages)

    def load_items(self) -> list[ProbeItem]:
        if self._items is None:
            from biaslab.data.availability import fetch_command

            chosen = self._chosen_categories()
            if self.categories is None:
                gone = [c for c in CATEGORIES if c not in chosen]
                self.left_out = {c: fetch_command(files_for([c], self.languages)) for c in gone}
            self.data_files = files_for(chosen, self.languages)
            items = []
            for q in load_questions(chosen, self.languages):
                for k in self.prompts:
                    text = wordings()[q.language][k - 1].format(q.context, q.question, *q.answers)
                    meta = {**asdict(q), "prompt": k}
                    suffix = "_control" if q.set == "control" else ""
                    items.append(
                        ProbeItem(f"{q.language}:{q.category}{suffix}:{q.example_id}:p{k}", [Prompt(text)], meta)
                    )
            self._items = items
        return self._items

    def select_items(self, items: list[ProbeItem], cfg: RunConfig) -> list[ProbeItem]:
        """``--limit N``: N items as whole questions (spread over categories and sets), each in every language and
        wording of the run (N rounded up to a multiple of languages x wordings)."""
        keys = list(dict.fromkeys(_base(it) for it in items))
        per = len(self.languages) * len(self.prompts)
        chosen = set(spread_subset(keys, None if cfg.limit is None else -(-cfg.limit // per)))
        return [it for it in items if _base(it) in chosen]

    # -- planning -----------------------------------------------------------------------------
    def requests(self, item: ProbeItem) -> list[LoglikelihoodRequest]:
        return [
            LoglikelihoodRequest(continuation=f" {a}", context=item.prompts[0].text) for a in item.metadata["answers"]
        ]

    def validate(self, cfg: RunConfig) -> None:
        if self.mode == "likelihood":
            super().validate(cfg)

    def plan(self, items: list[ProbeItem], cfg: RunConfig) -> list[PlannedRequest]:
        if self.mode == "likelihood":
            return super().plan(items, cfg)
        return answer_plan(self.name, items, cfg, GenerationParams(temperature=0.0, max_tokens=48), all_prompts=False)

    def score(self, planned: list[PlannedRequest], answers: list[Any], ctx: RunContext) -> list[Attempt]:
        if ctx.masked:
            raise ConfigError("mbbq needs a causal LM or a chat model: a masked LM has no answer likelihood")
        if self.mode == "likelihood":
            return super().score(planned, answers, ctx)
        out = []
        for p, reply in zip(planned, answers, strict=True):
            if not isinstance(reply, GenerateResult) or not isinstance(p.request, GenerateRequest):
                raise TypeError(f"mbbq: a generated reply expected for {self.describe(p)}")
            m = p.item.metadata
            choice = parse_answer(reply.text, m["answers"], m["unknown_answer"], m["language"])
            a = self._attempt(p.item, choice, reply.text, p.repetition, p.request.params.seed, {})
            a.n_new_tokens, a.finish_reason = reply.n_new_tokens, reply.finish_reason
            out.append(a)
        return out

    def decision_difference(
        self, item: ProbeItem, results: list[LoglikelihoodResult], *, masked: bool
    ) -> Callable[[Sequence[LoglikelihoodResult]], float] | None:
        """The best option's log-likelihood minus the runner-up's (as bbq)."""
        if len(results) < 2:
            return None
        lls = [r.total for r in results]
        best = BbqProbe._choice(lls)
        second = BbqProbe._choice([v if i != best else -math.inf for i, v in enumerate(lls)])
        return lambda res: res[best].total - res[second].total

    def score_item(self, item: ProbeItem, results: list[LoglikelihoodResult], ctx: RunContext) -> Attempt:
        lls = [r.total for r in results]
        choice = BbqProbe._choice(lls)
        extra = {"answer_logliks": lls, **self.precision_of(item, ctx)}
        return self._attempt(item, choice, item.metadata["answers"][choice], 0, None, extra)

    def _attempt(
        self, item: ProbeItem, choice: int | None, text: str, rep: int, seed: int | None, extra: dict[str, Any]
    ) -> Attempt:
        m = item.metadata
        a = Attempt(
            item_id=item.id,
            prompt_index=0,
            repetition=rep,
            seed=seed,
            prompt=item.prompts[0].text,
            text=text,
            metadata={k: m[k] for k in KEEP},
            evaluation=None if choice is None else ("correct" if choice == m["label"] else "wrong"),
        )
        a.extra = {"answer": choice, "answer_kind": answer_kind(choice, m), **{k: m[k] for k in KEEP}, **extra}
        return a

    # -- results ------------------------------------------------------------------------------
    def parameters(self, cfg: RunConfig, ctx: RunContext) -> dict[str, Any]:
        out: dict[str, Any] = {
            "limit": cfg.limit,
            "mode": self.mode,
            "languages": self.languages,
            "categories": self.categories,
            "prompts": self.prompts,
        }
        if self.mode == "generate":
            out.update(repetitions=cfg.repetitions, seed=cfg.seed)
        else:
            out.update(super().parameters(cfg, ctx))
        return out

    def summarize(self, attempts: list[Attempt], *, seed: int = 0) -> Summary:
        metrics, details = mbbq_metrics(rows_of(attempts), generated=self.mode == "generate", seed=seed)
        details.update(mode=self.mode, prompts=self.prompts)
        if self.left_out:
            details["left_out"] = self.left_out
        return Summary(metrics, details)

    def coverage(self, results: RunResults) -> str:
        from biaslab.probes.mbbq.report import coverage

        return coverage(results) or super().coverage(results)

    def example_fields(self) -> list[str]:
        return ["language", "set", "category", "context_condition", "answer_kind"]

    def report_sections(self, results: RunResults, attempts: list[dict[str, Any]]) -> list[dict[str, str]]:
        from biaslab.probes.mbbq.report import sections

        return sections(results)


def _base(item: ProbeItem) -> tuple[str, str, str]:
    m = item.metadata
    return (m["set"], m["category"], m["parallel_id"])


__all__ = ["MbbqProbe", "MbbqQuestion", "wordings"]
