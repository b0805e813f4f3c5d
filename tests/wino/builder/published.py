"""The published benchmarks built once per test process for the tests that only read a build (the same components,
seed and mode give the same result: tests/wino/builder/test_originals.py checks it with builds of its own)."""

from __future__ import annotations

import functools

from biaslab.wino.build.build import BuildResult, build_pairs
from biaslab.wino.build.originals import load_original


@functools.cache
def components(benchmark: str):
    return load_original(benchmark)


@functools.cache
def built(benchmark: str, seed: int = 0, faithful: bool = False) -> BuildResult:
    """``build_pairs`` of a published benchmark, kept: read it, never change it."""
    return build_pairs(components(benchmark), seed=seed, faithful=faithful)
