"""Forest plots are self-contained SVG: one row per difference, the zero line, red where q < 0.05."""

import xml.etree.ElementTree as ET

from biaslab.compare.forest import LEFT, PLOT, forest_plots, forest_svg

NS = "{http://www.w3.org/2000/svg}"


def test_rows_points_and_zero_line():
    rows = [
        {"label": "bias_score", "diff": -1.0, "ci_low": -3.0, "ci_high": 1.0, "q": 0.2},
        {"label": "x" * 80, "diff": 2.0, "ci_low": 1.0, "ci_high": 3.0, "q": 0.01},
    ]
    svg = ET.fromstring(forest_svg(rows, "bias_score"))
    circles = svg.findall(f"{NS}circle")
    assert [c.get("fill") for c in circles] == ["#3b6ea8", "#c0392b"]
    xs = [float(c.get("cx")) for c in circles]
    zero = float(svg.findall(f"{NS}line")[0].get("x1"))
    assert LEFT <= xs[0] < zero < xs[1] <= LEFT + PLOT
    # x is linear: the zero line sits a third of the way from -1 to +2
    assert abs((zero - xs[0]) / (xs[1] - xs[0]) - 1 / 3) < 1e-6
    labels = ["".join(s.text or "" for s in t.findall(f"{NS}tspan")) for t in svg.findall(f"{NS}text")]
    # a long label is wrapped onto lines of at most 42 characters, never cut
    assert "bias_score" in labels and "x" * 80 in labels
    assert all(len(s.text) <= 42 for s in svg.iter(f"{NS}tspan"))


def test_one_plot_per_metric_family_and_nothing_external():
    cmps = [
        {"metric": m, "diff": 1.0, "ci_low": 0.5, "ci_high": 1.5, "q": 0.5, "run_b": "b"}
        for m in ("bias_score", "bias_score:Jewish", "tie_rate")
    ]
    plots = forest_plots(cmps, several_pairs=False)
    assert len(plots) == 2 and all("href" not in p for p in plots)
    assert forest_svg([{"label": "m", "diff": None}], "empty") == ""
