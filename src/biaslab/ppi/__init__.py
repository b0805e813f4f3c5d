"""``biaslab ppi``: the mean human score of a set of items from a judge's scores on all of them and
people's scores on a random subset (prediction-powered inference). Reading the inputs:
:mod:`biaslab.ppi.inputs`; the analysis: :mod:`biaslab.ppi.analysis`; the statistics:
:mod:`biaslab.stats.ppi`."""
