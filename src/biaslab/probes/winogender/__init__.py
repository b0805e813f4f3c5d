"""Winogender schemas (Rudinger et al. 2018)."""
