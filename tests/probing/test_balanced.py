from collections import Counter

from biaslab.probing.balanced import round_robin
from biaslab.probing.core import ProbeItem, Prompt


def _items(sizes):
    return [ProbeItem(f"{g}-{k}", [Prompt("x")], {"group": g}) for g, n in sizes.items() for k in range(n)]


def test_every_group_once_before_any_twice_in_data_order():
    items = _items({"a": 5, "b": 1, "c": 3})
    chosen = round_robin(items, lambda it: it.metadata["group"], 5)
    counts = Counter(it.metadata["group"] for it in chosen)
    assert counts == {"a": 2, "b": 1, "c": 2}
    assert chosen == [it for it in items if it in chosen]  # the data's order is kept
    assert round_robin(items, lambda it: it.metadata["group"], 5) == chosen  # deterministic


def test_no_limit_or_a_large_one_keeps_everything():
    items = _items({"a": 2, "b": 2})
    assert round_robin(items, lambda it: it.metadata["group"], None) == items
    assert round_robin(items, lambda it: it.metadata["group"], 10) == items
