import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: half as many workers again as cores (a fifth of the suite's time is spent waiting: on servers
    it starts, on subprocesses, on slow-client timeouts), at most one per 5 GB of memory (a worker running a real
    model holds 2-5 GB)."""
    memory_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return max(1, min(_cores() * 3 // 2, int(memory_gb // 5)))


def _threads_per_worker() -> int:
    """The cores this process may use, shared out among pytest-xdist's workers (one each on 2 cores with 2 or 3
    workers): more OpenMP threads than cores spin at every barrier while their partner waits for a core."""
    return max(1, _cores() // max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1)))


# before torch is imported (here or in any biaslab subprocess, which inherits the environment); unless set by
# the caller: workers inherit the controller's environment, so a value set here is marked as ours and set again
if "OMP_NUM_THREADS" not in os.environ or os.environ.get("BIASLAB_TEST_THREADS") == "auto":
    os.environ["BIASLAB_TEST_THREADS"] = "auto"
    for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = str(_threads_per_worker())
# Python's bytecode cache on for the session and every process it starts: where PYTHONDONTWRITEBYTECODE is set, each
# vLLM process compiled the modules of vLLM it imports anew (10 s of every start: its venv is installed without .pyc
# files, which are written at first import instead), and each biaslab process biaslab's
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
_shared = REPO.parent / "shared" / "data"
if "BIASLAB_DATA_DIR" not in os.environ and _shared.is_dir():
    os.environ["BIASLAB_DATA_DIR"] = str(_shared)
elif os.environ.get("BIASLAB_DATA_DIR"):  # the README passes ../shared/data: pin it to this directory
    os.environ["BIASLAB_DATA_DIR"] = str(Path(os.environ["BIASLAB_DATA_DIR"]).resolve())


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache(tmp_path_factory):
    """Keep the tests' response cache out of the user's cache. Converted models stay in the model store
    (``BIASLAB_MODELS_DIR``, default the user's): each is converted once, whoever needs it first (workers and
    subprocesses wait for a conversion under way), and kept for later sessions; a test of conversion itself sets
    a store of its own."""
    if "BIASLAB_CACHE_DIR" not in os.environ or os.environ.get("CI"):
        os.environ["BIASLAB_CACHE_DIR"] = str(tmp_path_factory.mktemp("biaslab-cache"))
    yield


@pytest.fixture
def cli():
    """``cli("run", "jobs-lum", ..., env={...})``: biaslab in this process (:func:`tests.cli_runner.run_cli`)."""
    from tests.cli_runner import run_cli

    return run_cli


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


# The modules that take longest, in the order to start them: each worker takes the next one as it starts (the
# in-process vLLM tests begin with a local-engine run while vLLM's venv is built in the background; the lowest
# transformers' test waits for its own small venv, the vLLM server tests for vLLM's), then the rest.
LONGEST_FIRST = (
    "tests/models/vllm/test_inprocess.py",
    "tests/models/local/test_transformers_floor.py",
    "tests/models/openai/test_vllm_server.py",
    "tests/models/local/test_gemma3_270m.py",
    "tests/models/local/test_backend.py",
)


# Long modules that need nothing prepared (no model, no venv): where vLLM's venv is still to be built (about 3
# minutes of downloading on a clean machine, during which the modules of LONGEST_FIRST would wait for it or for
# the models being converted), the workers start with these, some 3 minutes of work for 3 workers.
NOTHING_TO_WAIT_FOR = (
    "tests/annotate/test_browser.py",
    "tests/annotate/test_hardening.py",
    "tests/report/test_report_layout_browser.py",
    "tests/suite/test_suite.py",
    "tests/cli/test_batch_runs.py",
)
# Decided once, in the process that starts the workers (they inherit it), so that every worker sorts alike.
if "PYTEST_XDIST_WORKER" not in os.environ and "BIASLAB_TEST_FIRST" not in os.environ:
    from tests.models.openai.vllm_server import vllm_ready as _vllm_ready

    _building = os.environ.get("BIASLAB_VLLM") != "0" and not _vllm_ready()
    os.environ["BIASLAB_TEST_FIRST"] = "nothing-to-wait-for" if _building else "longest"


def _weight(item: pytest.Item) -> int:
    """The named longest modules in their order (behind the ones with nothing to wait for, while vLLM's venv is
    built), then the slow ones (real models end to end, browsers), then the rest."""
    module = item.nodeid.split("::")[0]
    first = NOTHING_TO_WAIT_FOR if os.environ.get("BIASLAB_TEST_FIRST") == "nothing-to-wait-for" else ()
    if module in first:
        return first.index(module)
    if module in LONGEST_FIRST:
        return len(first) + LONGEST_FIRST.index(module)
    slow = item.get_closest_marker("slow") or item.get_closest_marker("browser")
    return len(first) + len(LONGEST_FIRST) + (0 if slow else 1)


@pytest.hookimpl(trylast=True)  # after -m / -k have deselected
def pytest_collection_modifyitems(config, items):
    """Modules whose tests take longest come first (each module's tests in their own order), so that pytest-xdist,
    which hands a worker one module at a time in this order (pyproject.toml), starts the long ones at once and
    fills in with short ones; the same order in every worker. A session with real-model tests also starts converting
    the embedded models into the model store at once, and one with vLLM tests building vLLM's venv, in the background
    (the work overlaps the tests before them; a test that needs it sooner waits for it, with a lock in the store or
    the cache, instead of doing it twice)."""
    module_weight: dict[str, int] = {}
    for item in items:
        module = item.nodeid.split("::")[0]
        module_weight[module] = min(module_weight.get(module, _weight(item)), _weight(item))
    items.sort(key=lambda item: module_weight[item.nodeid.split("::")[0]])  # stable: collection order within
    if os.environ.get("PYTEST_XDIST_WORKER", "gw0") != "gw0":
        return
    if any(item.get_closest_marker("real_model") for item in items):
        _in_background("models")
    floor = "tests/models/local/test_transformers_floor.py"
    if any(item.nodeid.startswith(floor) for item in items) and os.environ.get("BIASLAB_FLOOR") != "0":
        _in_background("floor")
    if any(item.get_closest_marker("vllm") for item in items) and os.environ.get("BIASLAB_VLLM") != "0":
        if not os.environ.get("BIASLAB_VLLM_PYTHON"):
            _in_background("vllm")


def _in_background(what: str) -> None:
    """``python -m tests.prepare WHAT`` in the background, for the session to find done (its output in the user
    cache's ``prepare-WHAT.log``)."""
    import subprocess
    import sys

    from tests.models.openai.vllm_server import cache_root

    cache_root().mkdir(parents=True, exist_ok=True)
    with open(cache_root() / f"prepare-{what}.log", "w") as log:
        subprocess.Popen(
            [sys.executable, "-m", "tests.prepare", what],
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """``BIASLAB_TEST_TIMELINE=FILE``: each test's start and end (setup to teardown), its worker and the CPU
    seconds it used (its own and its finished subprocesses'), a line each appended to FILE, to see where a
    session's time goes (which worker waits, which module runs alone at the end, which test is CPU-heavy)."""
    path = os.environ.get("BIASLAB_TEST_TIMELINE")
    if not path:
        yield
        return
    import resource
    import time

    def cpu() -> float:
        own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

    start, cpu_start = time.time(), cpu()
    yield
    with open(path, "a", encoding="utf-8") as f:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        f.write(f"{worker}\t{start:.2f}\t{time.time():.2f}\t{item.nodeid}\t{cpu() - cpu_start:.2f}\n")
