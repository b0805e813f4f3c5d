"""`biaslab data` status without --fetch, `bws design` finding `uid`, `fsb analyze`'s PMI minimum and labels."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from biaslab.data.registry import FILES
from tests.cli_runner import run_cli
from tests.conftest import requires_data


def biaslab(*args, env=None):
    return run_cli(*args, env=env)


@requires_data
def test_data_status_reads_the_data_dir_and_fits_80_columns(tmp_path):
    proc = biaslab("data", env={"COLUMNS": "80", "BIASLAB_CACHE_DIR": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert max(map(len, lines)) <= 80
    pinned = [name for name, df in FILES.items() if df.sha256 is not None]  # GEST (unpinned) is not in the copy
    data_dir = Path(os.environ["BIASLAB_DATA_DIR"])
    here = [name for name in pinned if (data_dir / FILES[name].local).is_file()]  # the rest come from a wheel
    assert proc.stdout.count("ok (data dir)") == len(here) and len(FILES) - len(pinned) == 1
    assert len(pinned) - len(here) == proc.stdout.count("not here") - 1  # and GEST
    flat = "".join(line.strip("│ ").split("│")[0].strip() for line in lines)  # folded cells joined again
    assert all(name in flat for name in FILES) and "…" not in proc.stdout
    empty = biaslab(
        "data",
        env={"COLUMNS": "80", "BIASLAB_DATA_DIR": str(tmp_path / "none"), "BIASLAB_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert empty.stdout.count("not here") == len(FILES)


@requires_data
def test_bws_design_finds_the_uid_column_of_fsb_text(tmp_path):
    from biaslab.data import data_path

    items = data_path("fsb/FSB_text.csv")
    out = tmp_path / "tuples.csv"
    proc = biaslab("bws", "design", "--items", items, "--out", out, "--attempts", "2")
    assert proc.returncode == 0, proc.stderr
    uids = set(pd.read_csv(items)["uid"].astype(str))
    rows = list(csv.reader(out.open()))
    assert rows[0] == ["Item1", "Item2", "Item3", "Item4"]
    assert len(rows) - 1 == 2 * len(uids) and {v for r in rows[1:] for v in r} == uids
    (tmp_path / "noid.csv").write_text("name,text\na,b\n")
    bad = biaslab("bws", "design", "--items", tmp_path / "noid.csv", "--out", tmp_path / "x.csv")
    assert bad.returncode != 0 and "looked for id, uid, item_id, item" in bad.stderr and "--id-column" in bad.stderr


def test_fsb_analyze_leaves_out_rare_pmi_words_and_names_both_bins(tmp_path):
    rng = np.random.default_rng(1)
    rows, scores = [], []
    for i in range(90):
        b = i % 3
        pool = [["calm", "garden", "river"], ["maybe", "often", "usual"], ["weak", "inferior", "never"]][b]
        rows.append({"id": f"x{i}", "text": " ".join(rng.choice(pool, 5)) + f" once{i}"})  # once<i>: seen once
        scores.append({"id": f"x{i}", "score_normalized": [0.1, 0.5, 0.9][b]})
    pd.DataFrame(rows).to_csv(tmp_path / "t.csv", index=False)
    pd.DataFrame(scores).to_csv(tmp_path / "s.csv", index=False)
    out = tmp_path / "out"
    proc = biaslab(
        "fsb",
        "analyze",
        "--texts",
        tmp_path / "t.csv",
        "--scores",
        tmp_path / "s.csv",
        "--out",
        out,
        "--thresholds",
        "0.3,0.7",
        "--min-words",
        "1",
        "--min-df",
        "2",
        "--max-df",
        "0.9",
    )
    assert proc.returncode == 0, proc.stderr
    r = json.loads((out / "results.json").read_text())
    assert r["parameters"]["pmi_min_count"] == 5
    words = [w for b in r["pmi_top"].values() for w in b]
    assert words and all(w["count_total"] >= 5 for w in words) and not any(w["word"].startswith("once") for w in words)
    log_odds = [line for line in proc.stdout.splitlines() if line.startswith("log-odds")]
    assert len(log_odds) == 4 and len(set(log_odds)) == 4
    assert any(line.startswith("log-odds bin 1 vs 2, more in bin 2:") for line in log_odds)
    assert any(line.startswith("log-odds bin 2 vs 3, more in bin 2:") for line in log_odds)
