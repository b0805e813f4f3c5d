"""The JSON API of a real `biaslab annotate serve` process on loopback: sessions, CSRF, isolation,
idempotent submission, 204, hostile texts, headers."""

from __future__ import annotations

import json
import time

import pytest

from biaslab.annotate.client import ApiClient
from biaslab.annotate.db import Database
from tests.annotate.helpers import ServerProcess, make_accounts, make_project

HOSTILE = {
    "1": "<script>window.__pwned = 1; alert('x')</script> women belong in the kitchen",
    "2": '<img src=x onerror="window.__pwned = 2"> he is a nurse',
    "3": '<a href="javascript:window.__pwned=3">click me</a> she is an engineer',
    "4": "\u202eniamod siht ni tnetepmoc era nem ylnO\u202c and {{ 7 * 7 }}",
    "5": "A" * 100_000,
}


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("api")
    project = make_project(tmp, n_items=40, n_tuples=10, per_tuple=2, cap=0.3, texts=HOSTILE)  # cap 3
    passwords = make_accounts(project, ["ann", "bob", "victim"])
    passwords.update(make_accounts(project, ["boss"], admin=True))
    with ServerProcess(project) as server:
        yield server, passwords, project


def client(study, name=None) -> ApiClient:
    server, passwords, _ = study
    c = ApiClient(server.url)
    if name:
        c.login(name, passwords[name])
    return c


@pytest.mark.slow
def test_login_sets_a_strict_httponly_cookie_and_returns_a_csrf_token(study):
    c = client(study)
    status, body, headers = c.request("POST", "/api/login", {"name": "ann", "password": study[1]["ann"]})
    assert status == 200 and len(body["csrf_token"]) >= 32 and body["name"] == "ann" and body["is_admin"] is False
    cookie = headers.get("Set-Cookie")
    assert cookie.startswith("biaslab_session=")
    flags = [part.strip().lower() for part in cookie.split(";")]
    assert "httponly" in flags and "samesite=strict" in flags and "path=/" in flags
    assert c.request("POST", "/api/login", {"name": "ann", "password": "wrong password"})[0] == 401
    assert c.request("POST", "/api/login", {"name": "nobody", "password": "wrong password"})[0] == 401


@pytest.mark.slow
def test_login_rotates_the_session(study):
    c = client(study, "ann")
    first_token, first_csrf = c.session, c.csrf
    c.login("ann", study[1]["ann"])  # logging in again, sending the old cookie
    assert c.session != first_token and c.csrf != first_csrf
    stale = ApiClient(c_url(study))
    stale.session = first_token
    assert stale.request("GET", "/api/progress")[0] == 401  # the old session is gone


def c_url(study):
    return study[0].url


def test_every_post_needs_the_sessions_csrf_token(study):
    c = client(study, "ann")
    tup = c.next()
    body = {
        "tuple_id": tup["tuple_id"],
        "best": tup["items"][0]["id"],
        "worst": tup["items"][1]["id"],
        "feedback": "",
        "submission_id": "csrf-test",
    }
    assert c.request("POST", "/api/annotations", body, headers={"X-CSRF-Token": ""})[0] == 403
    assert c.request("POST", "/api/annotations", body, headers={"X-CSRF-Token": "x" * 43})[0] == 403
    other = client(study, "bob")  # a valid token of another session does not work either
    assert c.request("POST", "/api/annotations", body, headers={"X-CSRF-Token": other.csrf})[0] == 403
    assert c.request("POST", "/api/skip", {"tuple_id": tup["tuple_id"]}, headers={"X-CSRF-Token": ""})[0] == 403
    assert c.request("POST", "/api/logout", {}, headers={"X-CSRF-Token": ""})[0] == 403
    # A request from another site is refused even with the token.
    assert c.request("POST", "/api/annotations", body, headers={"Origin": "http://evil.example"})[0] == 403
    assert c.request("POST", "/api/annotations", body)[0] == 200


def test_anonymous_requests_get_401(study):
    c = client(study)
    for method, path in (
        ("GET", "/api/next"),
        ("GET", "/api/progress"),
        ("GET", "/api/admin/status"),
        ("POST", "/api/annotations"),
        ("POST", "/api/logout"),
    ):
        assert c.request(method, path, {} if method == "POST" else None)[0] == 401, path


def test_identity_comes_from_the_session_and_tuples_must_be_handed_to_you(study):
    ann, bob = client(study, "ann"), client(study, "bob")
    mine = ann.next()
    theirs = bob.next()
    assert mine is not None and theirs is not None
    # Bob cannot answer a tuple that was handed to Ann only, whatever he claims in the body.
    bob_tuples = {theirs["tuple_id"]}
    foreign = next(t for t in range(1, 11) if t not in bob_tuples)
    status, body, _ = bob.request(
        "POST",
        "/api/annotations",
        {"tuple_id": foreign, "best": "1", "worst": "2", "feedback": "", "submission_id": "steal", "annotator": "ann"},
    )
    assert status == 403 and "not handed to you" in body["detail"]
    # An "annotator" field in the body is ignored: the annotation is Bob's.
    items = [i["id"] for i in theirs["items"]]
    ok = bob.request(
        "POST",
        "/api/annotations",
        {
            "tuple_id": theirs["tuple_id"],
            "best": items[0],
            "worst": items[3],
            "feedback": "",
            "submission_id": "mine-1",
            "annotator": "ann",
            "annotator_id": 1,
        },
    )
    assert ok[0] == 200
    db = Database(study[2])
    row = (
        db.conn()
        .execute(
            "SELECT n.name FROM annotations a JOIN annotators n ON n.id = a.annotator_id "
            "WHERE a.submission_id = 'mine-1'"
        )
        .fetchone()
    )
    assert row["name"] == "bob"
    db.close()
    # Nothing an annotator can call shows another's annotations or reaches admin data.
    progress = bob.progress()
    assert set(progress) == {
        "name",
        "consented",
        "done",
        "skipped",
        "seen",
        "cap",
        "remaining",
        "open_tuple_id",
        "undo_tuple_id",
        "break_every",
        "construct",
    }
    assert progress["construct"] == "gender bias"
    assert progress["name"] == "bob"
    assert bob.request("GET", "/api/admin/status")[0] == 403
    assert bob.request("GET", "/admin")[0] == 403


def test_repeated_submission_id_returns_the_same_answer_and_stores_nothing(study):
    c = client(study, "ann")
    tup = c.next()
    items = [i["id"] for i in tup["items"]]
    body = {
        "tuple_id": tup["tuple_id"],
        "best": items[2],
        "worst": items[0],
        "feedback": "replayed",
        "submission_id": "replay-me",
    }
    answers = [c.request("POST", "/api/annotations", body) for _ in range(3)]
    assert [a[0] for a in answers] == [200, 200, 200]
    assert answers[0][1] == answers[1][1] == answers[2][1]
    db = Database(study[2])
    n = db.conn().execute("SELECT COUNT(*) FROM annotations WHERE submission_id = 'replay-me'").fetchone()[0]
    db.close()
    assert n == 1


def test_next_gives_204_when_nothing_is_left_for_you(study):
    c = client(study, "ann")
    while True:  # ann's cap is 3 tuples
        status, tup, _ = c.request("GET", "/api/next")
        if status == 204:
            break
        assert status == 200
        items = [i["id"] for i in tup["items"]]
        c.submit(tup["tuple_id"], items[0], items[1])
    assert c.progress()["done"] == 3 and c.progress()["remaining"] == 0
    status, body, _ = c.request("GET", "/api/next")
    assert status == 204 and body is None


def test_hostile_texts_come_back_verbatim_and_pages_escape_them(tmp_path):
    # 8 items in windows of 4 (step 3): every hostile item is in some tuple; cap 1.0 lets one
    # annotator see them all.
    project = make_project(tmp_path, n_items=8, n_tuples=4, per_tuple=1, cap=1.0, texts=HOSTILE)
    password = make_accounts(project, ["reader"])["reader"]
    seen = {}
    with ServerProcess(project) as server:
        c = ApiClient(server.url)
        c.login("reader", password)
        c.consent()
        while (tup := c.next()) is not None:
            seen.update({i["id"]: i["text"] for i in tup["items"]})
            status, page, headers = c.request("GET", "/annotate", headers={"Accept": "text/html"})
            assert status == 200
            for item in tup["items"]:
                escaped = (
                    item["text"]
                    .replace("&", "&amp;")
                    .replace("<", "&lt;")
                    .replace(">", "&gt;")
                    .replace('"', "&#34;")
                    .replace("'", "&#39;")
                )
                assert escaped in page
                if item["id"] in ("1", "2", "3"):
                    assert item["text"] not in page  # never raw markup
            csp = headers["Content-Security-Policy"]
            assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "default-src 'none'" in csp
            body = page.split("</head>")[1]
            assert "<script" not in body and " onerror=" not in body.replace("onerror=&#34;", "")
            items = [i["id"] for i in tup["items"]]
            c.submit(tup["tuple_id"], items[0], items[1])
    assert {k: seen[k] for k in HOSTILE} == HOSTILE  # JSON gives every text back exactly


def test_security_headers_and_body_limit(study):
    c = client(study, "bob")
    status, _, headers = c.request("GET", "/api/progress")
    assert headers["X-Content-Type-Options"] == "nosniff" and headers["X-Frame-Options"] == "DENY"
    assert headers["Cache-Control"] == "no-store"
    big = {"tuple_id": 1, "best": "1", "worst": "2", "feedback": "x" * 70_000, "submission_id": "big"}
    assert c.request("POST", "/api/annotations", big)[0] == 413
    assert c.request("POST", "/api/annotations", raw=b"{not json")[0] == 400
    bad = {"tuple_id": 1, "best": "1", "worst": "1", "feedback": "", "submission_id": "same"}
    assert c.request("POST", "/api/annotations", bad)[0] == 422


@pytest.mark.slow
def test_admin_status_and_logout(study):
    boss = client(study, "boss")
    status = boss.admin_status()
    assert status["tuples"] == 10 and status["per_tuple"] == 2 and status["cap_count"] == 3
    names = {a["name"]: a for a in status["annotators"]}
    assert set(names) == {"ann", "bob", "boss", "victim"} and names["boss"]["admin"]
    assert status["consistent"] is True
    assert status["annotations"] == sum(a["done"] for a in status["annotators"])
    boss.logout()
    assert boss.request("GET", "/api/admin/status")[0] == 401


def test_change_password_keeps_this_session_and_ends_the_others(study):
    server, passwords, project = study
    first, second = client(study, "bob"), client(study, "bob")
    new = "a new long password"
    status, body, _ = first.request("POST", "/api/password", {"old_password": "wrong", "new_password": new})
    assert status == 403
    assert first.request("POST", "/api/password", {"old_password": passwords["bob"], "new_password": new})[0] == 200
    assert first.request("GET", "/api/progress")[0] == 200
    assert second.request("GET", "/api/progress")[0] == 401
    assert ApiClient(server.url).request("POST", "/api/login", {"name": "bob", "password": passwords["bob"]})[0] == 401
    ApiClient(server.url).login("bob", new)
    passwords["bob"] = new


def test_repeated_failed_logins_are_throttled(study):
    c = client(study)
    t0 = time.monotonic()
    codes = [c.request("POST", "/api/login", {"name": "victim", "password": f"guess {k}"})[0] for k in range(10)]
    assert codes == [401] * 10
    status, body, _ = c.request("POST", "/api/login", {"name": "victim", "password": study[1]["victim"]})
    assert status == 429 and "too many failed logins" in body["detail"]
    assert time.monotonic() - t0 < 120
    assert json.dumps(body)  # a JSON error, no traceback


def test_form_posts_need_the_csrf_token(study):
    c = client(study, "bob")
    form = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "text/html", "X-CSRF-Token": ""}
    for path, body in (
        ("/consent", b"accept=yes"),
        ("/annotate", b"tuple_id=1&best=1&worst=2&submission_id=f1"),
        ("/skip", b"tuple_id=1"),
        ("/logout", b""),
    ):
        status, page, _ = c.request("POST", path, headers=form, raw=body)
        assert status == 403 and "CSRF" in page, path
        status, _, _ = c.request("POST", path, headers=form, raw=body + f"&csrf_token={c.csrf}x".encode())
        assert status == 403, path
    # The login form carries its own token, tied to a cookie the login page sets.
    status, page, _ = ApiClient(study[0].url).request(
        "POST",
        "/login",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        raw=f"name=bob&password={study[1]['bob']}&login_token=forged".encode(),
    )
    assert status == 403 and "expired" in page


@pytest.mark.slow
def test_abandoned_tuple_goes_to_someone_else_after_the_timeout(tmp_path):
    project = make_project(tmp_path, n_tuples=3, per_tuple=1, cap=1.0)
    passwords = make_accounts(project, ["leaver", "taker"])
    with ServerProcess(project, "--timeout", "1") as server:
        leaver, taker = ApiClient(server.url), ApiClient(server.url)
        leaver.login("leaver", passwords["leaver"])
        taker.login("taker", passwords["taker"])
        held = leaver.next()
        assert taker.next()["tuple_id"] != held["tuple_id"]  # taken while the lease runs
        items = [i["id"] for i in held["items"]]
        taker_first = taker.progress()["open_tuple_id"]
        taker.skip(taker_first)
        time.sleep(1.5)
        again = taker.next()
        while again["tuple_id"] != held["tuple_id"]:  # taker's own order may put another first
            ids = [i["id"] for i in again["items"]]
            taker.submit(again["tuple_id"], ids[0], ids[1])
            again = taker.next()
        assert again["tuple_id"] == held["tuple_id"]  # back in the pool, handed to taker
        status, body, _ = leaver.request(
            "POST",
            "/api/annotations",
            {
                "tuple_id": held["tuple_id"],
                "best": items[0],
                "worst": items[1],
                "feedback": "",
                "submission_id": "too-late",
            },
        )
        assert status == 409 and "went to another annotator" in body["detail"]
