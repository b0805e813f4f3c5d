"""Every probe's report.html and the compare page in a real Chromium at a phone's width (390 px) and a
laptop's (1280 px): nothing wider than the page, every table inside its card (reflowed into one card
per row on the phone, never clipped), rows of a sensible height, and red used only for q < 0.05, with a key.

Reports come from scripted-backend runs (seconds each); the suite's report card has its own layout test
(tests/suite/test_card_browser.py). Skipped where Chromium is not installed, except
in CI (see tests/annotate/test_browser.py, whose browser fixture this reuses). BIASLAB_SCREENSHOTS=DIR
keeps a screenshot of every page at both widths.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.annotate.test_browser import browser, chromium, shot  # noqa: F401  (the fixtures, reused)
from tests.cli_runner import run_cli
from tests.conftest import requires_data

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PROBES = {  # probe -> the extra arguments of a small scripted run
    "jobs-lum": ["-m", "scripted/random-gender", "-n", "12", "--repetitions", "2"],
    "olympics": ["-m", "scripted/random-gender", "-n", "12"],
    "winogender": ["-m", "scripted/random-gender", "-n", "24"],
    "winosemitism": ["-m", "scripted/echo", "-n", "40"],
    "winoqueer-human": ["-m", "scripted/echo", "-n", "40"],
    "gpt-winoqueer": ["-m", "scripted/echo", "-n", "40"],
    "gpt-winosemitism": ["-m", "scripted/echo", "-n", "40"],
    "crows-pairs": ["-m", "scripted/echo", "-n", "60"],
    "bbq": ["-m", "scripted/echo", "-n", "60"],
    "bold": ["-m", "scripted/echo", "-n", "30"],
    "holistic-bias": ["-m", "scripted/echo", "-n", "30"],
    "fsb-judge": ["-m", "scripted/echo", "-n", "20"],
}
WIDTHS = (390, 1280)

# Measured in the page: the page's own overflow, tables or cells past their card, the tallest table row,
# and every element painted red (text or fill) with what it is.
LAYOUT_JS = r"""
const out = {pageWidth: document.documentElement.scrollWidth, viewport: window.innerWidth, problems: [],
             tallest: 0, tallestText: "", reds: []};
const card = el => el.closest('.card') || document.querySelector('main');
for (const table of document.querySelectorAll('table')) {
  const c = card(table), cr = c.getBoundingClientRect();
  const scrolls = getComputedStyle(c).overflowX === 'auto' && c.scrollWidth > c.clientWidth + 1;
  if (scrolls && window.innerWidth >= 1000) out.problems.push('table scrolls at laptop width: ' +
      table.innerText.slice(0, 60));
  if (table.classList.contains('rf') && window.innerWidth < 640) {
    for (const td of table.querySelectorAll('td')) {
      const r = td.getBoundingClientRect();
      if (r.width && (r.right > cr.right + 1 || r.left < cr.left - 1))
        out.problems.push('cell outside its card: ' + td.innerText.slice(0, 60));
    }
  } else if (!scrolls && table.getBoundingClientRect().right > cr.right + 1) {
    out.problems.push('table past its card: ' + table.innerText.slice(0, 60));
  }
  for (const tr of table.querySelectorAll('tr')) {  // attempts hold whole prompts: only the other tables
    const h = tr.getBoundingClientRect().height;
    if (h > out.tallest && !table.classList.contains('attempts')) {
      out.tallest = h; out.tallestText = tr.innerText.slice(0, 80);
    }
  }
}
for (const el of document.querySelectorAll('main *')) {
  const s = getComputedStyle(el);
  for (const col of [s.color, s.backgroundColor, el.getAttribute('fill') || '', el.getAttribute('stroke') || '']) {
    const m = col.match(/rgba?\((\d+), (\d+), (\d+)/) || col.match(/^#(..)(..)(..)$/);
    if (!m) continue;
    const [r, g, b] = m.slice(1, 4).map(v => col.startsWith('#') ? parseInt(v, 16) : +v);
    if (r > 150 && g < 90 && b < 90 && el.getBoundingClientRect().width > 0)
      out.reds.push(el.tagName + '.' + (el.getAttribute('class') || ''));
  }
}
for (const img of document.querySelectorAll('main img, main svg')) {
  const r = img.getBoundingClientRect(), cr = card(img).getBoundingClientRect();
  if (r.width && r.right > cr.right + 1)
    out.problems.push('figure past its card: ' + (img.getAttribute('alt') || 'svg'));
}
return out;
"""


def _run(tmp: Path, probe: str, args: list[str], out: Path | None = None) -> Path:
    out = out or tmp / probe
    run_cli("run", probe, *args, "--out", out, "-q", env={"BIASLAB_CACHE_DIR": str(tmp / "cache")}, check=True)
    return out


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Path]:
    """report.html of every probe, of a run over a pairs file, and a compare page."""
    tmp = tmp_path_factory.mktemp("layout")
    runs = {probe: _run(tmp, probe, args) for probe, args in PROBES.items()}
    pairs = tmp / "my_pairs.csv"
    with pairs.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["sent_more", "sent_less", "target_ID"])
        for i in range(12):
            w.writerow([f"Women are bad at task {i}.", f"Men are bad at task {i}.", "women"])
    runs["pairs"] = _run(tmp, "pairs", ["-m", "scripted/echo", "-P", f"pairs={pairs}"])
    other = _run(tmp, "crows-pairs", ["-m", "scripted/he", "-n", "60"], out=tmp / "crows-pairs-he")
    compare = tmp / "compare.html"
    run_cli("compare", runs["crows-pairs"], other, "--out", compare, check=True)
    return {**{name: d / "report.html" for name, d in runs.items()}, "compare": compare}


NAMES = [*PROBES, "pairs", "compare"]


def _layout_failures(browser, name: str, page: Path, width: int) -> list[str]:  # noqa: F811
    browser.get(page.as_uri())
    inner = browser.execute_script("return window.innerWidth")
    if inner != width:  # the window's frame: size the viewport itself
        browser.set_window_size(2 * width - inner, 900)
        browser.get(page.as_uri())
    shot(browser, f"report-{name}-{width}")
    m = browser.execute_script(LAYOUT_JS)
    failures = []
    if m["pageWidth"] > m["viewport"]:
        failures.append(f"{name}: page {m['pageWidth']} px wide in a {m['viewport']} px window")
    failures += [f"{name}: {p}" for p in m["problems"]]
    limit = 360 if width < 640 else 240  # px: a reflowed row holds its metric's explanation
    if m["tallest"] > limit:
        failures.append(f"{name}: a row {m['tallest']:.0f} px tall ({m['tallestText']!r})")
    text = browser.find_element("tag name", "body").text
    if m["reds"] and "q < 0.05" not in text:
        failures.append(f"{name}: red on the page ({m['reds'][:3]}) without a key saying it means q < 0.05")
    return failures


@requires_data
@pytest.mark.parametrize("width", WIDTHS)
def test_every_report_fits_phone_and_laptop_widths(pages, browser, width):  # noqa: F811
    browser.set_window_size(width, 900)
    failures = [f for name in NAMES for f in _layout_failures(browser, name, pages[name], width)]
    assert not failures, "\n".join(failures)


@requires_data
def test_pairs_report_names_its_file_and_red_is_only_significance(pages):
    html = pages["pairs"].read_text(encoding="utf-8")
    assert "<h1>Paired sentences from your own CSV (CrowS-Pairs and the like): my_pairs.csv</h1>" in html
    for name in NAMES:
        page = pages[name].read_text(encoding="utf-8")
        assert "#fdecea" not in page and "red row" not in page, name  # red no longer shades "too small" rows


@requires_data
def test_every_metric_of_every_probe_has_its_n(pages):
    missing = []
    for name in [*PROBES, "pairs"]:
        results = json.loads((pages[name].parent / "results.json").read_text(encoding="utf-8"))
        missing += [
            f"{name}: {k}" for k, m in results["metrics"].items() if m.get("value") is not None and m.get("n") is None
        ]
    assert not missing, missing
