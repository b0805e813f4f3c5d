"""Paired-sentence benchmarks (``biaslab wino``): :mod:`.build` writes the pairs from components,
:mod:`.predicates` extracts and reviews the attested-harm predicates they are built from."""
