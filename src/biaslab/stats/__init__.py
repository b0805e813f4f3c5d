"""biaslab's statistics: estimates with intervals and p values that agree, for the probes, ``compare``, the gate
and ``ppi``. Import the entry points from here (``from biaslab.stats import cluster_inference``); each module
below stays importable by its own path. Most results are metric dicts ``{value, ci_low, ci_high, p, n, method,
...}`` in which "the interval excludes the null" and "p < 1 - confidence" agree by construction.

**Declaring a metric** -- :class:`Estimand` (a metric's kind -- mean, ratio, paired difference, slope,
correlation, combination of group means (a mean of means or a contrast, :func:`combination_inference`) --, unit,
null and range) and :func:`estimate` (:mod:`.estimand`): from the rows' numbers, with their clusters and strata
(:class:`Rows`; a combination's rows carry their ``groups`` and the coefficients ``coef``), the result dict of the
procedure below and the unit values (:class:`Units`) the gate tests (:func:`units_of`: those alone). A probe that
declares its metrics so needs none of the entry points below for them.

**Means over units** (a rate, a bias score, a likelihood difference)

* :func:`cluster_inference` (:mod:`.clustered`) -- the pooled mean of unit values with clusters and strata:
  exact binomial / Clopper-Pearson for independent 0/1 units, the cluster sign-flip test inverted into an interval
  for few informative clusters (:mod:`.signflip`), the cluster-robust t with CR2 variance and Bell-McCaffrey
  degrees of freedom otherwise (:mod:`.robust`); :func:`paired_cluster_inference`, the same for the paired
  difference of two runs on shared units. :func:`min_clusters`, :func:`attainable_min_p`: what ``k`` exchangeable
  clusters can show at all.
* :func:`ratio_units`, :func:`masked_ratio_units`, :func:`subset_mean_units`, :func:`bounds_if_inside`
  (:mod:`.unit_values`) -- linearised (delta-method) unit values whose mean is a ratio estimator, for the above;
  :func:`pearson_units`, :func:`spearman_units`, :func:`ols_slope_units` -- the same for a correlation and a slope
  (the estimate plus its influence values);
  :func:`ratio_gap` (:mod:`.ratio_gaps`) -- the paired gap between two conditions' ratios.
* :func:`combination_inference` (:mod:`.group_means`) -- a linear combination of group means (a mean of means, a
  contrast) as one pooled mean; :func:`two_group_inference`, :func:`share_of_attempts`, :func:`pooled_rate`,
  :func:`keep_defined_values` beside it.
* :func:`two_sample_inference` (:mod:`.two_sample`) -- the difference of two independent groups' means: Welch's t
  with Hsu's degrees of freedom, an exact permutation p where the groups are tiny.
* :func:`stratified_cluster_sums`, :func:`percentile_ci` (:mod:`.cluster_bootstrap`) -- the stratified cluster
  bootstrap with percentile intervals (no probe uses it; the predicate-extraction study does,
  :mod:`biaslab.wino.predicates`).

**Functions of estimates** -- :func:`fold_abs` (the size of a gap, ``|x - c|``) and :func:`max_of_gaps` (the
largest of several gaps, Bonferroni, at :func:`bonferroni_confidence`) (:mod:`.derived`).

**Correlation** -- :func:`pearson` (r alone), :func:`pearson_inference` (Fisher's z interval and p),
:func:`overlapping_bound`, :func:`overlapping_p` (Zou's interval and test for two correlations sharing a variable)
(:mod:`.correlation`).

**Proportions** -- :func:`wilson`, :func:`clopper_pearson` (exact) and :func:`binomial_central_p` (the exact
binomial p whose inversion is Clopper-Pearson) (:mod:`.intervals`); :func:`difference_score_interval`
(:mod:`.trinomial`) -- a difference of two proportions from one trinomial sample (McNemar's design, best-worst
counts): Tango's score interval.

**Tests** -- :func:`permutation_test_means`, :func:`paired_permutation_test`, :func:`binomial_test` and their
:class:`TestResult` (:mod:`.significance`); McNemar's exact test, the paired swap test and the paired bootstrap of
two runs are in :mod:`.paired`.

**Multiple testing** -- :func:`adjust_pvalues` (:mod:`.adjust`): Holm, Benjamini-Hochberg (the q values),
Bonferroni, by name; :func:`add_qvalues` writes BH q values into metric dicts.

**Prediction-powered inference** -- :func:`ppi_mean`, :func:`group_differences`, :class:`PPIEstimate`
(:mod:`.ppi`): a mean from a judge's scores corrected on a human-labelled subset (PPI++).

**Non-inferiority and equivalence** (the gate) -- the bootstrap tests of one metric of two runs are in the module
:mod:`.noninferiority` (``from biaslab.stats import noninferiority``; its function ``noninferiority`` shares the
module's name, so the functions are not re-exported here); :func:`noninferiority_test` (:mod:`.paired_binary`) --
Tango's score test for two paired proportions. :func:`few_units_p`, :func:`few_units_z` (:mod:`.few_units`) --
a bootstrap p recalibrated to the few units (clusters) it resamples: Student's t on ``k - 1`` degrees of freedom.

**Sample size** -- :func:`normal_n` (:mod:`.sample_size`): units for a given power, normal approximation.

**Ranges and honest reporting** -- :func:`within_range` and the ranges :data:`RATE`, :data:`RATE_GAP`,
:data:`PERCENT`, :data:`SCORE`, :data:`CORRELATION`, :data:`HALF_RATE` (:mod:`.ranges`): a metric's possible
values, its interval clipped to them; :func:`honest_metric`, :func:`undefined` (:mod:`.honest`) and
:func:`honest_interval` (:mod:`.intervals`): no zero-width interval, a reason for every missing one.

**Weighted estimators** -- :func:`weighted_nanmean`, :func:`weighted_ratio`, :func:`weighted_bounded_slope`
(:mod:`.weighted`): GenderBench's, one weight row or a matrix of them (bootstrap weights).

Not re-exported: word-group statistics (PMI, Monroe et al.'s log-odds with a Dirichlet prior: :mod:`.lexical`)
and small helpers (:mod:`.resample`, :mod:`.weighted`'s sufficient statistics).

Importing this package is cheap: each entry point's module is imported the first time the name is used.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (type checkers read it as True)

_HOME: dict[str, tuple[str, ...]] = {
    "estimand": ("Estimand", "Rows", "Units", "estimate", "units_of"),
    "clustered": ("cluster_inference", "paired_cluster_inference", "min_clusters", "attainable_min_p"),
    "unit_values": (
        "ratio_units",
        "masked_ratio_units",
        "subset_mean_units",
        "bounds_if_inside",
        "pearson_units",
        "spearman_units",
        "ols_slope_units",
    ),
    "ratio_gaps": ("ratio_gap",),
    "group_means": (
        "combination_inference",
        "two_group_inference",
        "share_of_attempts",
        "pooled_rate",
        "keep_defined_values",
        "add_qvalues",
    ),
    "two_sample": ("two_sample_inference", "attainable_min_p_two_sample"),
    "cluster_bootstrap": ("stratified_cluster_sums", "percentile_ci"),
    "derived": ("fold_abs", "max_of_gaps", "bonferroni_confidence"),
    "correlation": ("pearson", "pearson_inference", "overlapping_bound", "overlapping_p"),
    "intervals": ("wilson", "clopper_pearson", "binomial_central_p", "honest_interval"),
    "trinomial": ("difference_score_interval",),
    "significance": ("TestResult", "permutation_test_means", "paired_permutation_test", "binomial_test"),
    "adjust": ("adjust_pvalues",),
    "ppi": ("ppi_mean", "group_differences", "PPIEstimate"),
    "paired_binary": ("noninferiority_test",),
    "few_units": ("few_units_p", "few_units_z"),
    "sample_size": ("normal_n",),
    "ranges": ("within_range", "Range", "RATE", "RATE_GAP", "PERCENT", "SCORE", "CORRELATION", "HALF_RATE"),
    "honest": ("honest_metric", "undefined"),
    "weighted": ("weighted_nanmean", "weighted_ratio", "weighted_bounded_slope"),
}
_MODULE_OF = {name: module for module, names in _HOME.items() for name in names}

__all__ = list(_MODULE_OF)

if TYPE_CHECKING:
    from biaslab.stats.adjust import adjust_pvalues as adjust_pvalues
    from biaslab.stats.cluster_bootstrap import percentile_ci as percentile_ci
    from biaslab.stats.cluster_bootstrap import stratified_cluster_sums as stratified_cluster_sums
    from biaslab.stats.clustered import attainable_min_p as attainable_min_p
    from biaslab.stats.clustered import cluster_inference as cluster_inference
    from biaslab.stats.clustered import min_clusters as min_clusters
    from biaslab.stats.clustered import paired_cluster_inference as paired_cluster_inference
    from biaslab.stats.correlation import overlapping_bound as overlapping_bound
    from biaslab.stats.correlation import overlapping_p as overlapping_p
    from biaslab.stats.correlation import pearson as pearson
    from biaslab.stats.correlation import pearson_inference as pearson_inference
    from biaslab.stats.derived import bonferroni_confidence as bonferroni_confidence
    from biaslab.stats.derived import fold_abs as fold_abs
    from biaslab.stats.derived import max_of_gaps as max_of_gaps
    from biaslab.stats.estimand import Estimand as Estimand
    from biaslab.stats.estimand import Rows as Rows
    from biaslab.stats.estimand import Units as Units
    from biaslab.stats.estimand import estimate as estimate
    from biaslab.stats.estimand import units_of as units_of
    from biaslab.stats.few_units import few_units_p as few_units_p
    from biaslab.stats.few_units import few_units_z as few_units_z
    from biaslab.stats.group_means import add_qvalues as add_qvalues
    from biaslab.stats.group_means import combination_inference as combination_inference
    from biaslab.stats.group_means import keep_defined_values as keep_defined_values
    from biaslab.stats.group_means import pooled_rate as pooled_rate
    from biaslab.stats.group_means import share_of_attempts as share_of_attempts
    from biaslab.stats.group_means import two_group_inference as two_group_inference
    from biaslab.stats.honest import honest_metric as honest_metric
    from biaslab.stats.honest import undefined as undefined
    from biaslab.stats.intervals import binomial_central_p as binomial_central_p
    from biaslab.stats.intervals import clopper_pearson as clopper_pearson
    from biaslab.stats.intervals import honest_interval as honest_interval
    from biaslab.stats.intervals import wilson as wilson
    from biaslab.stats.paired_binary import noninferiority_test as noninferiority_test
    from biaslab.stats.ppi import PPIEstimate as PPIEstimate
    from biaslab.stats.ppi import group_differences as group_differences
    from biaslab.stats.ppi import ppi_mean as ppi_mean
    from biaslab.stats.ranges import CORRELATION as CORRELATION
    from biaslab.stats.ranges import HALF_RATE as HALF_RATE
    from biaslab.stats.ranges import PERCENT as PERCENT
    from biaslab.stats.ranges import RATE as RATE
    from biaslab.stats.ranges import RATE_GAP as RATE_GAP
    from biaslab.stats.ranges import SCORE as SCORE
    from biaslab.stats.ranges import Range as Range
    from biaslab.stats.ranges import within_range as within_range
    from biaslab.stats.ratio_gaps import ratio_gap as ratio_gap
    from biaslab.stats.sample_size import normal_n as normal_n
    from biaslab.stats.significance import TestResult as TestResult
    from biaslab.stats.significance import binomial_test as binomial_test
    from biaslab.stats.significance import paired_permutation_test as paired_permutation_test
    from biaslab.stats.significance import permutation_test_means as permutation_test_means
    from biaslab.stats.trinomial import difference_score_interval as difference_score_interval
    from biaslab.stats.two_sample import attainable_min_p_two_sample as attainable_min_p_two_sample
    from biaslab.stats.two_sample import two_sample_inference as two_sample_inference
    from biaslab.stats.unit_values import bounds_if_inside as bounds_if_inside
    from biaslab.stats.unit_values import masked_ratio_units as masked_ratio_units
    from biaslab.stats.unit_values import ols_slope_units as ols_slope_units
    from biaslab.stats.unit_values import pearson_units as pearson_units
    from biaslab.stats.unit_values import ratio_units as ratio_units
    from biaslab.stats.unit_values import spearman_units as spearman_units
    from biaslab.stats.unit_values import subset_mean_units as subset_mean_units
    from biaslab.stats.weighted import weighted_bounded_slope as weighted_bounded_slope
    from biaslab.stats.weighted import weighted_nanmean as weighted_nanmean
    from biaslab.stats.weighted import weighted_ratio as weighted_ratio
else:

    def __getattr__(name: str) -> object:
        """An entry point, imported from its module the first time it is asked for."""
        module = _MODULE_OF.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})
