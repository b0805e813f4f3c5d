"""What an HTTP 404, 405 or 501 from a batch endpoint means, whichever provider answered it.

The hosted-API backends' retriers (:class:`biaslab.models.openai.retry.Retrier` and its Anthropic
subclass) ask :func:`batch_status_error` first for every call whose endpoint name starts with
``batch``; the names are the batch providers':

=================== ==================================================================
``batches``         creating a batch: without it the server has no batch API
``batch-files``     uploading a batch's input (OpenAI): the same
``batches-list``    listing batches: :class:`NoBatchListing` (an interrupted submission cannot be
                    looked up, the runner says so and goes on)
``batch``           one batch the journal holds, looked at or cancelled: a 404 is
                    :class:`StaleBatch` (the record is stale, not the server lacking an API)
``batch-output``    a finished batch's results (deleted after some weeks: its lines are missing)
=================== ==================================================================
"""

from __future__ import annotations

import shlex
import time
from pathlib import Path

from biaslab.errors import BackendError
from biaslab.models.batch.journal import BatchRecord

NO_API_STATUS = (404, 405, 501)


class NoBatchListing(BackendError):
    """The server cannot list batches (an interrupted submission cannot be looked up there)."""


class StaleBatch(BackendError):
    """The provider answers 404 for a batch the journal holds: deleted, or made with another key or project.

    Raised with the server's words only; the runner and ``biaslab batches`` name the record and the way out."""


def batch_status_error(base_url: str, api: str, status: int, message: str, endpoint: str) -> Exception | None:
    """The error for HTTP ``status`` from batch ``endpoint`` (see the module), or None for the usual one."""
    if status not in NO_API_STATUS:
        return None
    if endpoint == "batches-list":
        return NoBatchListing(f"HTTP {status} listing the batches at {base_url}")
    if endpoint == "batch" and status == 404:
        return StaleBatch(f"HTTP 404: {message}")
    if endpoint == "batch-output":
        return BackendError(f"HTTP {status} reading a batch's results from {base_url} ({message})")
    return BackendError(
        f"{base_url} has no {api} (HTTP {status} on its files or batches endpoint: {message}); "
        "run without -P batch=true"
    )


def stale_record_error(record: BatchRecord, detail: str, journal_dir: Path) -> StaleBatch:
    """The one line for a journal record whose batch the provider does not know: which record, and the way out
    (``biaslab batches forget``; the answers already cached stay, the next run submits the rest anew)."""
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(record.created))
    by = f" by {record.run!r}" if record.run else ""
    where = "" if _is_default_journal(journal_dir) else f" --cache-dir {shlex.quote(str(journal_dir.parent))}"
    return StaleBatch(
        f"batch {record.label} in the batch journal (record {record.token[:12]}, submitted {when}{by}, "
        f"{len(record.ids)} requests) is unknown to {record.base_url} ({detail}): deleted, or made with another "
        f"API key or project; `biaslab batches forget {record.label}{where}` drops the record (the answers "
        "already cached are kept, and the next run submits the other requests again)"
    )


def _is_default_journal(journal_dir: Path) -> bool:
    from biaslab.models.cache import default_cache_path

    try:
        return Path(journal_dir).resolve() == (default_cache_path().parent / "batches").resolve()
    except OSError:
        return False
