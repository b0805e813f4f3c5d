"""Fifty Shades of Bias: analyses of graded (BWS-scored) texts; ``biaslab fsb ...`` commands."""
