"""CrowS-Pairs (Nangia et al. 2020)."""
