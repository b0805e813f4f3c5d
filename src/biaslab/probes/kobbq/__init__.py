"""KoBBQ, the Korean Bias Benchmark for Question Answering (Jin et al., TACL 2024)."""
