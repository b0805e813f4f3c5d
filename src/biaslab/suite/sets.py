"""Which probes a suite runs: the default choice, named sets, and why a probe is left out.

``--probes`` takes probe names and set names. A **named set** is defined by the probes' own declarations,
never by a list kept here, so a probe that is added (built in or a plugin) joins the sets its declarations
put it in:

* ``gender``: every probe with a headline in one of GenderBench's harm groups (``Headline.group`` in
  :data:`biaslab.probing.headline.GENDERBENCH_GROUPS`): the whole gender suite.
* ``multilingual``: the cross-language benchmarks (:data:`MULTILINGUAL`: mbbq, kobbq), those registered; the suite
  card then shows bias per language beside control accuracy (:mod:`biaslab.suite.languages`).

A member of a set runs with the options it declares for that set (:attr:`biaslab.probing.core.Probe.set_options`,
e.g. bbq's ``{"gender": {"categories": "Gender_identity"}}``: the gender suite asks BBQ's gender-identity
questions only). The options are the run's own (its results.json ``parameters`` and the suite's run key), so a
run with them and one without never stand in for each other. A probe named on its own always runs, with its
defaults, even where a set named too holds it (``--probes bbq --probes gender``: every BBQ category), and its
errors are the user's to see; the suite takes no probe options of its own (its ``-P`` goes to the models): a
probe with other options is a ``biaslab run``.

A member of a set, like a probe of the default choice, is left out when it cannot run here -- it needs a file
of yours, its data (with the set's options) is not available offline, or the model kind cannot answer its
requests -- and the suite says which, why and how to include it (:mod:`biaslab.suite.left_out`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from biaslab.errors import ConfigError


def gender_probes() -> list[str]:
    """Every registered probe with a headline in a GenderBench harm group, in registry order."""
    from biaslab.probes import PROBES, get_probe_class
    from biaslab.probing.headline import GENDERBENCH_GROUPS

    out = []
    for name in PROBES:
        try:
            cls = get_probe_class(name)
        except ConfigError:  # a plugin that cannot be loaded belongs to no set
            continue
        if any(h.group in GENDERBENCH_GROUPS for h in cls.headlines):
            out.append(name)
    return out


MULTILINGUAL = ("mbbq", "kobbq")  # named here: the cross-language benchmarks (kobbq joins once it is registered)


def multilingual_probes() -> list[str]:
    """The cross-language benchmarks among the registered probes (a name not registered here is skipped)."""
    from biaslab.probes import PROBES

    return [name for name in MULTILINGUAL if name in PROBES]


NAMED_SETS: dict[str, tuple[str, Callable[[], list[str]]]] = {
    "gender": (
        "every probe with a headline in one of GenderBench's harm groups (outcome disparity, stereotypical "
        "reasoning, representational harms)",
        gender_probes,
    ),
    "multilingual": (
        "bias across languages: MBBQ (English, Spanish, Dutch, Turkish, with control sets) and KoBBQ (Korean)",
        multilingual_probes,
    ),
}


def declared_options(name: str, set_name: str) -> dict[str, Any]:
    """The options (as ``-P`` gives them) that the probe declares for running as a member of ``set_name``."""
    from biaslab.probes import get_probe_class

    return dict(get_probe_class(name).set_options.get(set_name) or {})


def member_options(names: list[str] | None) -> dict[str, dict[str, Any]]:
    """``{probe: options}`` for the probes of ``--probes names`` that run with options: a set's member with those it
    declares for the first set named that holds it; a probe named on its own (and the default choice) with none."""
    from biaslab.probes import PROBES

    out: dict[str, dict[str, Any]] = {}
    seen = {n for n in names or [] if n in PROBES}
    for n in names or []:
        if n in PROBES or n not in NAMED_SETS:
            continue
        for m in NAMED_SETS[n][1]():
            if m in seen:
                continue
            seen.add(m)
            opts = declared_options(m, n)
            if opts:
                out[m] = opts
    return out


def build_probe(name: str, options: Mapping[str, Any] | None = None) -> Any:
    """The probe ``name`` with ``options`` (as ``-P`` gives them: checked and converted like them)."""
    from biaslab.app.resolve import build_probe as build

    return build(name, dict(options or {}))


def why_not(
    name: str, model_specs: list[str], options: Mapping[str, Any] | None = None, limit: int | None = None
) -> str | None:
    """Why the probe (with ``options``) cannot run in a suite of these models without more from the user, and how
    to include it (the suite's ``limit`` sizes the command it gives); None: it can."""
    from biaslab.app.resolve import resolve_probe
    from biaslab.probing.likelihood import LikelihoodProbe
    from biaslab.suite.left_out import data_missing, needs_a_file

    try:
        resolved = resolve_probe(name)  # looked up once
    except ConfigError as exc:
        return str(exc)
    cls = resolved.cls
    if cls.input_option is not None:
        return needs_a_file(cls, model_specs, limit)
    try:
        probe = resolved.build(dict(options or {}))
    except ConfigError as exc:
        return str(exc)
    served = [s for s in model_specs if s.startswith(("openai/", "anthropic/"))]
    if served and isinstance(probe, LikelihoodProbe):
        return f"it scores log-likelihoods, which {served[0]} does not give"
    from biaslab.data.availability import missing

    gone = missing(probe.needed_data())
    return data_missing(cls, gone, model_specs, limit, options) if gone else None


def default_probes(model_specs: list[str]) -> list[str]:
    """Every registered probe that can run on these models without more from the user."""
    from biaslab.probes import PROBES

    return [name for name in PROBES if why_not(name, model_specs) is None]


def choose_probes(
    model_specs: list[str], names: list[str] | None, limit: int | None = None
) -> tuple[list[str], dict[str, str]]:
    """``(probes to run, {probe left out: why, and how to include it})`` for ``--probes`` (None: the default
    choice); each member is checked with the options it runs with (:func:`member_options`).

    Set names expand to their members; a probe named twice runs once, in the order first named."""
    from biaslab.probes import PROBES
    from biaslab.probing.file_probe.registry import recorded_name

    if not names:
        return default_probes(model_specs), {}
    names = [recorded_name(n) for n in names]  # file:PATH -> file:<name>@<hash>, the name its runs record
    unknown = [n for n in names if n not in PROBES and n not in NAMED_SETS]
    if unknown:
        sets = ", ".join(f"{k} ({v[0]})" for k, v in NAMED_SETS.items())
        raise ConfigError(
            f"unknown probe(s) {', '.join(unknown)}; available: {', '.join(sorted(PROBES))}; sets: {sets}"
        )
    chosen: list[str] = []
    skipped: dict[str, str] = {}
    options = member_options(names)
    for n in names:
        if n in PROBES:
            if n not in chosen:
                chosen.append(n)
            continue
        members = NAMED_SETS[n][1]()
        if not members:
            raise ConfigError(f"the set {n} has no member among the installed probes")
        for m in members:
            reason = why_not(m, model_specs, options.get(m), limit)
            if reason is None and m not in chosen:
                chosen.append(m)
            elif reason is not None and m not in chosen:
                skipped[m] = reason
    for m in chosen:
        skipped.pop(m, None)
    return chosen, skipped
