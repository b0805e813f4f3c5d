"""The best-worst scaling annotation server (``biaslab annotate``).

Annotators log in from a browser (or a script, through the JSON API) and choose, in each tuple,
the text with the most and the one with the least of the study's construct (``init --construct``:
gender bias by default, "anti-Muslim bias", "antisemitism"...). Everything lives in one SQLite database in the
project folder: items, tuples, accounts, sessions, assignments and annotations.

* :mod:`.project` -- ``init``: build a project from items, tuples (or a design) and gold tuples;
* :mod:`.amend` -- ``init`` on an existing project: change its settings before the study starts;
* :mod:`.loaders` -- read those files (items, tuples, gold tuples, instructions) by the rules of
  :func:`biaslab.io.read_table`;
* :mod:`.manage` -- the project-management commands as functions (add an annotator, status, export...);
* :mod:`.db` -- schema, WAL + synchronous=FULL connections, BEGIN IMMEDIATE transactions;
* :mod:`.assignment` -- fair hand-out (per-tuple count, cap, leases, gold, per-annotator randomized
  order and positions) and idempotent submission; :mod:`.skips` -- skip and undo; :mod:`.parsing`
  -- checking request fields;
* :mod:`.auth` -- argon2 passwords, server-side sessions (absolute and idle expiry), CSRF tokens;
  :mod:`.throttle` -- guess throttling (counted before checking) and device cookies;
* :mod:`.api`, :mod:`.pages`, :mod:`.web`, :mod:`.render`, :mod:`.app` -- the FastAPI application;
  :mod:`.middleware` -- security headers, Host allow-list, last-resort 500; :mod:`.protocol` --
  uvicorn's HTTP protocol with a header read timeout;
* :mod:`.status`, :mod:`.status_view`, :mod:`.export` -- progress, gold accuracy, reliability and
  their tables; the CSV export (which ``biaslab bws score`` reads);
* :mod:`.client` -- the product's client SDK for the JSON API (standard library only), for scripts
  that annotate or monitor a study.

The ``biaslab annotate`` command line lives in :mod:`biaslab.cli.annotate`. The simulated
annotators used by the fault tests and ``bench/bench_annotate.py`` are test code:
``tests/annotate/loadgen.py``.
"""
