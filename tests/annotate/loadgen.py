"""Simulated annotators for fault and load testing (used by the tests and bench/bench_annotate.py).

Each simulated annotator logs in, then loops GET /api/next -> POST /api/annotations. It treats the
server as unreliable: on a dropped connection, a refused connection (the server is restarting) or a
503 it waits a little and repeats the *same* request, with the same ``submission_id``, so a
submission whose answer was lost is acknowledged once it can be, and never stored twice.
Loops are bounded by a deadline. Only loopback URLs are accepted.
"""

from __future__ import annotations

import http.client
import os
import random
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from biaslab.annotate.client import ApiClient
from biaslab.annotate.db import Database

RETRYABLE = (OSError, http.client.HTTPException)


@dataclass
class Ack:
    annotator: str
    submission_id: str
    tuple_id: int
    annotation_id: int
    latency: float  # seconds from the first try to the 200 (retries included)


@dataclass
class AnnotatorRun:
    name: str
    acks: list[Ack] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)  # per successful POST attempt
    next_latencies: list[float] = field(default_factory=list)  # per successful GET /api/next
    retries: int = 0
    errors: list[str] = field(default_factory=list)
    finished: bool = False


def _check_loopback(url: str) -> None:
    host = urlsplit(url).hostname or ""
    if host not in ("127.0.0.1", "localhost", "::1") and not host.startswith("127."):
        raise ValueError(f"load generation only targets loopback servers, not {host!r}")


class SimulatedAnnotator:
    def __init__(self, url: str, name: str, password: str, *, deadline: float, seed: int = 0):
        _check_loopback(url)
        self.client = ApiClient(url, timeout=30)
        self.name, self.password, self.deadline = name, password, deadline
        self.rng = random.Random(seed)
        self.run = AnnotatorRun(name)

    def _retry_wait(self) -> None:
        self.run.retries += 1
        if time.monotonic() > self.deadline:
            raise TimeoutError(f"{self.name}: deadline passed while the server was unreachable")
        time.sleep(0.05 + self.rng.random() * 0.1)

    def _call(self, method: str, path: str, body=None):
        while True:
            try:
                status, data, _ = self.client.request(method, path, body)
            except RETRYABLE:
                self._retry_wait()
                continue
            if status == 503:
                self._retry_wait()
                continue
            return status, data

    def login(self) -> None:
        status, data = self._call("POST", "/api/login", {"name": self.name, "password": self.password})
        if status != 200:
            raise RuntimeError(f"{self.name}: login answered {status} {data}")
        self.client.csrf = data["csrf_token"]

    def annotate(self, n: int) -> AnnotatorRun:
        """Submit up to ``n`` annotations (fewer if the server has nothing more for this annotator)."""
        try:
            self.login()
            while len(self.run.acks) < n:
                start = time.perf_counter()
                status, tup = self._call("GET", "/api/next")
                self.run.next_latencies.append(time.perf_counter() - start)
                if status == 204:
                    break
                if status != 200:
                    raise RuntimeError(f"{self.name}: GET /api/next answered {status} {tup}")
                self._submit(tup)
            self.run.finished = True
        except Exception as exc:  # reported, not raised: the caller checks run.errors
            self.run.errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            self.client.close()
        return self.run

    def _submit(self, tup: dict) -> None:
        ids = [item["id"] for item in tup["items"]]
        best, worst = self.rng.sample(range(len(ids)), 2)
        body = {
            "tuple_id": tup["tuple_id"],
            "best": ids[best],
            "worst": ids[worst],
            "feedback": "",
            "submission_id": uuid.uuid4().hex,
        }
        first = time.perf_counter()
        while True:
            start = time.perf_counter()
            status, data = self._call("POST", "/api/annotations", body)
            if status == 200:
                break
            raise RuntimeError(f"{self.name}: POST /api/annotations answered {status} {data}")
        now = time.perf_counter()
        self.run.latencies.append(now - start)
        self.run.acks.append(Ack(self.name, body["submission_id"], tup["tuple_id"], data["annotation_id"], now - first))


def verify_store(project: Path, runs: list[AnnotatorRun], per_tuple: int, cap_count: int) -> dict:
    """Check the database against what the clients saw acknowledged; returns counts and problems."""
    db = Database(project)
    try:
        conn = db.conn()
        integrity = db.integrity_check()
        rows = conn.execute(
            "SELECT a.id, a.tuple_id, a.submission_id, n.name FROM annotations a "
            "JOIN annotators n ON n.id = a.annotator_id"
        ).fetchall()
        per_tuple_rows = conn.execute(
            "SELECT tuple_id, COUNT(*), COUNT(DISTINCT annotator_id) FROM annotations GROUP BY tuple_id"
        ).fetchall()
        per_annotator = conn.execute("SELECT annotator_id, COUNT(*) FROM annotations GROUP BY annotator_id").fetchall()
        pair_dupes = conn.execute(
            "SELECT COUNT(*) - COUNT(DISTINCT tuple_id || '/' || annotator_id) FROM annotations"
        ).fetchone()[0]
        drift = conn.execute(
            "SELECT COUNT(*) FROM tuples t WHERE t.taken <> (SELECT COUNT(*) FROM assignments a "
            "WHERE a.tuple_id = t.id AND a.state IN ('open', 'done'))"
        ).fetchone()[0]
    finally:
        db.close()
    stored = {(r["name"], r["submission_id"]): (r["id"], r["tuple_id"]) for r in rows}
    acked = [a for run in runs for a in run.acks]
    lost = [a for a in acked if stored.get((a.annotator, a.submission_id)) != (a.annotation_id, a.tuple_id)]
    acked_keys = {(a.annotator, a.submission_id) for a in acked}
    return {
        "integrity": integrity,
        "acknowledged": len(acked),
        "stored": len(rows),
        "lost": len(lost),
        "duplicated": len(rows) - len(stored) + len(acked) - len(acked_keys) + pair_dupes,
        "unacknowledged_stored": len(set(stored) - acked_keys),
        "over_per_tuple": sum(1 for _, n, distinct in per_tuple_rows if n > per_tuple or distinct != n),
        "over_cap": sum(1 for _, n in per_annotator if n > cap_count),
        "counter_drift": drift,
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerProcess:
    """``biaslab annotate serve`` as a child process on a loopback port, to kill and restart."""

    def __init__(self, project: Path, *extra: str, port: int | None = None, log: Path | None = None):
        self.project, self.extra = Path(project), extra
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None
        self.log = log or self.project.parent / f"serve-{self.port}.log"
        self.starts = 0

    def start(self, timeout: float = 60.0) -> ServerProcess:
        src = str(Path(__file__).resolve().parents[2] / "src")
        env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "biaslab.cli",
                    "annotate",
                    "serve",
                    str(self.project),
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(self.port),
                    *self.extra,
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
            )
        self.starts += 1
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}: {self.log.read_text()[-2000:]}")
            try:
                if ApiClient(self.url, timeout=2).request("GET", "/api/health")[0] == 200:
                    return self
            except RETRYABLE:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"server did not start within {timeout}s: {self.log.read_text()[-2000:]}")

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs, nothing is flushed."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(30)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def run_load(
    server: ServerProcess,
    accounts: dict[str, str],
    per_annotator: int,
    *,
    kills: int = 0,
    kill_every: int = 100,
    deadline_s: float = 600.0,
) -> tuple[list[AnnotatorRun], dict]:
    """All ``accounts`` annotate concurrently (one thread each); the server is SIGKILLed and restarted
    each time another ``kill_every`` submissions have been acknowledged, ``kills`` times."""
    import threading

    deadline = time.monotonic() + deadline_s
    sims = [
        SimulatedAnnotator(server.url, name, pw, deadline=deadline, seed=k)
        for k, (name, pw) in enumerate(sorted(accounts.items()))
    ]
    threads = [threading.Thread(target=sim.annotate, args=(per_annotator,), daemon=True) for sim in sims]
    started = time.perf_counter()
    for t in threads:
        t.start()
    killed, downtime = 0, 0.0
    while any(t.is_alive() for t in threads) and time.monotonic() < deadline:
        acked = sum(len(sim.run.acks) for sim in sims)
        if killed < kills and acked >= (killed + 1) * kill_every:
            server.kill()
            down = time.perf_counter()
            server.start()
            downtime += time.perf_counter() - down
            killed += 1
        time.sleep(0.02)
    for t in threads:
        t.join(max(deadline - time.monotonic(), 0.1))
    elapsed = time.perf_counter() - started
    return [sim.run for sim in sims], {
        "kills": killed,
        "elapsed": elapsed,
        "downtime": downtime,
        "unfinished": sum(1 for t in threads if t.is_alive()),
    }
