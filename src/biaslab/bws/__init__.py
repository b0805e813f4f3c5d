"""Comparative annotation: best-worst scaling (BWS) tuple design, scoring and reliability.

* :mod:`.bws_design` -- tuples for N items (Kiritchenko & Mohammad), with guarantees.
* :mod:`.bws_data` -- read and validate annotations in the released layout.
* :mod:`.bws_score` -- counting and Bradley-Terry scores, bootstrap CIs over tuples.
* :mod:`.bws_reliability` -- split-half reliability.
* :mod:`.cli` -- the ``biaslab bws`` commands.
"""
