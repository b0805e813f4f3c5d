"""The SVG interval chart: positions on the axis, escaping, ticks, automatic limits."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from biaslab.report.svg_chart import PLOT_PX, IntervalRow, Marker, _nice_ticks, interval_chart

NS = "{http://www.w3.org/2000/svg}"


def _circles(svg: str) -> list[float]:
    return [float(c.get("cx")) for c in ET.fromstring(svg).iter(NS + "circle")]


def test_values_and_intervals_sit_where_the_axis_says():
    rows = [IntervalRow("a", 50.0, 25.0, 75.0), IntervalRow("b", 100.0)]
    svg = interval_chart(rows, xlim=(0, 100), reference=50, xlabel="score", title="t")
    root = ET.fromstring(svg)  # well-formed XML
    left = min(float(line.get("x1")) for line in root.iter(NS + "line") if line.get("stroke") == "#888")
    a, b = _circles(svg)
    assert a == left + PLOT_PX / 2 and b == left + PLOT_PX  # 50 of 0..100 is the middle, 100 the right end
    ci = [ln for ln in root.iter(NS + "line") if ln.get("stroke-width") == "3"]
    assert len(ci) == 1  # row b has no interval
    assert float(ci[0].get("x1")) == left + PLOT_PX / 4 and float(ci[0].get("x2")) == left + PLOT_PX * 3 / 4
    dotted = [ln for ln in root.iter(NS + "line") if ln.get("stroke-dasharray")]
    assert [float(ln.get("x1")) for ln in dotted] == [a]  # the reference line at 50


def test_labels_are_escaped_and_markers_drawn():
    svg = interval_chart(
        [IntervalRow("<script>alert(1)</script> & co", 0.5, markers=(Marker(0.2),))],
        xlim=(0, 1),
        xlabel="x < y",
        title="T & U",
    )
    assert "<script>" not in svg and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co" in svg
    assert "x &lt; y" in svg and "<title>T &amp; U</title>" in svg
    assert len(re.findall(r"<path ", svg)) == 1
    ET.fromstring(svg)


def test_automatic_limits_cover_every_value_and_the_reference():
    rows = [IntervalRow("a", -0.3, -0.5, 0.1), IntervalRow("b", 0.4, 0.2, 0.6)]
    svg = interval_chart(rows, reference=0, xlabel="x", title="t")
    root = ET.fromstring(svg)
    xs = [float(v) for ln in root.iter(NS + "line") for v in (ln.get("x1"), ln.get("x2"))]
    left, right = min(xs), max(xs)
    assert all(left < c < right for c in _circles(svg))


def test_ticks_are_round_numbers_inside_the_range():
    assert _nice_ticks(0, 100) == [0, 20, 40, 60, 80, 100]
    assert _nice_ticks(-0.02, 1.02) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert _nice_ticks(-0.55, 0.66) == [-0.5, 0, 0.5]
    assert str(_nice_ticks(-0.5, 0.5)[2]) == "0.0"  # not -0.0
