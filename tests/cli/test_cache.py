"""``biaslab cache``: lists the converted models, verifies them, clears one or all."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from biaslab.cli import mount

pytest.importorskip("torch")
pytest.importorskip("transformers")


def test_cache_lists_verifies_and_clears(tmp_path, monkeypatch):
    from biaslab.models.local import conversion
    from tests.models.local.test_conversion import _tiny_model_and_tokenizer

    monkeypatch.setenv("BIASLAB_CACHE_DIR", str(tmp_path))
    model, tok = _tiny_model_and_tokenizer()
    sources = [tmp_path / "a.gguf", tmp_path / "b.gguf"]
    entries = []
    for src in sources:
        src.write_bytes(src.name.encode())
        entries.append(conversion.write_entry(model, tok, source=src, sha256=conversion.source_sha256(src)))
    runner = CliRunner()
    listed = runner.invoke(mount(), ["cache", "--verify"], terminal_width=200)
    assert listed.exit_code == 0, listed.output
    assert all(e.name in listed.output for e in entries) and listed.output.count("intact") == 2
    assert "a.gguf (llama)" in listed.output and "2 entries" in listed.output
    bad = runner.invoke(mount(), ["cache", "--clear", "nosuchentry"])
    assert bad.exit_code != 0 and len(conversion.list_entries()) == 2
    one = runner.invoke(mount(), ["cache", "--clear", entries[0].name[:10]])
    assert one.exit_code == 0 and "cleared 1 conversion" in one.output
    assert [e.path for e in conversion.list_entries()] == [entries[1]]
    rest = runner.invoke(mount(), ["cache", "--clear"])
    assert rest.exit_code == 0 and conversion.list_entries() == []
