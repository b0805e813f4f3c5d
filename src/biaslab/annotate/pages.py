"""Server-rendered pages: login, consent, instructions, annotate, break, admin, password.

Forms post back with the session's CSRF token in a hidden field (the login form, before any
session exists, uses a random cookie echoed in the form). Pages work without JavaScript; the one
static script adds keyboard shortcuts and checks.
"""

from __future__ import annotations

import hmac
import secrets
import uuid

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.concurrency import run_in_threadpool

from biaslab.annotate import auth
from biaslab.annotate.api import change_password, do_login
from biaslab.annotate.assignment import Refused, next_tuple, progress, submit
from biaslab.annotate.parsing import parse_submission, parse_tuple_id
from biaslab.annotate.render import markdown
from biaslab.annotate.skips import skip, undo_skip
from biaslab.annotate.status import cached_status
from biaslab.annotate.web import (
    check_origin,
    clear_session_cookie,
    current_session,
    read_form,
    require_session,
    set_device_cookie,
    set_session_cookie,
    state,
)

router = APIRouter()
LOGIN_COOKIE = "biaslab_login"


def page(request: Request, template: str, status: int = 200, **context) -> HTMLResponse:
    st = state(request)
    html = st.templates.get_template(template).render(
        session=current_session(request), construct=st.settings.construct, **context
    )
    return HTMLResponse(html, status_code=status)


def redirect(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


def _gate(request: Request, *, consent: bool = True):
    """The session, or a redirect to where the annotator must go first."""
    session = current_session(request)
    if session is None:
        return None, redirect("/login")
    if consent and not session.consented:
        return session, redirect("/consent")
    return session, None


@router.get("/")
async def home(request: Request):
    session = current_session(request)
    if session is None:
        return redirect("/login")
    return redirect("/admin" if session.is_admin else "/annotate")


@router.get("/favicon.ico")
async def favicon():
    return Response(status_code=204)


# The login page shows only these fixed messages, chosen by a code in the URL (?error=CODE);
# an unknown code shows nothing, so no text from a link can appear on the page.
LOGIN_MESSAGES = {
    "expired": "The login form expired; please try again.",
    "session": "Your session ended; please log in again.",
    "logout": "You are logged out.",
}


def login_form(request: Request, message: str | None = None, status: int = 200) -> HTMLResponse:
    token = secrets.token_urlsafe(24)
    response = page(request, "login.html.j2", status=status, login_token=token, error=message)
    response.set_cookie(
        LOGIN_COOKIE,
        token,
        max_age=3600,
        path="/login",
        httponly=True,
        samesite="strict",
        secure=state(request).secure_cookies,
    )
    return response


@router.get("/login")
async def login_page(request: Request):
    code = request.query_params.get("error", "")
    return login_form(request, LOGIN_MESSAGES.get(code) if isinstance(code, str) else None)


@router.post("/login")
async def login_post(request: Request):
    form = await read_form(request)
    check_origin(request)
    cookie = request.cookies.get(LOGIN_COOKIE, "")
    if not cookie or not hmac.compare_digest(cookie.encode(), form.get("login_token", "").encode()):
        return login_form(request, LOGIN_MESSAGES["expired"], 403)
    try:
        token, session, device = await do_login(
            request, form.get("name", "")[:64], form.get("password", "")[: auth.MAX_PASSWORD]
        )
    except Refused as exc:
        return login_form(request, exc.detail[0].upper() + exc.detail[1:] + ".", exc.status)
    target = "/admin" if session.is_admin else ("/annotate" if session.consented else "/consent")
    response = redirect(target)
    set_session_cookie(response, token, state(request).secure_cookies)
    set_device_cookie(response, device, state(request).secure_cookies)
    response.delete_cookie(LOGIN_COOKIE, path="/login")
    return response


@router.post("/logout")
async def logout_post(request: Request):
    form = await read_form(request)
    session = require_session(request, csrf=form.get("csrf_token", ""), post=True)
    await run_in_threadpool(auth.logout, state(request).db, session)
    response = redirect("/login")
    clear_session_cookie(response, state(request).secure_cookies)
    return response


@router.get("/consent")
async def consent_page(request: Request):
    session, go = _gate(request, consent=False)
    return go if session is None else page(request, "consent.html.j2", cap=state(request).settings.cap_count)


@router.post("/consent")
async def consent_post(request: Request):
    form = await read_form(request)
    session = require_session(request, csrf=form.get("csrf_token", ""), post=True)
    if form.get("accept") != "yes":
        return page(
            request,
            "consent.html.j2",
            status=422,
            cap=state(request).settings.cap_count,
            error="Tick the box to confirm before you continue.",
        )
    await run_in_threadpool(auth.record_consent, state(request).db, session)
    return redirect("/instructions")


@router.get("/instructions")
async def instructions_page(request: Request):
    session, go = _gate(request)
    return go or page(request, "instructions.html.j2", instructions=markdown(state(request).settings.instructions))


async def _annotate(request: Request, session, error: str | None = None, status: int = 200):
    st = state(request)
    tup = await run_in_threadpool(next_tuple, st.db, st.settings, session.annotator_id, lease=st.lease)
    mine = await run_in_threadpool(progress, st.db, st.settings, session.annotator_id)
    if tup is None:
        return page(request, "finished.html.j2", progress=mine)
    return page(
        request,
        "annotate.html.j2",
        status=status,
        tuple=tup,
        progress=mine,
        error=error,
        submission_id=uuid.uuid4().hex,
        break_every=st.settings.break_every,
    )


@router.get("/annotate")
async def annotate_page(request: Request):
    session, go = _gate(request)
    return go or await _annotate(request, session)


@router.post("/annotate")
async def annotate_post(request: Request):
    form = await read_form(request)
    session = require_session(request, csrf=form.get("csrf_token", ""), post=True)
    if not form.get("best") or not form.get("worst"):
        return await _annotate(
            request,
            session,
            f"Choose both the statement with the most and the one with the least {state(request).settings.construct}.",
            422,
        )
    st = state(request)
    try:
        sub = parse_submission({k: form.get(k) for k in ("tuple_id", "best", "worst", "feedback", "submission_id")})
        answer = await run_in_threadpool(submit, st.db, st.settings, session.annotator_id, sub)
    except Refused as exc:
        return await _annotate(request, session, exc.detail[0].upper() + exc.detail[1:] + ".", exc.status)
    return redirect("/break" if answer["take_break"] else "/annotate")


@router.post("/skip")
async def skip_post(request: Request):
    form = await read_form(request)
    session = require_session(request, csrf=form.get("csrf_token", ""), post=True)
    await run_in_threadpool(skip, state(request).db, session.annotator_id, parse_tuple_id(form.get("tuple_id")))
    return redirect("/annotate")


@router.post("/skip/undo")
async def undo_skip_post(request: Request):
    form = await read_form(request)
    session = require_session(request, csrf=form.get("csrf_token", ""), post=True)
    st = state(request)
    try:
        await run_in_threadpool(undo_skip, st.db, st.settings, session.annotator_id, lease=st.lease)
    except Refused as exc:
        return await _annotate(request, session, exc.detail[0].upper() + exc.detail[1:] + ".", exc.status)
    return redirect("/annotate")


@router.get("/break")
async def break_page(request: Request):
    session, go = _gate(request)
    if go:
        return go
    st = state(request)
    return page(
        request, "break.html.j2", progress=await run_in_threadpool(progress, st.db, st.settings, session.annotator_id)
    )


@router.get("/admin")
async def admin_page(request: Request):
    session, go = _gate(request, consent=False)
    if go:
        return go
    if not session.is_admin:
        return page(
            request,
            "message.html.j2",
            status=403,
            title="Admins only",
            message="This page is for the study's administrators.",
        )
    return page(request, "admin.html.j2", status_data=await run_in_threadpool(cached_status, state(request)))


@router.get("/password")
async def password_page(request: Request):
    session, go = _gate(request, consent=False)
    return go or page(request, "password.html.j2")


@router.post("/password")
async def password_post(request: Request):
    form = await read_form(request)
    session = require_session(request, csrf=form.get("csrf_token", ""), post=True)
    new = form.get("new_password", "")
    if new != form.get("repeat_password", ""):
        return page(request, "password.html.j2", status=422, error="The two new passwords differ.")
    if not auth.MIN_PASSWORD <= len(new) <= auth.MAX_PASSWORD:
        return page(
            request,
            "password.html.j2",
            status=422,
            error=f"The new password needs {auth.MIN_PASSWORD} to {auth.MAX_PASSWORD} characters.",
        )
    try:
        changed = await change_password(request, session, form.get("old_password", ""), new)
    except Refused as exc:
        return page(request, "password.html.j2", status=exc.status, error=exc.detail[0].upper() + exc.detail[1:] + ".")
    if not changed:
        return page(request, "password.html.j2", status=403, error="The current password is wrong.")
    return page(request, "password.html.j2", done=True)
