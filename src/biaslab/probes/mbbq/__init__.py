"""MBBQ: the Multilingual Bias Benchmark for Question-answering (Neplenbroek et al. 2024)."""
