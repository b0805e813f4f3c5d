"""BBQ, the Bias Benchmark for QA (Parrish et al. 2022)."""
