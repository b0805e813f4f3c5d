"""The release gate: ``biaslab gate BASELINE CANDIDATE --margin METRIC=DELTA``.

Is the candidate (a run or a suite) no more biased than the baseline, by more than a margin, on every metric
gated? Each metric gets a one-sided non-inferiority test (or, with ``--equivalence``, two one-sided tests) of
the harm difference in the direction its probe declares as worse (:mod:`biaslab.stats.noninferiority`),
paired on the runs' shared items through the probe's pairing (the machinery of ``compare``), unpaired from
the runs' reported intervals otherwise; Holm's step-down adjustment across every margin of the call.

* :mod:`.specs` -- the margins: parsed from ``--margin``, defaults from each probe's headlines.
* :mod:`.sources` -- the two sides: runs, or suites (one model each) matched probe by probe.
* :mod:`.decide` -- the tests, Holm, the verdicts and how many items would settle an inconclusive one.
* :mod:`.render` -- the terminal table, the JUnit XML and the Markdown summary.
"""
