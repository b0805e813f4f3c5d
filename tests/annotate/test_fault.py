"""Durable acknowledgement under faults: 20 concurrent annotator clients on loopback while the
server process is SIGKILLed and restarted several times mid-load. Every acknowledged submission
must be in the database exactly once; the per-tuple count, the cap and the integrity check hold."""

from __future__ import annotations

import pytest

from biaslab.annotate.db import Database
from tests.annotate.helpers import ServerProcess, make_accounts, make_project
from tests.annotate.loadgen import run_load, verify_store

N_ANNOTATORS = 20
PER_ANNOTATOR = 25
KILLS = 4


@pytest.mark.slow
def test_sigkill_mid_load_loses_and_duplicates_nothing(tmp_path):
    # 250 tuples x 3 = 750 slots for 20 x 25 = 500 submissions; cap 0.1 -> 25 tuples each.
    project = make_project(tmp_path, n_items=300, n_tuples=250, per_tuple=3, cap=0.1)
    accounts = make_accounts(project, [f"ann{k:02d}" for k in range(N_ANNOTATORS)])
    server = ServerProcess(project).start()
    try:
        runs, info = run_load(server, accounts, PER_ANNOTATOR, kills=KILLS, kill_every=90, deadline_s=400)
    finally:
        server.stop()
    errors = [e for run in runs for e in run.errors]
    assert errors == []
    assert info["kills"] == KILLS and info["unfinished"] == 0
    assert sum(run.retries for run in runs) > 0  # the kills really hit requests in flight
    report = verify_store(project, runs, per_tuple=3, cap_count=25)
    assert report["integrity"] == "ok"
    assert report["acknowledged"] == N_ANNOTATORS * PER_ANNOTATOR
    assert report["lost"] == 0 and report["duplicated"] == 0
    assert report["stored"] == report["acknowledged"] and report["unacknowledged_stored"] == 0
    assert report["over_per_tuple"] == 0 and report["over_cap"] == 0 and report["counter_drift"] == 0
    db = Database(project)
    try:
        conn = db.conn()
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
        synchronous = conn.execute("PRAGMA synchronous").fetchone()[0]
    finally:
        db.close()
    assert mode == "wal" and synchronous == 2  # 2 = FULL: COMMIT returns after the WAL is fsynced


def test_restart_keeps_sessions_and_open_tuples(tmp_path):
    project = make_project(tmp_path, n_tuples=6, per_tuple=1, cap=1.0)
    password = make_accounts(project, ["ann"])["ann"]
    from biaslab.annotate.client import ApiClient

    server = ServerProcess(project).start()
    try:
        c = ApiClient(server.url)
        c.login("ann", password)
        held = c.next()
        server.kill()
        server.start()
        assert c.next() == held  # same session, same open tuple
        items = [i["id"] for i in held["items"]]
        assert c.submit(held["tuple_id"], items[0], items[1], submission_id="after-restart")["ok"]
    finally:
        server.stop()
