"""docs/file_probes.md stays true: its worked example is the files under examples/file_probe/ word for word (the
files tests/probing/file_probe/ runs), every probe file it shows is a valid one, and the errors it quotes are the
ones biaslab gives."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from biaslab.errors import ConfigError
from biaslab.probing.file_probe.schema import load_spec

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "file_probes.md"
EXAMPLE = REPO / "examples" / "file_probe"


def blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", DOC.read_text(encoding="utf-8"), flags=re.M | re.S)


def test_the_worked_example_is_the_example_files():
    assert blocks("yaml")[0] == (EXAMPLE / "occupation_pronouns.yaml").read_text(encoding="utf-8")
    assert blocks("csv")[0] == (EXAMPLE / "occupations.csv").read_text(encoding="utf-8")
    assert "file:examples/file_probe/occupation_pronouns.yaml" in blocks("bash")[0]


def test_every_probe_file_the_guide_shows_is_valid(tmp_path):
    for n, text in enumerate(blocks("yaml")):
        path = tmp_path / f"probe{n}.yaml"
        path.write_text(text, encoding="utf-8")
        if "table:" in text:
            (tmp_path / "occupations.csv").write_text(blocks("csv")[0], encoding="utf-8")
        assert load_spec(str(path)).metrics


def test_the_errors_the_guide_quotes_are_biaslab_s(tmp_path):
    good = blocks("yaml")[0]
    (tmp_path / "occupations.csv").write_text(blocks("csv")[0], encoding="utf-8")
    edits = [
        ("{occupation} with", "{occupaton} with"),
        ("  - rate: masculine", "  - rat: masculine"),
        ("feminine: [she, her, hers, herself]", "feminine: [she, her, no, herself]"),
    ]
    quoted = [line.removeprefix("error: ") for line in blocks("text")[-1].splitlines()]
    assert len(quoted) == len(edits)
    for (old, new), line in zip(edits, quoted):
        (tmp_path / "probe.yaml").write_text(good.replace(old, new, 1), encoding="utf-8")
        with pytest.raises(ConfigError) as exc:
            load_spec(str(tmp_path / "probe.yaml"))
        assert str(exc.value) == line.replace("probe.yaml", str(tmp_path / "probe.yaml"))
