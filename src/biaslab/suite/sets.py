"""Which probes a suite runs: the default choice, named sets, and why a probe is left out.

``--probes`` takes probe names and set names. A **named set** is defined by the probes' own declarations,
never by a list kept here, so a probe that is added (built in or a plugin) joins the sets its declarations
put it in:

* ``gender``: every probe with a headline in one of GenderBench's harm groups (``Headline.group`` in
  :data:`biaslab.probing.headline.GENDERBENCH_GROUPS`): the whole gender suite.

A probe named on its own always runs (its errors are the user's to see). A member of a set, like a probe of
the default choice, is left out when it cannot run here -- it needs a file of yours, its data is not
available offline, or the model kind cannot answer its requests -- and the suite says which and why.
"""

from __future__ import annotations

from collections.abc import Callable

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


NAMED_SETS: dict[str, tuple[str, Callable[[], list[str]]]] = {
    "gender": (
        "every probe with a headline in one of GenderBench's harm groups (outcome disparity, stereotypical "
        "reasoning, representational harms)",
        gender_probes,
    ),
}


def why_not(name: str, model_specs: list[str]) -> str | None:
    """Why the probe cannot run in a suite of these models without more from the user (None: it can)."""
    from biaslab.probes import create_probe, get_probe_class
    from biaslab.probing.likelihood import LikelihoodProbe

    try:
        cls = get_probe_class(name)
    except ConfigError as exc:
        return str(exc)
    if cls.input_option is not None:
        return f"it needs a file of yours (-P {cls.input_option}=...): run it with biaslab run"
    try:
        probe = create_probe(name)
    except ConfigError as exc:
        return str(exc)
    served = [s for s in model_specs if s.startswith(("openai/", "anthropic/"))]
    if served and isinstance(probe, LikelihoodProbe):
        return f"it scores log-likelihoods, which {served[0]} does not give"
    from biaslab.data.availability import missing_message

    missing = missing_message(probe.needed_data())
    return f"its data is not here: {missing}" if missing else None


def default_probes(model_specs: list[str]) -> list[str]:
    """Every registered probe that can run on these models without more from the user."""
    from biaslab.probes import PROBES

    return [name for name in PROBES if why_not(name, model_specs) is None]


def choose_probes(model_specs: list[str], names: list[str] | None) -> tuple[list[str], dict[str, str]]:
    """``(probes to run, {probe left out: why})`` for ``--probes`` (None: the default choice).

    Set names expand to their members; a probe named twice runs once, in the order first named."""
    from biaslab.probes import PROBES

    if not names:
        return default_probes(model_specs), {}
    unknown = [n for n in names if n not in PROBES and n not in NAMED_SETS]
    if unknown:
        sets = ", ".join(f"{k} ({v[0]})" for k, v in NAMED_SETS.items())
        raise ConfigError(
            f"unknown probe(s) {', '.join(unknown)}; available: {', '.join(sorted(PROBES))}; sets: {sets}"
        )
    chosen: list[str] = []
    skipped: dict[str, str] = {}
    for n in names:
        if n in PROBES:
            if n not in chosen:
                chosen.append(n)
            continue
        members = NAMED_SETS[n][1]()
        if not members:
            raise ConfigError(f"the set {n} has no member among the installed probes")
        for m in members:
            reason = why_not(m, model_specs)
            if reason is None and m not in chosen:
                chosen.append(m)
            elif reason is not None and m not in chosen:
                skipped[m] = reason
    for m in chosen:
        skipped.pop(m, None)
    return chosen, skipped
