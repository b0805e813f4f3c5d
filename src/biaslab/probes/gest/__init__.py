"""GEST: which gender the model says would say a stereotypical sentence (GenderBench 1.1)."""
