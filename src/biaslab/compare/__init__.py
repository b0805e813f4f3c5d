"""Comparisons across runs: one table of runs, and two benchmarks on the same models."""
