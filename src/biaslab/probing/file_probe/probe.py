"""The probe a YAML file defines: :func:`probe_class` makes a :class:`FileProbe` subclass from a
:class:`~biaslab.probing.file_probe.schema.FileSpec`, with everything a Python probe declares (headlines, metric
docs and ranges, pairing, diagnostics) derived from the file, so that ``run``, ``plan``, ``suite``, ``compare``,
``gate`` and ``report`` treat it like any other probe."""

from __future__ import annotations

import html
from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar, cast

from biaslab.models.base import GenerationParams
from biaslab.planning.forms import MeanPlan, PlanForm, ProportionPlan
from biaslab.probing.core import Attempt, ProbeItem, Prompt, Summary, rows_of
from biaslab.probing.file_probe.metrics import inference, item_table, point_metrics
from biaslab.probing.file_probe.schema import RESERVED, FileSpec
from biaslab.probing.file_probe.template import OPTIONS, lettered, render
from biaslab.probing.generation import GenerationProbe
from biaslab.probing.headline import Headline, MarkRule
from biaslab.probing.pairing import ByItemPairing
from biaslab.probing.presentation import MetricDoc, MetricDocs

if TYPE_CHECKING:
    from pathlib import Path

    from biaslab.probing.config import RunConfig, RunContext
    from biaslab.probing.core import PlannedRequest
    from biaslab.probing.file_probe.metric_specs import MetricSpec
    from biaslab.probing.schema import RunResults


class FileProbe(GenerationProbe):
    """A generation probe defined by a YAML file (its subclasses are made by :func:`probe_class`)."""

    spec: ClassVar[FileSpec]
    diagnostics = ("undetected_rate",)

    @classmethod
    def card_path(cls) -> Path:
        from pathlib import Path

        return Path(cls.spec.path)  # the file is the probe's card

    def default_params(self) -> GenerationParams:
        return GenerationParams(temperature=self.spec.temperature, max_tokens=self.spec.max_tokens)

    def load_items(self) -> list[ProbeItem]:
        spec = self.spec
        items = []
        for item_id, row in zip(spec.ids, spec.rows):
            prompts = []
            for order in spec.answer.orders():
                texts = [o.shown(row).strip() for o in order]
                values = {**row, **({OPTIONS: lettered(texts)} if spec.answer.kind == "options" else {})}
                meta = {"options": [o.label for o in order], "option_texts": texts} if order else {}
                prompts.append(
                    Prompt(
                        render(spec.prompt, values),
                        system=render(spec.system, values) if spec.system else None,
                        metadata=meta,
                    )
                )
            shown = {c: (row[c].strip() if c in spec.groups else row[c]) for c in spec.columns if c not in RESERVED}
            items.append(ProbeItem(item_id, prompts, shown))
        return items

    def plan(self, items: list[ProbeItem], cfg: RunConfig) -> list[PlannedRequest]:
        """``repetitions`` of the file answers per prompt, times the run's ``--repetitions``."""
        return super().plan(items, replace(cfg, repetitions=cfg.repetitions * self.spec.repetitions))

    def evaluate(self, attempt: Attempt) -> None:
        labels, texts = attempt.metadata.get("options"), attempt.metadata.get("option_texts")
        attempt.evaluation = self.spec.answer.read(attempt.text, labels, texts)

    def summarize(self, attempts: list[Attempt], *, seed: int = 0) -> Summary:
        spec = self.spec
        metrics = inference(item_table(rows_of(attempts), spec), spec, seed=seed)
        counts = Counter(str(a.evaluation) for a in attempts)
        return Summary(
            metrics,
            {
                "counts": dict(sorted(counts.items())),
                "interval_unit": f"{spec.noun} (every answer to an item together)",
                "file_probe": spec.record(),
            },
        )

    def parameters(self, cfg: RunConfig, ctx: RunContext) -> dict[str, Any]:
        return {
            **super().parameters(cfg, ctx),
            "answers_per_prompt": self.spec.repetitions,
            "file_sha256": self.spec.sha256,
        }

    def example_fields(self) -> list[str]:
        own = [self.spec.id_column] if self.spec.id_column and self.spec.id_column not in RESERVED else []
        return [*own, *self.spec.groups, "evaluation"]

    def report_sections(self, results: RunResults, rows: list[dict[str, Any]]) -> list[dict[str, str]]:
        spec = self.spec
        source = "in the file" if spec.table is None else f"from {html.escape(spec.table.file)}"
        return [
            {
                "title": "Probe file",
                "html": f"<p>{html.escape(spec.description)}</p><p>{html.escape(spec.path)}, sha256 "
                f"{spec.sha256[:16]}...; {len(spec.rows)} {html.escape(spec.noun)} {source}.</p>"
                f"<pre>{html.escape(spec.yaml_text)}</pre>",
            }
        ]


def probe_class(spec: FileSpec) -> type[FileProbe]:
    """The probe class of ``spec``: named ``file:<name>@<hash>``, its declarations derived from the file."""
    ranges = {m.name: m.bounds for m in spec.metrics}
    attrs = {
        "spec": spec,
        "name": spec.probe_name,
        "title": spec.title,
        "summary": spec.title[:26],
        "item_noun": spec.noun,
        "metric_docs": _docs(spec),
        "metric_ranges": ranges,
        "headlines": tuple(_headline(spec, m) for m in spec.metrics if m.headline),
        "pairing": ByItemPairing(
            spec.family, spec.noun, lambda rows: item_table(rows, spec), lambda table: point_metrics(table, spec)
        ),
        "suite_size": len(spec.rows),
        "__doc__": spec.description,
    }
    return cast("type[FileProbe]", type(f"FileProbe_{spec.name}", (FileProbe,), attrs))


def _describe(spec: FileSpec, m: MetricSpec) -> str:
    if m.kind == "undetected_rate":
        return "Share of answers whose label could not be read (no option picked, or no pattern matched more)."
    rate = f"share of an item's detected answers read as {m.label}, averaged over {spec.noun}"
    if m.kind == "rate":
        return rate[0].upper() + rate[1:] + "."
    a, b = m.between or ("", "")
    return f"The {rate} of {m.column} {a} minus the same over {m.column} {b}."


def _docs(spec: FileSpec) -> MetricDocs:
    docs = MetricDocs()
    for m in spec.metrics:
        unbiased = None if m.null is None else f"{m.null:g}"
        low, high = m.bounds
        docs[m.name] = MetricDoc(
            _describe(spec, m), "0.0" if m.kind == "undetected_rate" else unbiased, f"{low:g} to {high:g}"
        )
        if m.kind == "rate" and spec.groups:
            docs[f"{m.name}:<group>"] = MetricDoc(
                f"{m.name} over the {spec.noun} of one group.", unbiased, f"{low:g} to {high:g}"
            )
    return docs


def _plan(spec: FileSpec, m: MetricSpec) -> PlanForm:
    if m.kind == "rate" and m.unbiased == 0.5:
        return ProportionPlan(spec.noun, independent="one share per item", detected="every answer detected")
    if m.kind == "rate":
        return MeanPlan(spec.noun, sd=0.5, sd_note="the largest standard deviation a share between 0 and 1 can have")
    return MeanPlan(spec.noun, sd=1.0, sd_note="the largest for shares between 0 and 1 in two groups of equal size")


def _headline(spec: FileSpec, m: MetricSpec) -> Headline:
    what = (
        f"share of answers read as {m.label}"
        if m.kind == "rate"
        else f"{m.label} rate, {' minus '.join(m.between or ())}"
    )
    low, high = m.bounds
    return Headline(
        m.name,
        f"{what} ({low:g} to {high:g})",
        float(m.null or 0.0),
        m.worse,  # type: ignore[arg-type]
        _plan(spec, m),
        marks=None if m.marks is None else MarkRule(*m.marks),
        margin=m.margin,
        harm=spec.title,
    )
