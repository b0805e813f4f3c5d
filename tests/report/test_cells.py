from biaslab.report.cells import Markup, html_table, interval, num


def test_numbers_and_intervals():
    assert num(None) == "n/a" and num(0.12345) == "0.123" and num(66.66, 1) == "66.7"
    assert interval(0.1, 0.25) == "[0.100, 0.250]" and interval(None, 0.2) == ""
    assert interval(1, None, missing="none") == "none"


def test_table_escapes_text_keeps_markup_and_marks_numeric_and_flagged_rows():
    page = html_table(["group", "p < 0.05"], [["<b>x</b>", "0.5"], [Markup("<i>y</i>"), "1"]], numeric=[1],
                      flagged=[False, True])
    assert page == ("<table><tr><th>group</th><th>p &lt; 0.05</th></tr>"
                    "<tr><td>&lt;b&gt;x&lt;/b&gt;</td><td class=num>0.5</td></tr>"
                    "<tr class=flag><td><i>y</i></td><td class=num>1</td></tr></table>")
