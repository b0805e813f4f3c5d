import re

import pytest

from biaslab.probes import PROBES, get_probe_class


@pytest.mark.parametrize("name", sorted(PROBES))
def test_every_probe_has_a_card_documenting_its_metrics(name):
    cls = get_probe_class(name)
    card = cls.card_path()
    assert card.is_file(), f"{name} has no README.md card"
    text = card.read_text(encoding="utf-8")
    assert cls.metric_docs, f"{name} documents no metrics"
    for metric in cls.metric_docs:
        assert re.search(rf"`{re.escape(metric)}`", text), f"{name}'s card does not document {metric}"
