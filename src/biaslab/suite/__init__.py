"""``biaslab suite``: a set of probes on one or more models, one results.json and one report card."""
