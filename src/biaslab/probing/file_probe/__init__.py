"""Probes from a file: ``biaslab run file:my_probe.yaml``.

A YAML file defines a generation probe without Python: templated prompts over a table of items, an answer read
as one of several lettered options or by word patterns in free text, groups of items, and metrics from a small
named set (a label's rate, the difference of a label's rate between two groups, the undetected rate), each with
its interval from :mod:`biaslab.stats`. docs/file_probes.md is the guide and its worked example.

* :mod:`.strict_yaml` -- the YAML read strictly (duplicate keys, unknown keys, one-line errors);
* :mod:`.schema` -- the whole file checked into a :class:`~.schema.FileSpec` (items, templates, groups);
* :mod:`.answers` -- the ``answer`` section and its readers; :mod:`.metric_specs` -- the ``metrics`` section;
* :mod:`.metrics` -- the metrics with their intervals, and their point values for ``compare``;
* :mod:`.probe` -- the probe class made from a spec; :mod:`.registry` -- ``file:PATH`` and the names runs record.

A file probe's name is ``file:<name>@<hash>``: the hash (of the YAML file and its items table) changes with every
edit, so an edited probe is another probe, whose requests get other seeds (no cached answer of the old one is
reused) and whose runs are never mixed with the old one's. Each run keeps the file's text in results.json
(``details.file_probe``), so ``compare``, ``gate`` and ``report`` work on the run wherever the file has gone.
"""

PREFIX = "file:"  # a probe named file:PATH is the YAML file PATH
