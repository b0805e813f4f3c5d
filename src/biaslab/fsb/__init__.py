"""Fifty Shades of Bias: graded gender-biased text generation (and, from the bws branch, BWS tools)."""
