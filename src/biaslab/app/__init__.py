"""The application layer: running a probe by name, its dry run, the catalog of probes, a run's files and report.

It sits above the probe registry (:mod:`biaslab.probes`) and the contract a probe author reads
(:mod:`biaslab.probing`, which imports nothing of this layer): :mod:`.resolve` looks a probe's class up once and
builds it from the ``-P`` options; :mod:`.execute` runs it (``biaslab run``); :mod:`.dry_run` and
:mod:`.time_estimate` plan it without a model call; :mod:`.results` writes a run's files and its report;
:mod:`.catalog` and :mod:`.readiness` say what every probe declares and whether it can run here.
"""
