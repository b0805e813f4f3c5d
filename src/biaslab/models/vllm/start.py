"""Starting a vLLM engine quietly, and its failure to start as one line.

:func:`engine_log` points this process's stdout and stderr (the file descriptors, which vLLM's engine core and
worker processes inherit when they are started) at a log file while ``vllm.LLM`` starts: vLLM's own lines, its
progress bars and, when it fails, the root cause that its engine core logs before it exits stay out of the
terminal. Those processes keep writing there while they run. :func:`start_error` reads the root cause from the
log (or from the exception itself, when the engine core runs in this process) and says it in one line with the
option that fixes it, naming the log.
"""

from __future__ import annotations

import math
import os
import re
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from biaslab.errors import BackendError

KEEP_LOGS = 20  # the newest engine logs kept in the log folder
_NUM = r"([\d.]+)"
_CPU_SHARE = re.compile(
    rf"Available memory on node \d+ \({_NUM}/{_NUM} GiB\) on startup is less than desired CPU memory "
    rf"utilization \({_NUM}, {_NUM} GiB\)"
)
_CPU_KV = re.compile(
    rf"Available memory on node \d+ \({_NUM}/{_NUM} GiB\) on kv cache allocation is less than requested "
    rf"memory for kv \({_NUM}(?:/{_NUM})? GiB\)"
)
_GPU_SHARE = re.compile(
    rf"Free memory on device \S+ \({_NUM}/{_NUM} GiB\) on startup is less than desired GPU memory "
    rf"utilization \({_NUM}, {_NUM} GiB\)"
)
_ONE_SEQ = re.compile(
    rf"max seq len \((\d+)\), \({_NUM} GiB KV cache is needed, which is larger than the available KV cache "
    rf"memory \({_NUM} GiB\)\.(?: Based on the available memory, the estimated maximum model length is (\d+)\.)?"
)
_TOO_LONG = re.compile(
    r"User-specified max_model_len \((\d+)\) is greater than the derived max_model_len \((\w+)=(\d+)"
)
_NO_CACHE = re.compile(r"No available memory for the cache blocks")
_OOM = re.compile(r"(?:CUDA )?out of memory[^\n]*", re.IGNORECASE)
_KILLED = re.compile(r"Failed core proc\(s\): \{[^}]*-9\b")
_ERROR_LINE = re.compile(r"(?:^|[\s:])((?:[A-Za-z_][\w.]*)?(?:Error|Exception)): (\S.*)$")
_GENERIC = ("initialization failed", "See root cause above", "See stack trace", "died unexpectedly")


@dataclass
class EngineLog:
    path: Path | None

    def text(self) -> str:
        try:
            return self.path.read_text(encoding="utf-8", errors="replace") if self.path else ""
        except OSError:
            return ""


def log_dir() -> Path:
    from biaslab.data.registry import cache_dir

    return cache_dir() / "vllm-logs"


def _new_log() -> Path | None:
    name = f"engine-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
    for folder in (log_dir(), Path(tempfile.gettempdir()) / "biaslab-vllm-logs"):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            for old in sorted(folder.glob("engine-*.log"), key=lambda p: p.stat().st_mtime)[: -KEEP_LOGS + 1]:
                old.unlink(missing_ok=True)
            path = folder / name
            path.touch()
            return path
        except OSError:
            continue
    return None


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass


def _redirect(path: Path) -> list[int]:
    """Descriptors 1 and 2 onto ``path``; copies of what they were (none when they could not be moved)."""
    saved: list[int] = []
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError:
        return saved
    try:
        saved = [os.dup(1), os.dup(2)]
        _flush()
        os.dup2(fd, 1)
        os.dup2(fd, 2)
    except OSError:
        _restore(saved)
        saved = []
    finally:
        os.close(fd)
    return saved


def _restore(saved: list[int]) -> None:
    _flush()
    for target, copy in enumerate(saved, start=1):
        os.dup2(copy, target)
        os.close(copy)


@contextmanager
def engine_log(path: Path | None = None) -> Iterator[EngineLog]:
    """File descriptors 1 and 2 of this process on a new log file (``path``, else one in :func:`log_dir`) while
    the block runs; as they were where they cannot be moved."""
    log = EngineLog(path or _new_log())
    saved = _redirect(log.path) if log.path is not None else []
    try:
        yield log
    finally:
        _restore(saved)


def _chain(exc: BaseException) -> str:
    seen: list[str] = []
    node: BaseException | None = exc
    while node is not None and len(seen) < 10:
        seen.append(f"{type(node).__name__}: {node}")
        node = node.__cause__ or node.__context__
    return "\n".join(seen)


def root_cause(text: str) -> str | None:
    """The first error line of ``text`` that is not one of vLLM's "see above" lines."""
    for line in text.splitlines():
        match = _ERROR_LINE.search(line.strip())
        if match and not any(g in match.group(2) for g in _GENERIC):
            return f"{match.group(1).rpartition('.')[2]}: {match.group(2).strip()}"
    return None


def _floor2(x: float) -> float:
    return max(0.01, math.floor(x * 100) / 100)


def _explain(text: str, cpu: bool) -> str | None:
    """What failed and what fixes it, when vLLM said something biaslab knows."""
    kv_fix = "set VLLM_CPU_KVCACHE_SPACE=<GiB> larger" if cpu else "give a larger -P gpu_memory_utilization"
    if m := _TOO_LONG.search(text):
        want, key, most = m.groups()
        return (
            f"-P max_model_len={want} is longer than the model's context ({key}={most}); "
            f"give -P max_model_len={most} or less"
        )
    if m := _CPU_SHARE.search(text):
        free, total, share, want = (float(x) for x in m.groups())
        return (
            f"vLLM could not reserve {want:g} GiB (gpu_memory_utilization={share:g} of the machine's memory): "
            f"{free:g} GiB of {total:g} GiB are free; give -P gpu_memory_utilization={_floor2(0.8 * free / total)}, "
            "or leave it out for biaslab to size the KV cache"
        )
    if m := _CPU_KV.search(text):
        free, total, want = (float(x) for x in m.groups()[:3])
        return (
            f"vLLM could not reserve {want:g} GiB of KV cache: {free:g} GiB of {total:g} GiB are free; "
            f"set VLLM_CPU_KVCACHE_SPACE={max(1, int(free / 4))}, or unset it for biaslab to size the KV cache"
        )
    if m := _GPU_SHARE.search(text):
        free, total, share, want = (float(x) for x in m.groups())
        return (
            f"vLLM could not reserve {want:g} GiB of the GPU (gpu_memory_utilization={share:g}): {free:g} GiB of "
            f"{total:g} GiB are free; give -P gpu_memory_utilization={_floor2((free - 1) / total)}"
        )
    if m := _ONE_SEQ.search(text):
        length, need, have, fits = m.groups()
        advice = f"give -P max_model_len={fits}" if fits and int(fits) > 0 else "give a smaller -P max_model_len"
        return (
            f"vLLM's KV cache ({float(have):g} GiB) cannot hold one sequence of {length} tokens ({float(need):g} "
            f"GiB); {advice}, or {kv_fix}"
        )
    if _NO_CACHE.search(text):
        return f"the model's weights leave vLLM no memory for the KV cache; {kv_fix}"
    if m := _OOM.search(text):
        return f"vLLM ran out of memory while starting ({m.group(0).strip()[:160]}); give a smaller -P max_model_len"
    if _KILLED.search(text):
        return "a vLLM process was killed while starting (signal 9: out of memory?); give a smaller -P max_model_len"
    return None


def start_error(exc: BaseException, log: EngineLog, *, model: str, cpu: bool) -> BackendError:
    """The one-line error of an engine that did not start: the cause and its fix, with the log's path."""
    text = f"{log.text()}\n{_chain(exc)}"
    where = f" (vLLM's log: {log.path})" if log.path else ""
    said = _explain(text, cpu)
    if said is None:
        cause = root_cause(text) or f"{type(exc).__name__}: {str(exc).strip() or '(no message)'}"
        said = cause.splitlines()[0][:300]
    return BackendError(f"vllm/{model} did not start: {said}{where}")
