"""Comparative annotation: best-worst scaling (BWS) tuple design, scoring and reliability.

* :mod:`.design` -- tuples for N items (Kiritchenko & Mohammad), with guarantees.
* :mod:`.data` -- read (:func:`biaslab.io.read_table` rules) and validate annotations in the
  released layout; the indexed form the scorers use.
* :mod:`.score` -- counting scores; intervals from each item's appearances or a bootstrap over tuples.
* :mod:`.bradley_terry` -- Bradley-Terry scores from the pairwise outcomes of each annotation, per
  component of the comparison graph.
* :mod:`.reliability` -- split-half reliability (Pearson and Spearman, :mod:`biaslab.stats.correlation`).
* :mod:`.run` -- the ``bws`` commands on files (read inputs, write the output file).

The ``biaslab bws`` command line lives in :mod:`biaslab.cli.bws`; the annotation server that
collects best-worst annotations is :mod:`biaslab.annotate`.
"""
