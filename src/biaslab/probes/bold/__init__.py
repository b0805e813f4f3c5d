"""BOLD: sentiment of continuations of Wikipedia prompts about groups (Dhamala et al. 2021)."""
