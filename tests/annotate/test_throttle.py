"""The guess throttle and device cookies on their own (a fake clock), the writer thread under an
injected fault, and the CSV-injection guard."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest

from biaslab.annotate.db import Database, WriteFailed
from biaslab.annotate.export import safe_cell
from biaslab.annotate.throttle import DeviceCookies, GuessThrottle, login_keys
from tests.annotate.helpers import make_project


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_reservations_are_atomic_under_threads():
    throttle = GuessThrottle(free=10)
    granted, barrier = [], threading.Barrier(40)

    def guess():
        barrier.wait()
        if throttle.reserve(["name:ann"]) is None:
            granted.append(1)
            time.sleep(0.05)  # the password check
            throttle.settle(["name:ann"], False)

    threads = [threading.Thread(target=guess) for _ in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(granted) == 10


def test_back_off_doubles_and_a_refused_guess_does_not_lengthen_it():
    clock = Clock()
    throttle = GuessThrottle(free=3, base=10, window=600, clock=clock)
    keys = ["name:ann"]
    for _ in range(3):
        assert throttle.reserve(keys) is None
        throttle.settle(keys, False)
    refusal = throttle.reserve(keys)
    assert refusal is not None and refusal.wait == pytest.approx(10)
    clock.now += 5
    assert throttle.reserve(keys).wait == pytest.approx(5)  # refused guesses cost nothing
    clock.now += 5
    assert throttle.reserve(keys) is None  # after 10 s: one more guess
    throttle.settle(keys, False)
    assert throttle.reserve(keys).wait == pytest.approx(20)  # then 20 s, 40 s, ...
    clock.now += 20
    assert throttle.reserve(keys) is None
    throttle.settle(keys, True)  # a success clears the name
    assert throttle.reserve(keys) is None
    throttle.settle(keys, False)
    clock.now += 601
    assert throttle.reserve(keys) is None  # and failures expire after the window


def test_client_buckets_allow_more_and_are_not_cleared_by_a_success():
    clock = Clock()
    throttle = GuessThrottle(free=2, client_free=4, base=10, clock=clock)
    for k in range(4):
        keys = login_keys(f"n{k}", "10.0.0.1", None)
        assert throttle.reserve(keys) is None
        throttle.settle(keys, False)
    assert throttle.reserve(login_keys("other", "10.0.0.1", None)) is not None
    assert throttle.reserve(login_keys("other", "10.0.0.2", None)) is None


def test_memory_is_bounded():
    clock = Clock()
    throttle = GuessThrottle(max_keys=100, clock=clock)
    for k in range(5000):
        keys = login_keys(f"name{k}", f"10.0.{k // 250}.{k % 250}", None)
        if throttle.reserve(keys) is None:
            throttle.settle(keys, False)
        clock.now += 0.01
    assert len(throttle) <= 100


def test_device_cookies_are_signed_and_bound_to_the_name():
    devices = DeviceCookies(b"k" * 32)
    cookie = devices.issue("ann.smith")
    assert devices.device_for(cookie, "ann.smith")
    assert devices.device_for(cookie, "bob") is None
    assert DeviceCookies(b"other key").device_for(cookie, "ann.smith") is None
    name, nonce, mac = cookie.rsplit(".", 2)
    assert devices.device_for(f"{name}.{nonce}x.{mac}", "ann.smith") is None
    assert devices.device_for("x" * 1000, "ann.smith") is None and devices.device_for(None, "a") is None
    assert login_keys("ann", "1.2.3.4", "dev") == ["device:ann:dev"]


def test_a_batch_that_breaks_its_transaction_fails_alone_and_the_writer_carries_on(tmp_path):
    db = Database(make_project(tmp_path, n_tuples=4, per_tuple=1, cap=1.0))
    try:

        def rolls_back_everything(conn):  # what SQLite does on a full disk or an I/O error
            conn.execute("INSERT INTO meta (key, value) VALUES ('fault', '1')")
            conn.execute("ROLLBACK")
            raise sqlite3.OperationalError("disk I/O error")

        assert _within(db, rolls_back_everything) == WriteFailed.__name__  # answered (503), not left waiting
        # The writer is alive: later writes are stored, the faulty one is not.
        assert _within(db, lambda conn: conn.execute("INSERT INTO meta (key, value) VALUES ('after', '1')")) is not None
        meta = db.read_meta()
        assert meta.get("after") == "1" and "fault" not in meta

        def commit_fails(conn):  # a COMMIT that cannot happen: the transaction is gone
            conn.execute("ROLLBACK")
            conn.execute("BEGIN")
            conn.execute("INSERT INTO meta (key, value) VALUES ('half', '1')")
            return "ok"

        results = []
        ready = threading.Event()

        def blocker(conn):
            ready.wait(5)

        t = threading.Thread(target=lambda: db.transact(blocker))
        t.start()
        time.sleep(0.1)
        workers = [
            threading.Thread(target=lambda fn=fn: results.append(_outcome(db, fn)))
            for fn in (commit_fails, lambda conn: conn.execute("INSERT INTO meta VALUES ('ok2', '1')"))
        ]
        for w in workers:
            w.start()
        time.sleep(0.2)
        ready.set()
        for w in [t, *workers]:
            w.join(10)
        assert all(not w.is_alive() for w in workers)  # nobody waits forever
        assert "WriteFailed" in results
        db.transact(lambda conn: conn.execute("INSERT INTO meta (key, value) VALUES ('later', '1')"))
        assert db.read_meta().get("later") == "1"
    finally:
        db.close()


def _within(db, fn, seconds: float = 10.0):
    """``fn``'s outcome through ``transact``; fails (instead of hanging) when no answer comes."""
    out = []
    t = threading.Thread(target=lambda: out.append(_outcome(db, fn)), daemon=True)
    t.start()
    t.join(seconds)
    assert out, f"transact() got no answer within {seconds} s (the writer thread died)"
    return out[0]


def _outcome(db, fn):
    try:
        return db.transact(fn)
    except Exception as exc:
        return type(exc).__name__


def test_csv_guard_sees_through_invisible_and_fullwidth_starts():
    for cell in (
        "\u200b=1+1",
        '\ufeff=HYPERLINK("x")',
        "\x00=1",
        "\uff1dcmd|' /C calc'!A0",
        "\ufe66SUM(A1)",
        "\u3000+1",
        "\u2060@SUM(A1)",
        "\uff0b1",
        "\uff0d1",
        "\uff20A1",
        "\t=1",
        "\n=1",
        " \u200b =1",
    ):
        assert safe_cell(cell).startswith("'"), repr(cell)
    for cell in ("plain text", "1.5", "a=b", "", "595", "Ünïcode text", "\u201cquoted\u201d"):
        assert safe_cell(cell) == cell
