"""The files `biaslab annotate init` reads, through the shared table rules of biaslab.io.read_table."""

import pytest

from biaslab.annotate.loaders import read_gold, read_items, read_tuples
from biaslab.errors import DataError


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_items_from_a_tsv_with_bom_quotes_and_blank_rows(tmp_path):
    p = _write(tmp_path / "items.tsv", '\ufeffUID\tResponse\n\na1\t"two\nlines"\n \t \nb.2\tplain\n')
    assert read_items(p) == [("a1", "two\nlines"), ("b.2", "plain")]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("id,text\n\n1,x\n1,y\n", "row 4 column id: item id 1 already used on row 3"),  # blank rows count
        ("id,text\n1,x\n2\n", "row 3 column text: empty text for item 2"),  # a short row is padded
        ("id,text\n1,x\n,y\n", "row 3 column id: empty item id; fill it in or remove the row"),
        ("id,text,id\n1,x,1\n", "row 1: column 'id' appears twice"),
        ("id,text\n1,x,extra\n", "row 2: 3 cells but the header (row 1) has 2 columns"),
    ],
)
def test_item_errors_name_the_file_row(tmp_path, text, needle):
    with pytest.raises(DataError) as err:
        read_items(_write(tmp_path / "items.csv", text))
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_tuples_and_gold_row_numbers_skip_blank_rows(tmp_path):
    known = {"1", "2", "3", "4"}
    tuples = _write(tmp_path / "t.csv", "Item1,Item2,Item3\n1,2,3\n\n3,2,1\n2,3,4\n")
    assert read_tuples(tuples, known) == [("1", "2", "3"), ("2", "3", "4")]
    gold = _write(tmp_path / "g.csv", "item1,item2,item3,bestitem,worstitem\n\n1,2,3,1,1\n")
    with pytest.raises(DataError, match="row 3: BestItem and WorstItem are both 1"):
        read_gold(gold, known)
