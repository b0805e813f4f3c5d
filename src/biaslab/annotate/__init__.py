"""The best-worst scaling annotation server (``biaslab annotate``).

Annotators log in from a browser (or a script, through the JSON API) and choose, in each tuple,
the most and the least negatively biased text. Everything lives in one SQLite database in the
project folder: items, tuples, accounts, sessions, assignments and annotations.

* :mod:`.project` -- ``init``: build a project from items, tuples (or a design) and gold tuples;
* :mod:`.db` -- schema, WAL + synchronous=FULL connections, BEGIN IMMEDIATE transactions;
* :mod:`.assignment` -- fair hand-out (per-tuple count, cap, leases, gold) and idempotent submission;
* :mod:`.auth` -- argon2 passwords, server-side sessions, CSRF tokens, login throttle;
* :mod:`.api`, :mod:`.pages`, :mod:`.web`, :mod:`.app` -- the FastAPI application;
* :mod:`.status`, :mod:`.export` -- progress, gold accuracy, reliability; the CSV export;
* :mod:`.client` -- a small client for the JSON API (scripts, tests, the load benchmark).
"""
