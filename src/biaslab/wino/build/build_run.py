"""One ``wino build`` run: load a benchmark's components (published or a custom folder), build
its pairs (:func:`biaslab.wino.build.build.build_pairs`) and write the pairs CSV."""

from __future__ import annotations

from pathlib import Path

from biaslab.errors import ConfigError
from biaslab.wino.build.build import BuildResult


def load_components(benchmark: str, components: Path | None):
    """The Components of a published benchmark, or of a custom folder."""
    from biaslab.wino.build.originals import BENCHMARKS, load_original

    if benchmark == "custom":
        if components is None:
            raise ConfigError("the custom benchmark needs --components DIR (see `biaslab wino build --help`)")
        from biaslab.wino.build.custom import load_custom

        return load_custom(components)
    if components is not None:
        raise ConfigError(f"--components is for the custom benchmark; {benchmark} reads its published components")
    if benchmark not in BENCHMARKS:
        raise ConfigError(f"unknown benchmark {benchmark!r}; use one of {', '.join(BENCHMARKS)}, custom")
    return load_original(benchmark)


def build_benchmark(
    benchmark: str,
    out: Path,
    *,
    seed: int = 0,
    faithful: bool = False,
    components: Path | None = None,
    check_counterfactuals: bool = False,
) -> BuildResult:
    """Build ``benchmark``'s pairs (``custom`` reads the ``components`` folder) and write them to ``out``."""
    from biaslab.wino.build.build import build_pairs
    from biaslab.wino.build.pairs_io import write_pairs

    result = build_pairs(
        load_components(benchmark, components),
        seed=seed,
        faithful=faithful,
        check_counterfactuals=check_counterfactuals,
    )
    write_pairs(out, result.pairs)
    return result
