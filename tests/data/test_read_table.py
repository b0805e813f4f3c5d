"""The one rule set for reading user tables: :func:`biaslab.io.read_table`."""

import pytest

from biaslab.errors import DataError
from biaslab.io import read_table


def _write(path, text, encoding="utf-8"):
    path.write_bytes(text.encode(encoding))
    return path


def test_csv_with_bom_quotes_and_line_breaks_in_cells(tmp_path):
    p = _write(tmp_path / "items.csv", '\ufeffid,text\n1,"a, b"\n2,"two\nlines"\n3,"say ""hi"""\n4,x"y"\n')
    t = read_table(p)
    assert t.header == ["id", "text"]
    assert t.rows == [["1", "a, b"], ["2", "two\nlines"], ["3", 'say "hi"'], ["4", 'x"y"']]
    assert t.row_numbers == [2, 3, 4, 5]  # a record is one row, however many lines it spans


def test_crlf_and_cells_kept_as_written(tmp_path):
    p = _write(tmp_path / "items.csv", " id , text \r\n 1 ,  spaced  \r\n")
    t = read_table(p)
    assert t.header == ["id", "text"]  # header names are stripped
    assert t.rows == [[" 1 ", "  spaced  "]]  # cells are not


@pytest.mark.parametrize("name", ["a.tsv", "a.tab", "a.TSV"])
def test_tsv_by_extension(tmp_path, name):
    t = read_table(_write(tmp_path / name, "id\ttext\n1\ta, b\n"))
    assert t.header == ["id", "text"] and t.rows == [["1", "a, b"]]


@pytest.mark.parametrize(
    ("text", "header"), [("id\ttext\n1\tx\n", ["id", "text"]), ("id,text\n1,x\n", ["id", "text"]), ("id\n1\n", ["id"])]
)
def test_other_names_are_sniffed_from_the_header(tmp_path, text, header):
    assert read_table(_write(tmp_path / "items.txt", text)).header == header
    assert read_table(_write(tmp_path / "items", text)).header == header


@pytest.mark.parametrize(
    ("name", "text", "needle"),
    [
        ("a.csv", "id\ttext\n1\tx\n", "tab-separated but the name ends in .csv; rename the file to .tsv"),
        ("a.tsv", "id,text\n1,x\n", "comma-separated but the name ends in .tsv; rename the file to .csv"),
    ],
)
def test_name_and_content_that_disagree(tmp_path, name, text, needle):
    with pytest.raises(DataError, match=needle):
        read_table(_write(tmp_path / name, text))


def test_blank_rows_are_skipped_but_counted(tmp_path):
    p = _write(tmp_path / "a.csv", "\n\nid,text\n1,x\n\n , \n,,\n2,y\n\n")
    t = read_table(p)
    assert t.header_row == 3
    assert t.rows == [["1", "x"], ["2", "y"]]
    assert t.row_numbers == [4, 8]


def test_short_rows_are_padded_and_empty_extra_cells_dropped(tmp_path):
    t = read_table(_write(tmp_path / "a.csv", "id,text,group\n1\n2,y,g,,\n"))
    assert t.rows == [["1", "", ""], ["2", "y", "g"]]


def test_a_long_row_with_values_is_an_error(tmp_path):
    with pytest.raises(DataError, match=r"a\.csv, row 3: 3 cells but the header \(row 1\) has 2 columns; quote"):
        read_table(_write(tmp_path / "a.csv", "id,text\n1,x\n2,hello, world\n"))


def test_empty_header_names(tmp_path):
    # trailing delimiters and a leading row index (pandas' to_csv, R's write.csv) are dropped
    t = read_table(_write(tmp_path / "a.csv", ",id,text,\n0,1,x,\n1,2,y,\n"))
    assert t.header == ["id", "text"] and t.rows == [["1", "x"], ["2", "y"]]
    with pytest.raises(DataError, match=r"row 3: a value in column 2, which has no name in the header \(row 1\)"):
        read_table(_write(tmp_path / "b.csv", "id,,text\n1,,x\n2,oops,y\n"))


@pytest.mark.parametrize(
    ("header", "needle"),
    [("id,text, id ", "column 'id' appears twice"), ("id,text,ID", "column 'ID' and 'id' differ only in case")],
)
def test_duplicate_columns_ignoring_case_and_spaces(tmp_path, header, needle):
    with pytest.raises(DataError, match=rf"a\.csv, row 1: {needle} \(columns 1 and 3\); rename or remove one"):
        read_table(_write(tmp_path / "a.csv", header + "\n1,x,2\n"))


def test_header_only_is_a_table_without_rows(tmp_path):
    t = read_table(_write(tmp_path / "a.csv", "id,text\n"))
    assert t.header == ["id", "text"] and t.rows == [] and t.row_numbers == []
    assert t.index("ID") == 0 and t.index("nope") is None


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("", "the items file is empty; it needs a header row"),
        ("\n , \n\n", "the items file is empty"),
        ('id,text\n1,"open\n2,x\n', r"row 2: a quoted cell is never closed"),
        ('id,text\n1,"x"y\n', r"row 2 \(line 2\): not valid CSV"),
    ],
)
def test_unreadable_text(tmp_path, text, needle):
    with pytest.raises(DataError, match=needle):
        read_table(_write(tmp_path / "a.csv", text), what="items")


def test_encodings(tmp_path):
    with pytest.raises(DataError, match=r"a\.csv: not UTF-8 text .*save it as UTF-8"):
        read_table(_write(tmp_path / "a.csv", "id,text\n1,caf\u00e9\n", "latin-1"))
    with pytest.raises(DataError, match=r"b\.csv: UTF-16 text; save it as UTF-8"):
        read_table(_write(tmp_path / "b.csv", "id,text\n1,x\n", "utf-16"))


def test_missing_file_directory_and_old_spreadsheets(tmp_path):
    with pytest.raises(DataError, match=r"nope\.csv: no such file; give the path of the items file"):
        read_table(tmp_path / "nope.csv", what="items")
    with pytest.raises(DataError, match="is a directory; give the items file"):
        read_table(tmp_path, what="items")
    with pytest.raises(DataError, match=r"\.xls files cannot be read; save the table file as \.xlsx"):
        read_table(_write(tmp_path / "a.xls", "x"))
    with pytest.raises(DataError, match=r"shown\.xlsx: not a readable \.xlsx file"):
        read_table(_write(tmp_path / "a.xlsx", "not a zip"), display="shown.xlsx")


def test_xlsx_first_sheet_by_the_same_rules(tmp_path):
    openpyxl = pytest.importorskip("openpyxl")
    wb = openpyxl.Workbook()
    ws = wb.active
    for row in [[None, None], ["id", "score", None], [7, 0.5], [None, None], [" x ", None, None]]:
        ws.append(row)
    wb.create_sheet("ignored").append(["other"])
    wb.save(tmp_path / "t.xlsx")
    t = read_table(tmp_path / "t.xlsx")
    assert t.header == ["id", "score"] and t.header_row == 2
    assert t.rows == [["7", "0.5"], [" x ", ""]]  # 7.0 reads as 7, as the sheet shows it
    assert t.row_numbers == [3, 5]
