"""Direct: does the model agree with stereotypical statements about genders (GenderBench 1.1)."""
