"""The `kobbq` probe: KoBBQ, the Korean Bias Benchmark for Question Answering (Jin et al., TACL 2024).

An item is one of the 2,280 test samples; each is asked in every chosen prompt wording (``-P prompt=``, the
authors' 5 Korean wordings by default) with its options in the 3 cyclic orders of the authors' evaluation
(``-P permutations=``): one prompt per wording and order. Two modes (``-P mode=``):

* ``likelihood`` (default): each option scored as the continuation of the prompt (which ends in the wording's
  answer cue, ``정답:`` / ``답:``): its text as shown (``-P scoring=text``, the default) or its letter
  (``-P scoring=letter``); the option with the highest log-likelihood is the answer.
* ``generate`` (chat models): the prompt as one user message (greedy, at most 30 new tokens, as the authors ran
  it), the reply read by :mod:`.parse`; replies naming no option or several are out of choice.

The card is README.md beside this file; the metrics are in :mod:`.metrics`, the data in :mod:`.data`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from biaslab.errors import ConfigError
from biaslab.models.base import (
    GenerateRequest,
    GenerateResult,
    GenerationParams,
    LoglikelihoodRequest,
    LoglikelihoodResult,
)
from biaslab.probes.kobbq.data import PROMPTS, SAMPLES, KobbqSample, Wording, load, rotation
from biaslab.probes.kobbq.docs import CI_NOTE, HEADLINES, METRIC_DOCS
from biaslab.probes.kobbq.metrics import METRIC_RANGES, kobbq_metrics
from biaslab.probes.kobbq.pairing import KobbqPairing
from biaslab.probes.kobbq.parse import parse_answer
from biaslab.probing.core import Attempt, PlannedRequest, ProbeItem, ProbeOption, Prompt, Summary, rows_of
from biaslab.probing.generation import answer_plan
from biaslab.probing.likelihood import LikelihoodProbe

if TYPE_CHECKING:
    from biaslab.probing.config import RunConfig, RunContext
    from biaslab.probing.recheck import Contrast
    from biaslab.probing.schema import RunResults

MODES = ("likelihood", "generate")
SCORINGS = ("text", "letter")
WORDINGS = (1, 2, 3, 4, 5)
ORDERS = [rotation(k) for k in range(3)]


def parse_prompts(text: str | Sequence[int] | None) -> list[int]:
    """``all`` (or nothing) or comma-separated wording numbers 1-5."""
    if text is None or (isinstance(text, str) and text.strip().lower() in ("", "all")):
        return list(WORDINGS)
    parts = text.split(",") if isinstance(text, str) else list(text)
    try:
        ids = sorted({int(str(p).strip()) for p in parts if str(p).strip()})
    except ValueError:
        ids = []
    if not ids or any(i not in WORDINGS for i in ids):
        raise ConfigError(f"-P prompt={text}: give prompt wordings 1-5, comma-separated (e.g. 1,3), or all")
    return ids


def parse_categories(text: str | list[str] | None) -> list[str] | None:
    if text is None or isinstance(text, list):
        return text
    names = [c.strip() for c in str(text).split(",") if c.strip()]
    if not names:
        raise ConfigError("-P categories is empty; give names such as age,religion or omit it")
    return names


def answer_kind(choice: int | None, meta: dict[str, Any]) -> str:
    """``unknown``, ``biased``, ``counter-biased`` (the other group) or ``out-of-choice`` (no single option read)."""
    if choice is None:
        return "out-of-choice"
    if choice == meta["unknown_answer"]:
        return "unknown"
    return "biased" if choice == meta["biased_answer"] else "counter-biased"


def _gap(a: int, b: int) -> Callable[[Sequence[Any]], float]:
    """A contrast's value: result ``a`` minus result ``b`` of the (only) item's results."""
    return lambda results: results[0][a].total - results[0][b].total


class KobbqProbe(LikelihoodProbe):
    name = "kobbq"
    version = "1"
    title = "KoBBQ: social bias in Korean question answering, ambiguous and disambiguated contexts (Jin et al. 2024)"
    summary = "stereotypes in Korean QA"
    metric_docs = METRIC_DOCS
    headlines = HEADLINES
    pairing = KobbqPairing()
    diagnostics = ("accuracy_amb", "accuracy_dis", "ooc_rate")  # how often right or readable, not which way
    metric_ranges = METRIC_RANGES
    options = {
        "mode": ProbeOption(
            "likelihood (default: the option with the highest log-likelihood) or generate "
            "(chat models: the reply is read)."
        ),  # fmt: skip
        "prompt": ProbeOption(
            "The authors' prompt wordings to ask, 1-5 comma-separated, or all (the default).", param="prompts"
        ),  # fmt: skip
        "categories": ProbeOption(
            "Comma-separated categories (default: all 12), e.g. age,gender_identity.", parse_categories
        ),  # fmt: skip
        "permutations": ProbeOption(
            "How many of the 3 cyclic option orders to ask (default 3, as the authors).", int, minimum=1, maximum=3
        ),  # fmt: skip
        "scoring": ProbeOption("likelihood mode: score each option's text (text, the default) or its letter."),
    }
    item_noun = "samples"

    def __init__(
        self,
        mode: str = "likelihood",
        prompts: str | Sequence[int] | None = None,
        categories: str | list[str] | None = None,
        permutations: int = 3,
        scoring: str = "text",
    ) -> None:
        if mode not in MODES:
            raise ConfigError(f"-P mode must be one of {', '.join(MODES)}, got {mode!r}")
        if scoring not in SCORINGS:
            raise ConfigError(f"-P scoring must be one of {', '.join(SCORINGS)}, got {scoring!r}")
        self.check_options(permutations=permutations)
        self.mode, self.scoring, self.permutations = mode, scoring, int(permutations)
        self.prompts = parse_prompts(prompts)
        self.categories = parse_categories(categories)
        self.data_files = [SAMPLES, PROMPTS]
        self.wordings: dict[int, Wording] = {}
        self._items: list[ProbeItem] | None = None

    def load_items(self) -> list[ProbeItem]:
        if self._items is None:
            samples, self.wordings = load()
            missing = [w for w in self.prompts if w not in self.wordings]
            if missing:
                raise ConfigError(f"-P prompt: the prompts file has no wording {missing[0]}; it has "
                                  f"{', '.join(map(str, sorted(self.wordings)))}")  # fmt: skip
            known = sorted({s.category for s in samples})
            unknown = [c for c in self.categories or [] if c not in known]
            if unknown:
                raise ConfigError(f"-P categories: no KoBBQ category {', '.join(unknown)}; available: "
                                  f"{', '.join(known)}")  # fmt: skip
            wanted = set(self.categories or known)
            self._items = [self._item(s) for s in samples if s.category in wanted]
        return self._items

    def _item(self, s: KobbqSample) -> ProbeItem:
        prompts = []
        for w in self.prompts:
            wording = self.wordings[w]
            shown = wording.shown(s.choices)
            for k, order in enumerate(ORDERS[: self.permutations]):
                options = [shown[i] for i in order]
                meta = {"prompt_id": w, "permutation": k, "order": order, "options": options}
                prompts.append(Prompt(wording.render(s.context, s.question, options), metadata=meta))
        return ProbeItem(s.sample_id, prompts, dict(vars(s)))

    # -- planning -----------------------------------------------------------------------------
    def _continuations(self, prompt: Prompt) -> list[str]:
        if self.scoring == "letter":
            return [f" {x}" for x in self.wordings[prompt.metadata["prompt_id"]].letters]
        return [f" {o}" for o in prompt.metadata["options"]]

    def validate(self, cfg: RunConfig) -> None:
        if self.mode == "likelihood":
            super().validate(cfg)

    def plan(self, items: list[ProbeItem], cfg: RunConfig) -> list[PlannedRequest]:
        if self.mode == "likelihood":
            return [
                PlannedRequest(item, p, 0, prompt, LoglikelihoodRequest(continuation=c, context=prompt.text))
                for item in items
                for p, prompt in enumerate(item.prompts)
                for c in self._continuations(prompt)
            ]
        return answer_plan(self.name, items, cfg, GenerationParams(temperature=0.0, max_tokens=30))

    # -- scoring ------------------------------------------------------------------------------
    def score(self, planned: list[PlannedRequest], answers: list[Any], ctx: RunContext) -> list[Attempt]:
        if ctx.masked:
            raise ConfigError("kobbq needs a causal LM or a chat model: a masked LM has no answer likelihood")
        out = []
        if self.mode == "likelihood":
            for k in range(0, len(planned), 3):
                p = planned[k]
                lls = [r.total for r in answers[k : k + 3]]
                pos = self._best(lls)
                extra = {"answer_logliks": lls, **self.precision_of(p.item, ctx)}
                out.append(self._attempt(p, pos, p.prompt.metadata["options"][pos], None, extra))
            return out
        for p, reply in zip(planned, answers, strict=True):
            if not isinstance(reply, GenerateResult) or not isinstance(p.request, GenerateRequest):
                raise TypeError(f"kobbq: a generated reply expected for {self.describe(p)}")
            meta = p.prompt.metadata
            wording = self.wordings[meta["prompt_id"]]
            unknown = meta["order"].index(p.item.metadata["unknown_answer"])
            read = parse_answer(reply.text, meta["options"], wording.letters, unknown)
            out.append(self._attempt(p, read, reply.text, p.request.params.seed, {}))
            out[-1].n_new_tokens, out[-1].finish_reason = reply.n_new_tokens, reply.finish_reason
        return out

    def score_item(self, item: ProbeItem, results: list[LoglikelihoodResult], ctx: RunContext) -> Attempt:
        """Not used: a sample has one attempt per prompt, made by :meth:`score`."""
        raise NotImplementedError("kobbq scores each prompt of a sample apart")

    @staticmethod
    def _best(lls: Sequence[float]) -> int:
        return max(range(len(lls)), key=lambda i: (lls[i], -i))  # the first of tied options

    def _attempt(
        self, p: PlannedRequest, pos: int | None, text: str, seed: int | None, extra: dict[str, Any]
    ) -> Attempt:
        m, pm = p.item.metadata, p.prompt.metadata
        choice = None if pos is None else pm["order"][pos]
        keep = ("sample_id", "category", "template", "label_annotation", "context_condition", "context_type",
                "question_type", "choices", "unknown_answer", "biased_answer")  # fmt: skip
        meta = {k: m[k] for k in keep}
        meta.update(label=m["answer"], prompt_id=pm["prompt_id"], permutation=pm["permutation"])
        a = Attempt(
            item_id=p.item.id,
            prompt_index=p.prompt_index,
            repetition=p.repetition,
            seed=seed,
            prompt=p.prompt.text,
            text=text,
            metadata=meta,
            evaluation=None if choice is None else ("correct" if choice == m["answer"] else "wrong"),
        )
        a.extra = {
            "answer": choice,
            "answer_kind": answer_kind(choice, m),
            "position": pos,
            # the authors' evaluation record: the permuted sample's id and the prediction (the option's text
            # as the wording shows it, or the reply itself when out of choice)
            "guid": f"{m['sample_id']}-{pm['permutation']}",
            "prediction": text if pos is None else pm["options"][pos],
            "options": pm["options"],  # the choices as shown: this order, the wording's unknown text
            **meta,
            **extra,
        }
        return a

    def contrasts(self, items: list[ProbeItem], results: list[list[Any]], *, masked: bool) -> list[Contrast]:
        """Each prompt's decision: its best option's log-likelihood minus the runner-up's (of these results)."""
        from biaslab.probing.recheck import Contrast

        out = []
        for i, res in enumerate(results):
            for k in range(0, len(res), 3):
                lls = [r.total for r in res[k : k + 3]]
                best = self._best(lls)
                second = self._best([v if j != best else -math.inf for j, v in enumerate(lls)])
                out.append(Contrast((i,), _gap(k + best, k + second)))
        return out

    # -- results ------------------------------------------------------------------------------
    def parameters(self, cfg: RunConfig, ctx: RunContext) -> dict[str, Any]:
        out: dict[str, Any] = {
            "limit": cfg.limit,
            "mode": self.mode,
            "prompts": self.prompts,
            "permutations": self.permutations,
            "categories": self.categories,
        }
        if self.mode == "likelihood":
            out["scoring"] = self.scoring
        else:
            out.update(repetitions=cfg.repetitions, seed=cfg.seed)
        return out

    def summarize(self, attempts: list[Attempt], *, seed: int = 0) -> Summary:
        metrics, details = kobbq_metrics(rows_of(attempts), seed=seed)
        return Summary(metrics, {"ci_note": CI_NOTE, "mode": self.mode, **details})

    def coverage(self, results: RunResults) -> str:
        from biaslab.probes.kobbq.report import coverage

        return coverage(results) or super().coverage(results)

    def example_fields(self) -> list[str]:
        return ["category", "context_type", "answer_kind", "prompt_id"]

    def report_sections(self, results: RunResults, attempts: list[dict[str, Any]]) -> list[dict[str, str]]:
        from biaslab.probes.kobbq.report import sections

        return sections(results, attempts)
