"""``biaslab cache``: the model store (lists the converted models, verifies them, clears one or all) and the
response cache; a fresh response cache never converts a model again."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing

import pytest
from typer.testing import CliRunner

from biaslab.cli import mount

pytest.importorskip("torch")
pytest.importorskip("transformers")


@pytest.mark.real_model
def test_cache_lists_verifies_and_clears(tmp_path, monkeypatch):
    from biaslab.models.local import conversion
    from tests.models.local.test_conversion import _tiny_model_and_tokenizer

    monkeypatch.setenv("BIASLAB_MODELS_DIR", str(tmp_path / "store"))
    monkeypatch.setenv("BIASLAB_CACHE_DIR", str(tmp_path / "responses"))
    model, tok = _tiny_model_and_tokenizer()
    sources = [tmp_path / "a.gguf", tmp_path / "b.gguf"]
    entries = []
    for src in sources:
        src.write_bytes(src.name.encode())
        entries.append(conversion.write_entry(model, tok, source=src, sha256=conversion.source_sha256(src)))
    assert all(e.parent == tmp_path / "store" / "converted" for e in entries)
    runner = CliRunner()
    listed = runner.invoke(mount(), ["cache", "--verify"], terminal_width=200)
    assert listed.exit_code == 0, listed.output
    assert all(e.name in listed.output for e in entries) and listed.output.count("intact") == 2
    assert "a.gguf (llama)" in listed.output and "2 entries" in listed.output
    assert f"Model store {tmp_path / 'store'}" in listed.output
    assert f"Response cache {tmp_path / 'responses' / 'responses.sqlite'} (none yet" in listed.output
    bad = runner.invoke(mount(), ["cache", "--clear", "nosuchentry"])
    assert bad.exit_code != 0 and len(conversion.list_entries()) == 2
    one = runner.invoke(mount(), ["cache", "--clear", entries[0].name[:10]])
    assert one.exit_code == 0 and "cleared 1 conversion" in one.output
    assert [e.path for e in conversion.list_entries()] == [entries[1]]
    rest = runner.invoke(mount(), ["cache", "--clear"])
    assert rest.exit_code == 0 and conversion.list_entries() == []
    empty = runner.invoke(mount(), ["cache"], terminal_width=200)
    assert "no converted models yet" in empty.output and "0 entries" in empty.output


def test_cache_describes_the_response_cache_it_is_given(tmp_path, monkeypatch):
    monkeypatch.setenv("BIASLAB_MODELS_DIR", str(tmp_path / "store"))
    db = tmp_path / "mine" / "responses.sqlite"
    db.parent.mkdir()
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, kind TEXT, model TEXT, value TEXT, created REAL)")
        conn.executemany("INSERT INTO responses VALUES (?, 'generate', 'm', 'v', 0)", [("a",), ("b",), ("c",)])
        conn.commit()
    shown = CliRunner().invoke(mount(), ["cache", "--cache-dir", str(db.parent)], terminal_width=200)
    assert shown.exit_code == 0, shown.output
    assert f"Response cache {db}: 3 answers" in shown.output
    assert not (tmp_path / "store").exists()  # looking creates nothing
    db.write_bytes(b"not a database at all, " * 100)
    broken = CliRunner().invoke(mount(), ["cache", "--cache-dir", str(db.parent)], terminal_width=200)
    assert broken.exit_code == 0 and "unreadable" in broken.output


@pytest.mark.real_model
def test_a_fresh_response_cache_uses_the_stored_conversion(tmp_path, monkeypatch):
    """Two runs of a GGUF model with two fresh response caches (--cache-dir, then BIASLAB_CACHE_DIR) and one
    model store: the model is converted by the first run only."""
    pytest.importorskip("gguf")
    from biaslab.models.local import conversion
    from tests.cli_runner import run_cli
    from tests.models.local.test_gguf_architectures import _tiny
    from tests.models.local.tiny_gguf import write_gguf

    monkeypatch.setenv("BIASLAB_MODELS_DIR", str(tmp_path / "store"))
    path = write_gguf(_tiny("qwen2"), tmp_path / "tiny.gguf", arch="qwen2", name="tiny qwen2")
    written = []
    real = conversion.write_entry
    monkeypatch.setattr(conversion, "write_entry", lambda *a, **k: written.append(1) or real(*a, **k))
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("sent_more,sent_less\nthe hello in.,the winter in.\nan on the.,the on an.\n")
    run = ("run", "pairs", "--pairs", pairs, "--model", f"gguf/{path}", "-q")
    run_cli(*run, "--cache-dir", tmp_path / "c1", "--out", tmp_path / "a", check=True)
    assert written == [1]
    from biaslab.models.local import loading

    loading._LOADED.clear()  # as a new process: nothing loaded
    run_cli(*run, "--out", tmp_path / "b", env={"BIASLAB_CACHE_DIR": str(tmp_path / "c2")}, check=True)
    results = json.loads((tmp_path / "b" / "results.json").read_text())
    assert results["run"]["model_calls"] > 0 and results["run"]["cache_hits"] == 0  # loaded again, and scored
    assert written == [1]  # from the store: no conversion
    assert [e.path.parent for e in conversion.list_entries()] == [tmp_path / "store" / "converted"]
    assert (tmp_path / "c2" / "responses.sqlite").is_file() and not (tmp_path / "c2" / "models").exists()
