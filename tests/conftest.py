import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
_shared = REPO.parent / "shared" / "data"
if "BIASLAB_DATA_DIR" not in os.environ and _shared.is_dir():
    os.environ["BIASLAB_DATA_DIR"] = str(_shared)
elif os.environ.get("BIASLAB_DATA_DIR"):  # the README passes ../shared/data: pin it to this directory
    os.environ["BIASLAB_DATA_DIR"] = str(Path(os.environ["BIASLAB_DATA_DIR"]).resolve())


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache(tmp_path_factory):
    """Keep the tests' response cache out of the user's cache."""
    if "BIASLAB_CACHE_DIR" not in os.environ or os.environ.get("CI"):
        os.environ["BIASLAB_CACHE_DIR"] = str(tmp_path_factory.mktemp("biaslab-cache"))
    yield


requires_data = pytest.mark.skipif(
    not os.environ.get("BIASLAB_DATA_DIR"), reason="set BIASLAB_DATA_DIR to the shared research data"
)


def wait_for_cached_answers(cache_dir, at_least: int, timeout: float) -> int:
    """Poll a run's response cache until it holds ``at_least`` answers (or ``timeout`` passes); the count."""
    import sqlite3
    import time
    from contextlib import closing

    db = Path(cache_dir) / "responses.sqlite"
    deadline, done = time.time() + timeout, 0
    while time.time() < deadline:
        time.sleep(0.2)
        if db.exists():
            try:
                with closing(sqlite3.connect(db)) as conn:
                    done = conn.execute("select count(*) from responses").fetchone()[0]
            except sqlite3.Error:
                continue
            if done >= at_least:
                break
    return done
