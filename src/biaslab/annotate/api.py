"""The JSON API (used by the pages' scripts and by annotators' own scripts).

    POST /api/login          {"name", "password"} (application/json) -> session + device cookies, {"csrf_token", ...}
    GET  /api/next           -> {"tuple_id", "items": [{"id", "text"}, ...]} or 204
    POST /api/annotations    {"tuple_id", "best", "worst", "feedback", "submission_id"} -> 200 after COMMIT
    POST /api/skip           {"tuple_id"}
    POST /api/skip/undo      take back the last skip (before anything else was submitted)
    POST /api/consent        record that the content warning was accepted
    GET  /api/progress       the caller's own counts
    POST /api/password       {"old_password", "new_password"}
    POST /api/logout
    GET  /api/admin/status   admins only
    GET  /api/health         no login needed

Every POST after login sends the session's CSRF token in the ``X-CSRF-Token`` header.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from biaslab.annotate import auth
from biaslab.annotate.assignment import Refused, next_tuple, progress, submit
from biaslab.annotate.parsing import parse_submission, parse_tuple_id
from biaslab.annotate.skips import skip, undo_skip
from biaslab.annotate.status import cached_status
from biaslab.annotate.throttle import DEVICE_COOKIE, login_keys
from biaslab.annotate.web import (
    check_origin,
    clear_session_cookie,
    client_address,
    read_json,
    require_admin,
    require_session,
    set_device_cookie,
    set_session_cookie,
    state,
)

router = APIRouter(prefix="/api")


def _login_fields(body) -> tuple[str, str]:
    if not isinstance(body, dict) or not isinstance(body.get("name"), str) or not isinstance(body.get("password"), str):
        raise Refused(422, 'send {"name": ..., "password": ...} as JSON strings')
    if len(body["password"]) > auth.MAX_PASSWORD or len(body["name"]) > 64:
        raise Refused(401, "wrong name or password")
    return body["name"], body["password"]


def _too_many(refusal, what: str) -> Refused:
    return Refused(429, f"too many {what}; wait {max(int(refusal.wait + 0.999), 1)} seconds and try again")


async def do_login(request: Request, name: str, password: str):
    """Shared by the API and the login page: (session token, session, device cookie), or Refused(401/429).

    The guess is counted before the password is checked (see :mod:`.throttle`)."""
    st = state(request)
    device = st.devices.device_for(request.cookies.get(DEVICE_COOKIE), name)
    keys = login_keys(name, client_address(request), device)
    refusal = st.throttle.reserve(keys)
    if refusal is not None:
        raise _too_many(refusal, f"failed logins for {name!r}")
    result = None
    try:
        result = await run_in_threadpool(auth.login, st.db, name, password, request.cookies.get(auth.SESSION_COOKIE))
    finally:
        st.throttle.settle(keys, result is not None)
    if result is None:
        raise Refused(401, "wrong name or password")
    return (*result, st.devices.issue(name))


@router.post("/login")
async def api_login(request: Request):
    check_origin(request)
    name, password = _login_fields(await read_json(request, require_type=True))
    token, session, device = await do_login(request, name, password)
    response = JSONResponse(
        {"csrf_token": session.csrf, "name": session.name, "is_admin": session.is_admin, "consented": session.consented}
    )
    set_session_cookie(response, token, state(request).secure_cookies)
    set_device_cookie(response, device, state(request).secure_cookies)
    return response


async def change_password(request: Request, session, old: str, new: str) -> bool:
    """Check the old password (a guess, throttled like a login) and set the new one."""
    st = state(request)
    keys = [f"password:{session.annotator_id}"]
    refusal = st.throttle.reserve(keys)
    if refusal is not None:
        raise _too_many(refusal, "wrong current passwords")
    ok = False
    try:
        ok = await run_in_threadpool(auth.change_password, st.db, session, old, new)
    finally:
        st.throttle.settle(keys, ok)
    return ok


@router.post("/logout")
async def api_logout(request: Request):
    session = require_session(request, post=True)
    await run_in_threadpool(auth.logout, state(request).db, session)
    response = JSONResponse({"ok": True})
    clear_session_cookie(response, state(request).secure_cookies)
    return response


@router.get("/next")
async def api_next(request: Request):
    session = require_session(request)
    st = state(request)
    payload = await run_in_threadpool(next_tuple, st.db, st.settings, session.annotator_id, lease=st.lease)
    if payload is None:
        return Response(status_code=204)
    return payload


@router.post("/annotations")
async def api_annotations(request: Request):
    session = require_session(request, post=True)
    sub = parse_submission(await read_json(request))
    st = state(request)
    return await run_in_threadpool(submit, st.db, st.settings, session.annotator_id, sub)


@router.post("/skip")
async def api_skip(request: Request):
    session = require_session(request, post=True)
    body = await read_json(request)
    tuple_id = parse_tuple_id(body.get("tuple_id") if isinstance(body, dict) else None)
    return await run_in_threadpool(skip, state(request).db, session.annotator_id, tuple_id)


@router.post("/skip/undo")
async def api_undo_skip(request: Request):
    session = require_session(request, post=True)
    st = state(request)
    return await run_in_threadpool(undo_skip, st.db, st.settings, session.annotator_id, lease=st.lease)


@router.post("/consent")
async def api_consent(request: Request):
    session = require_session(request, post=True)
    await run_in_threadpool(auth.record_consent, state(request).db, session)
    return {"ok": True, "consented": True}


@router.get("/progress")
async def api_progress(request: Request):
    session = require_session(request)
    st = state(request)
    answer = await run_in_threadpool(progress, st.db, st.settings, session.annotator_id)
    return {"name": session.name, "consented": session.consented, "construct": st.settings.construct, **answer}


@router.post("/password")
async def api_password(request: Request):
    session = require_session(request, post=True)
    body = await read_json(request)
    old, new = (body.get("old_password"), body.get("new_password")) if isinstance(body, dict) else (None, None)
    if not isinstance(old, str) or not isinstance(new, str):
        raise Refused(422, 'send {"old_password": ..., "new_password": ...}')
    if not auth.MIN_PASSWORD <= len(new) <= auth.MAX_PASSWORD:
        raise Refused(422, f"the new password needs {auth.MIN_PASSWORD} to {auth.MAX_PASSWORD} characters")
    if not await change_password(request, session, old, new):
        raise Refused(403, "the old password is wrong")
    return {"ok": True}


@router.get("/admin/status")
async def api_admin_status(request: Request):
    require_admin(request)
    st = state(request)
    return await run_in_threadpool(cached_status, st)


@router.get("/health")
async def api_health():
    return {"ok": True}
