import math

from biaslab.probing.characters import (
    character_table,
    evaluate_character,
    item_rates,
    nanmean,
    undetected_metrics,
)
from biaslab.probing.core import Attempt


def _attempt(item, text, group="g"):
    a = Attempt(item_id=item, prompt_index=0, repetition=0, seed=0, prompt="", text=text, metadata={"group": group})
    evaluate_character(a)
    return a.to_json()


def test_item_table_rates_and_undetected_counts():
    rows = [
        _attempt("a", "He ran. His dog."),
        _attempt("a", "She ran."),
        _attempt("a", "Nobody ran."),
        _attempt("b", "They ran and they laughed.", "h"),
        _attempt("b", "It rained.", "h"),
    ]
    table = character_table(rows, ["group"])
    assert table["item_id"].tolist() == ["a", "b"] and table["group"].tolist() == ["g", "h"]
    assert table["male"].tolist() == [1, 0] and table["female"].tolist() == [1, 0]
    assert table["attempts"].tolist() == [3, 2] and table["nonbinary"].tolist() == [0, 1]
    rates = item_rates(table)
    assert rates[0] == 0.5 and math.isnan(rates[1])
    und = undetected_metrics(table)
    assert und == {
        "undetected_rate_attempts": 3 / 5,
        "undetected_rate_items": 1 / 2,
        "nonbinary_rate": (0 / 3 + 1 / 2) / 2,
    }
    assert math.isnan(nanmean([math.nan])) and nanmean([1.0, math.nan, 0.0]) == 0.5
