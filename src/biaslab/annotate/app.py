"""The FastAPI application and ``serve`` (uvicorn, one process, one writer lock)."""

from __future__ import annotations

import ipaddress
import os
import secrets
import socket
import sqlite3
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from biaslab.annotate.assignment import Refused
from biaslab.annotate.auth import IDLE_SECONDS
from biaslab.annotate.db import Database, db_path, try_lock
from biaslab.annotate.middleware import SecurityHeaders
from biaslab.annotate.project import Settings
from biaslab.annotate.render import templates
from biaslab.annotate.throttle import DeviceCookies
from biaslab.annotate.web import ServerState, busy_response, refused_response
from biaslab.errors import ConfigError, DataError

DEFAULT_LEASE = 30 * 60


def _device_secret(db: Database) -> bytes:
    """The key that signs device cookies: made once per project and kept in it (survives restarts)."""

    def tx(conn):
        conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('device_secret', ?)", (secrets.token_hex(32),))
        return conn.execute("SELECT value FROM meta WHERE key = 'device_secret'").fetchone()[0]

    return bytes.fromhex(db.transact(tx))


def create_app(
    project_dir: Path,
    *,
    lease: float = DEFAULT_LEASE,
    secure_cookies: bool = False,
    idle: float = IDLE_SECONDS,
    allowed_hosts: list[str] | None = None,
) -> FastAPI:
    """The application. ``allowed_hosts``: the ``host:port`` names the server answers for (Host
    header and POST Origin); None accepts any Host header (for tests that mount the app directly)."""
    db = Database(project_dir)
    check = db.integrity_check()
    if check != "ok":
        raise DataError(f"{db.path}: the database fails its integrity check ({check}); restore it from a backup")
    env = templates()
    hosts = frozenset(h.lower() for h in allowed_hosts) if allowed_hosts is not None else None

    @asynccontextmanager
    async def lifespan(_app):
        yield
        db.close()

    app = FastAPI(title="biaslab annotate", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    app.state.server = ServerState(
        db=db,
        settings=Settings.load(db),
        templates=env,
        lease=lease,
        secure_cookies=secure_cookies,
        idle=idle,
        allowed_hosts=hosts,
        devices=DeviceCookies(_device_secret(db)),
    )

    from biaslab.annotate.api import router as api_router
    from biaslab.annotate.pages import router as page_router

    app.include_router(api_router)
    app.include_router(page_router)
    app.mount("/static", StaticFiles(directory=str(resources.files(__package__).joinpath("static"))), name="static")
    app.add_middleware(SecurityHeaders, allowed_hosts=hosts)

    def html_error(request: Request, status: int, detail: str):
        from biaslab.annotate.pages import page, redirect

        if status == 401:
            return redirect("/login")
        return page(request, "message.html.j2", status=status, title="Request refused", message=detail)

    @app.exception_handler(Refused)
    async def on_refused(request: Request, exc: Refused):
        if request.url.path.startswith("/api/"):
            return refused_response(exc)
        return html_error(request, exc.status, exc.detail)

    @app.exception_handler(sqlite3.Error)
    async def on_busy(request: Request, exc: sqlite3.Error):
        return busy_response(exc)

    @app.exception_handler(StarletteHTTPException)
    async def on_http(request: Request, exc: StarletteHTTPException):
        if request.url.path.startswith("/api/"):
            return JSONResponse({"detail": exc.detail}, status_code=exc.status_code)
        return html_error(request, exc.status_code, str(exc.detail))

    @app.exception_handler(RequestValidationError)
    async def on_invalid(request: Request, exc: RequestValidationError):
        return JSONResponse({"detail": "invalid request"}, status_code=422)

    return app


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _lock(project_dir: Path):
    """One server per project, and no settings change while it serves (:func:`try_lock`)."""
    fh = try_lock(project_dir)
    if fh is None:
        raise ConfigError(
            f"another `biaslab annotate serve` is already serving {project_dir} (or `init` is changing its "
            "settings this moment); stop it first"
        )
    fh.seek(0)
    fh.truncate()
    fh.write(str(os.getpid()))
    fh.flush()
    return fh


def default_hosts(host: str, port: int) -> list[str]:
    """The names a server bound to ``host`` answers for when no ``--allowed-host`` is given."""
    if host in ("0.0.0.0", "::", ""):
        raise ConfigError(
            f"--host {host or '(all)'} listens on every address: name the address annotators use with "
            "--allowed-host NAME[:PORT] (repeatable)"
        )
    names = {host}
    if _is_loopback(host):
        names |= {"127.0.0.1", "localhost", "[::1]"}
    return _normalise_hosts(
        sorted(f"[{h}]:{port}" if ":" in h and not h.startswith("[") else f"{h}:{port}" for h in names), port
    )


def _normalise_hosts(given: list[str], port: int) -> list[str]:
    """``NAME``, ``NAME:PORT``, ``[V6]``, ``[V6]:PORT`` or a bare IPv6 address -> the Host header values
    to accept."""
    out = []
    for name in given:
        name = name.strip().lower()
        if not name or any(ch in name for ch in "/@ ?#"):
            raise ConfigError(f"--allowed-host {name!r}: give a host name or address, optionally with :PORT")
        if name.startswith("["):
            has_port = "]:" in name
        elif name.count(":") > 1:
            name, has_port = f"[{name}]", False
        else:
            has_port = ":" in name
        if has_port and not name.rsplit(":", 1)[1].isdigit():
            raise ConfigError(f"--allowed-host {name!r}: the port after ':' must be a number")
        # Without a port: as a browser sends it behind a proxy on 80/443 (no port), and with ours.
        out += [name] if has_port else [name, f"{name}:{port}"]
    return out


def serve(
    project_dir: Path,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    lease: float = DEFAULT_LEASE,
    secure_cookies: bool = False,
    idle: float = IDLE_SECONDS,
    allowed_hosts: list[str] | None = None,
    echo=print,
) -> None:
    import uvicorn

    from biaslab.annotate.protocol import KEEP_ALIVE_TIMEOUT, MAX_HEADER_BYTES, GuardedH11Protocol

    if lease <= 0:
        raise ConfigError(f"--timeout {lease}: give the seconds after which an unanswered tuple goes back (> 0)")
    if idle <= 0:
        raise ConfigError(f"--idle-timeout {idle}: give the seconds of inactivity after which a session ends (> 0)")
    if not 0 < port < 65536:
        raise ConfigError(f"--port {port}: a TCP port in 1..65535")
    hosts = _normalise_hosts(allowed_hosts, port) if allowed_hosts else default_hosts(host, port)
    # The lock before the settings are read, so that none can change between reading and serving
    # (no lock where there is no project: create_app says so).
    lock = _lock(project_dir) if db_path(project_dir).is_file() else None
    try:
        app = create_app(project_dir, lease=lease, secure_cookies=secure_cookies, idle=idle, allowed_hosts=hosts)
        sock = _listen(host, port)
        if not _is_loopback(host) and not secure_cookies:
            echo(f"warning: serving on {host} over plain HTTP; put it behind an HTTPS proxy and add --secure-cookies")
        shown = f"[{host}]" if ":" in host else host
        echo(f"serving {project_dir} at http://{shown}:{port}/  (Ctrl+C to stop; answering for {', '.join(hosts)})")
        config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            server_header=False,
            timeout_graceful_shutdown=5,
            http=GuardedH11Protocol,
            timeout_keep_alive=KEEP_ALIVE_TIMEOUT,
            h11_max_incomplete_event_size=MAX_HEADER_BYTES,
            limit_concurrency=1000,
        )
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        if lock is not None:
            lock.close()


def _listen(host: str, port: int) -> socket.socket:
    """Bind the listening socket here, so a busy port is a one-line error before serving starts."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ConfigError(f"--host {host}: not an address this machine can listen on ({exc.strerror})") from None
    family, _, _, _, address = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit TCP_NODELAY: without it a response written in two pieces
    # (headers, body) waits ~40 ms for the client's delayed ACK (Nagle's algorithm).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port} ({exc.strerror}); choose another --port") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock
