"""Fixtures of the OpenAI-backend tests: no keys, base URL or proxies from the environment (the
test servers are on loopback), and test servers that are stopped after each test."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from openai_test_server import OpenAITestServer

from tests.models.openai.openai_batch_server import BatchBehaviour, OpenAIBatchServer


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "BIASLAB_API_KEY", "OPENAI_BASE_URL", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
        monkeypatch.delenv(var.lower(), raising=False)


@pytest.fixture
def make_server():
    servers: list[OpenAITestServer] = []

    def make(**config):
        srv = OpenAITestServer(**config).start()
        servers.append(srv)
        return srv

    yield make
    for srv in servers:
        srv.stop()


@pytest.fixture
def batch_server():
    """Batch API test servers (:mod:`.openai_batch_server`), stopped after the test."""
    servers: list[OpenAIBatchServer] = []

    def make(behaviour: BatchBehaviour | None = None, **config) -> OpenAIBatchServer:
        srv = OpenAIBatchServer(behaviour, **config).start()
        servers.append(srv)
        return srv

    yield make
    for srv in servers:
        srv.stop()
