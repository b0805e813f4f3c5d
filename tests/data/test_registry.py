import shutil

import pytest

from biaslab.data import data_path
from biaslab.data.registry import FILES, sha256_of
from biaslab.errors import DataError
from tests.conftest import requires_data


@requires_data
def test_registered_checksums_match_the_shared_files():
    for name in FILES:
        assert sha256_of(data_path(name)) == FILES[name].sha256


def test_offline_without_data_names_the_file_and_both_ways(tmp_path, monkeypatch):
    monkeypatch.setenv("BIASLAB_DATA_DIR", str(tmp_path / "empty"))
    monkeypatch.setenv("BIASLAB_CACHE_DIR", str(tmp_path / "cache"))
    # no network: point the download at a closed local port
    monkeypatch.setattr("biaslab.data.registry._RAW", "http://127.0.0.1:9/{repo}/{commit}/{path}")
    with pytest.raises(DataError) as err:
        data_path("jobs/kennison_jobs.csv")
    msg = str(err.value)
    assert "jobs/kennison_jobs.csv" in msg and "BIASLAB_DATA_DIR" in msg and "download" in msg
    assert "\n" not in msg


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
