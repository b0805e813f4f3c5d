"""Attacks on a real `biaslab annotate serve` on 127.0.0.1: parallel password guessing, lock-out
abuse, hostile numbers and nesting, attacker text on the login page, skipping past the exposure
cap, password-change guessing, Host/Origin checks, JSON-only login, idle sessions, slow clients."""

from __future__ import annotations

import socket
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from biaslab.annotate.client import ApiClient
from biaslab.annotate.db import Database
from tests.annotate.helpers import ServerProcess, make_accounts, make_project

FORM = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "text/html"}


@pytest.fixture
def study(tmp_path):
    project = make_project(tmp_path, n_items=60, n_tuples=24, per_tuple=2, cap=0.125)  # cap 3 tuples
    passwords = make_accounts(project, ["ann", "bob", "carol"])
    with ServerProcess(project) as server:
        yield server, passwords, project


def login_status(url: str, name: str, password: str, client: ApiClient | None = None) -> int:
    c = client or ApiClient(url)
    return c.request("POST", "/api/login", {"name": name, "password": password})[0]


def assert_headers(headers, what):
    assert headers["Content-Security-Policy"].startswith("default-src 'none'"), what
    assert headers["X-Content-Type-Options"] == "nosniff", what


@pytest.mark.slow
def test_a_parallel_burst_of_guesses_is_counted_before_checking(study):
    server, _, _ = study
    with ThreadPoolExecutor(40) as pool:
        codes = list(pool.map(lambda k: login_status(server.url, "ann", f"wrong guess {k}"), range(40)))
    assert sorted(set(codes)) == [401, 429]
    assert codes.count(401) <= 10 and codes.count(429) >= 30  # at most 10 passwords were checked
    assert "Traceback" not in server.log.read_text()


@pytest.mark.slow
def test_an_outsider_cannot_lock_out_a_known_browser(study):
    server, passwords, _ = study
    known = ApiClient(server.url)
    known.login("bob", passwords["bob"])
    assert known.device  # the signed device cookie
    known.logout()
    outsider = ApiClient(server.url)
    codes = [login_status(server.url, "bob", f"guess {k}", outsider) for k in range(12)]
    assert codes[:10] == [401] * 10 and codes[10:] == [429, 429]
    assert login_status(server.url, "bob", passwords["bob"]) == 429  # a fresh client must wait
    assert login_status(server.url, "bob", passwords["bob"], known) == 200  # the known browser logs in
    forged = ApiClient(server.url)
    forged.device = known.device.replace(known.device[-4:], "AAAA")  # a tampered cookie is no cookie
    assert login_status(server.url, "bob", passwords["bob"], forged) == 429
    carols = ApiClient(server.url)  # bob's device cookie does not vouch for carol
    carols.device = known.device
    assert login_status(server.url, "carol", passwords["carol"], carols) == 200


@pytest.mark.slow
def test_one_client_guessing_across_names_is_throttled(study):
    server, passwords, _ = study
    guesser = ApiClient(server.url)
    codes = [login_status(server.url, f"name{k}", "Password123!", guesser) for k in range(40)]
    assert codes[:30] == [401] * 30 and set(codes[30:]) == {429}
    assert "wait" in guesser.request("POST", "/api/login", {"name": "x", "password": "y"})[1]["detail"]


@pytest.mark.slow
def test_password_change_guesses_are_throttled(study):
    server, passwords, _ = study
    c = ApiClient(server.url)
    c.login("carol", passwords["carol"])
    codes = [
        c.request("POST", "/api/password", {"old_password": f"wrong {k}", "new_password": "a new password 1"})[0]
        for k in range(15)
    ]
    assert codes[:10] == [403] * 10 and 429 in codes[10:]


HOSTILE_BODIES = [
    b'{"tuple_id": 9223372036854775808, "best": "1", "worst": "2", "submission_id": "a"}',
    b'{"tuple_id": ' + b"9" * 5000 + b', "best": "1", "worst": "2", "submission_id": "a"}',
    b'{"tuple_id": 1e400, "best": "1", "worst": "2", "submission_id": "a"}',
    b'{"tuple_id": NaN, "best": "1", "worst": "2", "submission_id": "a"}',
    b'{"tuple_id": -Infinity, "best": "1", "worst": "2", "submission_id": "a"}',
    b'{"tuple_id": "' + b"9" * 5000 + b'", "best": "1", "worst": "2", "submission_id": "a"}',
    b'{"tuple_id": 1, "best": ' + b"1" * 5000 + b', "worst": "2", "submission_id": "a"}',
    b'{"tuple_id": 1, "best": 99999999999999999999999, "worst": "2", "submission_id": "a"}',
    b'{"tuple_id": 1, "best": "1", "worst": "2", "submission_id": "a", "feedback": 1e999}',
    b'{"tuple_id": [1], "best": "1", "worst": "2", "submission_id": "a"}',
    b'{"tuple_id": {"$gt": 0}, "best": "1", "worst": "2", "submission_id": ["a"]}',
    b'{"tuple_id": true, "best": "1", "worst": "2", "submission_id": "a"}',
    b'{"tuple_id": -1, "best": "1", "worst": "2", "submission_id": "a"}',
    b'{"tuple_id": 1.5, "best": null, "worst": "2", "submission_id": "a"}',
    b"[" * 30_000 + b"]" * 30_000,
    b'{"a":' * 20_000 + b"1" + b"}" * 20_000,
    b"null",
    b'"just a string"',
    b"\xff\xfe",
    b"",
]


def test_hostile_numbers_nesting_and_types_get_4xx_with_headers(study):
    server, passwords, _ = study
    c = ApiClient(server.url)
    c.login("ann", passwords["ann"])
    json_type = {"Content-Type": "application/json"}
    for body in HOSTILE_BODIES:
        for path in ("/api/annotations", "/api/skip", "/api/password"):
            status, _, headers = c.request("POST", path, raw=body, headers=json_type)
            assert 400 <= status < 500, (path, body[:60], status)
            assert_headers(headers, path)
        anonymous = ApiClient(server.url)
        status, _, headers = anonymous.request("POST", "/api/login", raw=body, headers=json_type)
        assert 400 <= status < 500 and status != 429, (body[:60], status)
        assert_headers(headers, "login")
    for tuple_id in ("9" * 5000, str(2**63), "1e400", "-1", "NaN", "0x10"):
        for path, extra in (("/skip", ""), ("/annotate", "&best=1&worst=2&submission_id=x")):
            raw = f"csrf_token={c.csrf}&tuple_id={tuple_id}{extra}".encode()
            status, page, headers = c.request("POST", path, raw=raw, headers=FORM)
            assert 400 <= status < 500, (path, tuple_id[:20], status)
            assert_headers(headers, path)
    for path in (
        "/login?status=-1",
        "/login?status=99999999999999999999",
        "/annotate?tuple_id=1e400",
        "/api/next?tuple_id=" + "9" * 5000,
    ):
        status, _, headers = c.request("GET", path)
        assert status < 500, path
        assert_headers(headers, path)
    assert c.request("GET", "/api/progress")[0] == 200  # the connection and session still work
    log = server.log.read_text()
    assert "Traceback" not in log and "Exception" not in log, log[-2000:]


def test_the_login_page_shows_no_text_from_the_url(study):
    server, _, _ = study
    c = ApiClient(server.url)
    bait = "Your account is suspended. Call +1 555 0100 to restore it"
    status, page, _ = c.request("GET", "/login?error=" + bait.replace(" ", "%20"), headers={"Accept": "text/html"})
    assert status == 200 and "Log in" in page and "suspended" not in page and "555" not in page
    status, page, _ = c.request("GET", "/login?status=-1", headers={"Accept": "text/html"})
    assert status == 200 and 'id="login-form"' in page
    status, page, _ = c.request("GET", "/login?error=expired", headers={"Accept": "text/html"})
    assert status == 200 and "The login form expired" in page


def test_skipping_does_not_widen_exposure(study):
    server, passwords, project = study
    c = ApiClient(server.url)
    c.login("ann", passwords["ann"])
    seen = set()
    for _ in range(30):
        tup = c.next()
        if tup is None:
            break
        seen.add(tup["tuple_id"])
        c.skip(tup["tuple_id"])
    assert len(seen) == 3  # the cap (3 of 24), skips included
    assert c.progress()["seen"] == 3 and c.progress()["remaining"] == 0
    db = Database(project)
    try:
        shown = (
            db.conn()
            .execute(
                "SELECT COUNT(*) FROM assignments a JOIN annotators n ON n.id = a.annotator_id WHERE n.name = 'ann'"
            )
            .fetchone()[0]
        )
    finally:
        db.close()
    assert shown == 3


def test_origin_host_and_content_type_checks(study):
    server, passwords, _ = study
    c = ApiClient(server.url)
    body = {"name": "ann", "password": passwords["ann"]}
    host = server.url.split("//")[1]
    # A page on another name that resolves here (DNS rebinding) sends its own Host and Origin.
    status, _, headers = c.request(
        "POST", "/api/login", body, headers={"Host": "evil.example:80", "Origin": "http://evil.example:80"}
    )
    assert status == 421
    assert_headers(headers, "421")
    assert c.request("GET", "/api/health", headers={"Host": "evil.example"})[0] == 421
    assert c.request("POST", "/api/login", body, headers={"Origin": "http://evil.example"})[0] == 403
    assert c.request("POST", "/api/login", body, headers={"Origin": f"https://{host}"})[0] == 403  # scheme
    assert c.request("POST", "/api/login", body, headers={"Origin": "null"})[0] == 403
    plain = c.request(
        "POST",
        "/api/login",
        raw=f'{{"name": "ann", "password": "{passwords["ann"]}"}}'.encode(),
        headers={"Content-Type": "text/plain"},
    )
    assert plain[0] == 415
    assert c.request("POST", "/api/login", body, headers={"Origin": f"http://{host}"})[0] == 200
    localhost = host.replace("127.0.0.1", "localhost")
    assert c.request("GET", "/api/health", headers={"Host": localhost})[0] == 200


def test_feedback_is_stored_verbatim(study):
    server, passwords, project = study
    c = ApiClient(server.url)
    c.login("bob", passwords["bob"])
    tup = c.next()
    ids = [i["id"] for i in tup["items"]]
    feedback = "  two leading spaces,\ta tab and a trailing newline\n"
    c.submit(tup["tuple_id"], ids[0], ids[1], feedback=feedback, submission_id="verbatim")
    db = Database(project)
    try:
        stored = db.conn().execute("SELECT feedback FROM annotations WHERE submission_id = 'verbatim'").fetchone()[0]
    finally:
        db.close()
    assert stored == feedback


@pytest.mark.slow
def test_sessions_end_when_idle(tmp_path):
    project = make_project(tmp_path, n_tuples=4, per_tuple=1, cap=1.0)
    password = make_accounts(project, ["ann"])["ann"]
    with ServerProcess(project, "--idle-timeout", "2") as server:
        c = ApiClient(server.url)
        c.login("ann", password)
        for _ in range(3):  # active: the session stays
            time.sleep(1)
            assert c.request("GET", "/api/progress")[0] == 200
        time.sleep(3)
        assert c.request("GET", "/api/progress")[0] == 401


@pytest.mark.slow
def test_slow_headers_and_slow_bodies_are_cut_off(study):
    server, _, _ = study
    port = int(server.url.rsplit(":", 1)[1])
    slow_head = socket.create_connection(("127.0.0.1", port))
    slow_body = socket.create_connection(("127.0.0.1", port))
    idle = socket.create_connection(("127.0.0.1", port))
    try:
        slow_head.sendall(f"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode())
        slow_body.sendall(
            f"POST /api/login HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            'Content-Length: 500\r\n\r\n{"name": '.encode()
        )
        start = time.monotonic()
        answers = {}
        deadline = start + 40
        socks = {"head": slow_head, "body": slow_body, "idle": idle}
        for s in socks.values():
            s.settimeout(0.5)
        while len(answers) < 3 and time.monotonic() < deadline:
            for name, s in socks.items():
                if name in answers:
                    continue
                if name == "head":
                    try:
                        s.sendall(b"X")  # one byte now and then: never a full header
                    except OSError:
                        answers[name] = (b"", time.monotonic() - start)
                        continue
                try:
                    data = s.recv(4096)
                except TimeoutError:
                    continue
                except OSError:
                    data = b""
                answers[name] = (data, time.monotonic() - start)
    finally:
        for s in (slow_head, slow_body, idle):
            s.close()
    assert set(answers) == {"head", "body", "idle"}
    assert answers["head"][1] < 20 and answers["idle"][1] < 20  # header timeout 10 s
    assert answers["body"][0].startswith(b"HTTP/1.1 408") and answers["body"][1] < 35  # body timeout 20 s
    assert ApiClient(server.url).request("GET", "/api/health")[0] == 200


def test_a_storage_fault_answers_503_and_the_server_carries_on(tmp_path, monkeypatch):
    """The app in this process (so the test can inject the fault), served by uvicorn on 127.0.0.1."""
    import threading

    import uvicorn

    from biaslab.annotate import api
    from biaslab.annotate.app import create_app
    from tests.annotate.helpers import free_port

    project = make_project(tmp_path, n_tuples=6, per_tuple=1, cap=1.0)
    password = make_accounts(project, ["ann"])["ann"]
    port = free_port()
    app = create_app(project, allowed_hosts=[f"127.0.0.1:{port}"])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        c = ApiClient(f"http://127.0.0.1:{port}")
        c.login("ann", password)
        tup = c.next()
        ids = [i["id"] for i in tup["items"]]
        real_submit = api.submit

        def disk_fails(db, s, me, sub):
            def tx(conn):
                conn.execute("ROLLBACK")  # SQLite gives up the whole transaction (disk full, I/O error)
                raise OSError("injected I/O error")

            return db.transact(tx)

        monkeypatch.setattr(api, "submit", disk_fails)
        status, body, headers = c.request(
            "POST",
            "/api/annotations",
            {"tuple_id": tup["tuple_id"], "best": ids[0], "worst": ids[1], "feedback": "", "submission_id": "s1"},
        )
        assert status == 503 and "nothing was stored" in body["detail"] and headers["Retry-After"] == "1"
        assert_headers(headers, "503")
        monkeypatch.setattr(api, "submit", real_submit)
        ok = c.submit(tup["tuple_id"], ids[0], ids[1], submission_id="s1")  # the same request again
        assert ok["ok"] and ok["done"] == 1
    finally:
        server.should_exit = True
        thread.join(15)
        app.state.server.db.close()


@pytest.mark.slow
def test_unparsable_requests_get_400_with_the_security_headers(study):
    server, _, _ = study
    port = int(server.url.rsplit(":", 1)[1])
    for raw in (
        b"GARBAGE\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Big: " % port + b"a" * 20_000 + b"\r\n\r\n",
        b"GET /\x00 HTTP/1.1\r\n\r\n",
    ):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(raw)
            answer = b""
            while chunk := s.recv(4096):
                answer += chunk
        head = answer.split(b"\r\n\r\n")[0].lower()
        assert head.startswith((b"http/1.1 400", b"http/1.1 431")), head[:80]
        assert b"content-security-policy: default-src 'none'" in head and b"x-content-type-options: nosniff" in head
    assert ApiClient(server.url).request("GET", "/api/health")[0] == 200
