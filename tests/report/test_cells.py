from biaslab.report.cells import Markup, html_table, interval, num


def test_numbers_and_intervals():
    assert num(None) == "n/a" and num(0.12345) == "0.123" and num(66.66, 1) == "66.7"
    assert interval(0.1, 0.25) == "[0.100, 0.250]" and interval(None, 0.2) == ""
    assert interval(1, None, missing="none") == "none"


def test_table_escapes_text_keeps_markup_and_marks_numeric_and_flagged_rows():
    page = html_table(
        ["group", "p < 0.05"], [["<b>x</b>", "0.5"], [Markup("<i>y</i>"), "1"]], numeric=[1], flagged=[False, True]
    )
    assert page == (
        "<table class=rf><thead><tr><th>group</th><th class=num>p &lt; 0.05</th></tr></thead><tbody>"
        '<tr><td class=lead>&lt;b&gt;x&lt;/b&gt;</td><td class=num data-label="p &lt; 0.05">0.5</td></tr>'
        '<tr class=flag><td class=lead><i>y</i></td><td class=num data-label="p &lt; 0.05">1</td></tr>'
        "</tbody></table>"
    )
    # text columns after the first take a line of their own when the table reflows; an empty cell stays empty
    row = html_table(["decision", "sentence", ""], [["stereotype", "They are late.", ""]])
    assert '<td class=wide data-label="sentence">They are late.</td><td class=wide data-label="note"></td>' in row


def test_metric_names_wrap_between_their_words_only():
    from biaslab.report.html import breakable

    assert breakable("sentiment_range:<b>") == "sentiment_<wbr>range:<wbr>&lt;b&gt;"
