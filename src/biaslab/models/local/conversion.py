"""GGUF files converted once: float32 weights (safetensors) and the tokenizer's own files, in the user cache.

transformers reads a GGUF file by dequantising every tensor and converting its tokenizer, which
takes 20-40 s for the embedded 135M model on 2 cores; a plain checkpoint directory loads in about
a second. So the first load of a GGUF file converts it and keeps the result, and every later
process loads the checkpoint:

    <store>/converted/<sha256 of the GGUF, 16 hex>-c<converter version>-tf<transformers version>/
        model.safetensors  config.json  generation_config.json  tokenizer.json  tokenizer_config.json ...
        biaslab-conversion.json   what it is: the source file, its sha256 and size, the versions,
                                  each file's size and sha256

``<store>`` is the model store (:mod:`biaslab.models.store`: ``BIASLAB_MODELS_DIR``, default the user cache), kept
apart from response caches, so a fresh ``--cache-dir`` or ``BIASLAB_CACHE_DIR`` never converts again.
An entry is written to a temporary directory beside it and renamed into place, so it exists
complete or not at all; it is verified when read (every file's size and sha256, hashed in a
background thread while torch imports) and rebuilt when it fails. A file hashed intact once is hashed again only
when its size, inode, modification or status-change time differs from then (``.biaslab-verified.json`` in the
entry): loading a 1 GB model costs a second of CPU per process otherwise. The transformers version is
part of the key because the conversion is transformers' own: a new version converts again.

Nothing changes for the model's identity (the GGUF file's sha256, :mod:`.identity`) or its numbers:
the weights are the dequantised float32 tensors byte for byte, so logits are bit-identical to a
direct GGUF load (checked in the tests). The sha256 of a source file is itself remembered by path,
size and modification time (``sha256-memo.json``), so a large file is hashed once, not per process.
"""

from __future__ import annotations

import hashlib
import json
import logging
import mmap
import os
import shutil
import threading
import time
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from biaslab.errors import ConfigError
from biaslab.models.store import models_dir

log = logging.getLogger(__name__)

CONVERTER_VERSION = 1  # bump when what is written changes
MANIFEST = "biaslab-conversion.json"
WEIGHTS = "model.safetensors"
_MEMO_FILE = "sha256-memo.json"
VERIFIED = ".biaslab-verified.json"  # in an entry: the files as they were when last hashed intact
SETTLED_S = 2.0  # seconds after its last change before a file's verification is remembered
_memo_lock = threading.Lock()


def conversions_dir() -> Path:
    return models_dir() / "converted"


def _hash_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        try:
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                # one call, which releases the GIL for the whole file: hashing overlaps imports and loading in
                # other threads even while one holds the GIL for seconds (a loop would wait at every chunk)
                h.update(mapped)
                return h.hexdigest()
        except (ValueError, OSError):  # an empty file (cannot be mapped), or no mmap here
            pass
        while chunk := fh.read(8 << 20):
            h.update(chunk)
    return h.hexdigest()


# --- the sha256 of source files, remembered by path, size and mtime ------------------------------
def source_sha256(path: Path) -> str:
    """sha256 of ``path``; remembered in the cache by (resolved path, size, mtime), hashed only when new."""
    path = Path(path).resolve()
    st = path.stat()
    key = str(path)
    memo_file = models_dir() / _MEMO_FILE
    with _memo_lock:
        memo = _read_json(memo_file) or {}
        hit = memo.get(key)
        if isinstance(hit, dict) and hit.get("size") == st.st_size and hit.get("mtime_ns") == st.st_mtime_ns:
            return str(hit["sha256"])
        digest = _hash_file(path)
        memo = {k: v for k, v in memo.items() if Path(k).exists()}  # forget files that are gone
        memo[key] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": digest}
        try:
            _write_json(memo_file, memo)
        except OSError as exc:  # a read-only cache: hash again next time
            log.debug("could not remember the sha256 of %s: %s", path, exc)
        return digest


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _write_json(path: Path, obj: Any) -> None:
    from biaslab.io import atomic_write_text

    atomic_write_text(path, json.dumps(obj, indent=1, sort_keys=True) + "\n")


# --- entries ------------------------------------------------------------------------------------
def transformers_version() -> str:
    try:
        return version("transformers")
    except PackageNotFoundError:  # pragma: no cover - the local extra is not installed
        raise ConfigError("local models need transformers; install it with: pip install 'biaslab[local]'") from None


def entry_dir(sha256: str, tf_version: str | None = None) -> Path:
    tf = tf_version or transformers_version()
    return conversions_dir() / f"{sha256[:16]}-c{CONVERTER_VERSION}-tf{tf}"


@dataclass
class Entry:
    """A conversion in the cache, as ``biaslab cache`` lists it."""

    path: Path
    manifest: dict[str, Any] | None  # None: unreadable (a broken or foreign directory)
    size: int

    @property
    def name(self) -> str:
        return self.path.name

    def describe(self) -> str:
        m = self.manifest
        if not m:
            return "unreadable conversion (no valid manifest): clear it"
        return (
            f"{m.get('source_name', '?')} ({m.get('model_type', '?')}) converted to float32 safetensors by "
            f"transformers {m.get('transformers', '?')}, sha256 {str(m.get('source_sha256', '?'))[:12]}"
        )


def list_entries() -> list[Entry]:
    root = conversions_dir()
    if not root.is_dir():
        return []
    out = []
    for d in sorted(root.iterdir()):
        if d.is_dir():
            size = sum(p.stat().st_size for p in d.rglob("*") if p.is_file())
            out.append(Entry(d, _read_json(d / MANIFEST), size))
    return out


class Verification:
    """Checks an entry's files against its manifest, in a background thread (start early, join late)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.problem: str | None = None
        self._thread = threading.Thread(target=self._run, name="biaslab-verify", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self.problem = verify(self.directory)
        except Exception as exc:  # pragma: no cover - reported as a failed check
            self.problem = f"{type(exc).__name__}: {exc}"

    def result(self) -> str | None:
        """None if the entry is complete and intact, else what is wrong."""
        self._thread.join()
        return self.problem


def verify(directory: Path, *, every_byte: bool = False) -> str | None:
    """None if every file of the entry at ``directory`` has its recorded size and sha256; else what is wrong.
    ``every_byte``: also hash the files unchanged since last hashed intact (``biaslab cache --verify``)."""
    manifest = _read_json(directory / MANIFEST)
    if not isinstance(manifest, dict) or manifest.get("converter") != CONVERTER_VERSION:
        return "no valid manifest"
    files = manifest.get("files") or {}
    if WEIGHTS not in files or "config.json" not in files:
        return "manifest lists no weights"
    for name, want in files.items():
        p = directory / name
        try:
            if p.stat().st_size != want["size"]:
                return f"{name} has the wrong size"
        except OSError:
            return f"{name} is missing"
    seen = {} if every_byte else _read_json(directory / VERIFIED) or {}
    stats = {name: _stat_key(directory / name) for name in files}
    for name, want in files.items():
        if seen.get(name) == stats[name]:  # hashed before, and not written, replaced or touched since
            continue
        if _hash_file(directory / name) != want["sha256"]:
            return f"{name} is corrupt (sha256 differs)"
    # a file changed in the last seconds could change again within the same tick of the file system's clock,
    # unseen: remembered only once its times are older than that (hashed again until then)
    settled = time.time_ns() - int(SETTLED_S * 1e9)
    stats = {name: st for name, st in stats.items() if st[3] < settled}
    if stats and seen != stats:
        try:
            _write_json(directory / VERIFIED, stats)
        except OSError as exc:  # a read-only store: hashed again next time
            log.debug("could not remember the verification of %s: %s", directory, exc)
    return None


def _stat_key(path: Path) -> list[int]:
    """Size, inode, modification and status-change times (the kernel sets the last at every write or touch)."""
    st = path.stat()
    return [st.st_size, st.st_ino, st.st_mtime_ns, st.st_ctime_ns]


def light_tokenizer_ok(directory: Path) -> bool:
    """Whether the entry's tokenizer can be run without transformers (checked when it was written)."""
    manifest = _read_json(Path(directory) / MANIFEST)
    return isinstance(manifest, dict) and manifest.get("light_tokenizer") is True


def find(sha256: str) -> Path | None:
    """The entry directory for a source sha256 (not yet verified), or None."""
    d = entry_dir(sha256)
    return d if (d / MANIFEST).is_file() else None


def write_entry(model: Any, tokenizer: Any, *, source: Path, sha256: str) -> Path:
    """Write the converted ``model`` (float32, GGUF-loaded) and ``tokenizer`` as the entry for ``sha256``.

    Atomic: a temporary directory beside the entry, renamed into place (an older or broken entry
    is replaced). Call before anything modifies the model's weights (the engine re-points them).
    """
    import copy

    import torch
    from safetensors.torch import save_file

    target = entry_dir(sha256)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        if any(p.dtype != torch.float32 for p in model.state_dict().values() if p.is_floating_point()):
            raise ValueError("only float32 conversions are cached")
        tensors: dict[str, Any] = {}
        seen: set[tuple[int, tuple[int, ...]]] = set()
        for name, t in model.state_dict().items():
            key = (t.data_ptr(), tuple(t.shape))
            if key not in seen:  # tied tensors (embeddings and LM head) once, under the first name
                seen.add(key)
                tensors[name] = (
                    t.detach().contiguous().clone() if t.storage_offset() or not t.is_contiguous() else t.detach()
                )
        save_file(tensors, str(tmp / WEIGHTS), metadata={"format": "pt"})
        config = copy.deepcopy(model.config)
        if hasattr(config, "quantization_config"):
            del config.quantization_config  # dequantised: plain float32 weights now
        config.save_pretrained(tmp)
        gen = getattr(model, "generation_config", None)
        if gen is not None:
            gen.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        from biaslab.models.local.light_tokenizer import LightTokenizer, mismatch, transformers_tokenizer

        light_problem = mismatch(LightTokenizer(tmp), tokenizer)
        reloaded_problem = mismatch(transformers_tokenizer(tmp), tokenizer)
        if reloaded_problem is not None:  # the saved tokenizer would not tokenize as the GGUF's does
            raise ValueError(f"the saved tokenizer differs from the GGUF file's ({reloaded_problem})")
        files = {}
        for p in sorted(tmp.iterdir()):
            if p.is_file():
                with open(p, "rb") as fh:
                    os.fsync(fh.fileno())
                files[p.name] = {"size": p.stat().st_size, "sha256": _hash_file(p)}
        st = source.stat()
        manifest = {
            "converter": CONVERTER_VERSION,
            "transformers": transformers_version(),
            "source_name": source.name,
            "source_path": str(source),
            "source_size": st.st_size,
            "source_sha256": sha256,
            "model_type": getattr(model.config, "model_type", None),
            "dtype": "float32",
            "light_tokenizer": light_problem is None,
            "light_tokenizer_check": light_problem or "same as transformers' on the samples",
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "files": files,
        }
        _write_json(tmp / MANIFEST, manifest)
        old = None
        if target.exists():
            old = target.with_name(f".{target.name}.{os.getpid()}.old")
            os.replace(target, old)
        os.replace(tmp, target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


_PENDING: dict[Path, Verification] = {}


def prefetch(path: Path) -> None:
    """Start verifying the cached conversion of the GGUF file ``path`` in the background (call before
    importing torch: the hashing overlaps the import); :func:`verified_entry` collects the result."""
    try:
        d = find(source_sha256(path))
    except OSError:
        return
    if d is not None and d not in _PENDING:
        _PENDING[d] = Verification(d)


def pending_entry(path: Path) -> tuple[Path, Verification] | None:
    """The cached conversion of the GGUF file ``path`` and its verification, under way (started by
    :func:`prefetch`, or now); None if there is none. Load it while its files are hashed, use it only if
    the verification's :meth:`~Verification.result` is None."""
    d = find(source_sha256(path))
    if d is None:
        return None
    return d, _PENDING.pop(d, None) or Verification(d)


def verified_entry(path: Path) -> Path | None:
    """The intact cached conversion of the GGUF file ``path``, or None (none yet, or a broken one)."""
    pending = pending_entry(path)
    if pending is None:
        return None
    d, check = pending
    problem = check.result()
    if problem is not None:
        log.warning("the cached conversion %s is broken (%s): converting again", d, problem)
        return None
    return d


def local_gguf(source: str, gguf_file: str) -> Path | None:
    """The GGUF file on disk: ``source/gguf_file``, or a hub file (``source`` = repository) downloaded
    into the hub cache; None when it cannot be had."""
    path = Path(source) / gguf_file
    if path.is_file():
        return path.resolve()
    try:
        from huggingface_hub import hf_hub_download

        return Path(hf_hub_download(repo_id=source, filename=gguf_file)).resolve()
    except Exception as exc:  # offline, unknown repository or file: the direct load reports it
        log.debug("could not fetch %s/%s: %s", source, gguf_file, exc)
        return None


def remove(entry: Path) -> None:
    """Delete one entry (renamed away first, so a reader never sees half of it)."""
    gone = entry.with_name(f".{entry.name}.{os.getpid()}.removing")
    os.replace(entry, gone)
    shutil.rmtree(gone, ignore_errors=True)
