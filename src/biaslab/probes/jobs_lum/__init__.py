"""JobsLum: the gender of characters a model writes for occupations."""
