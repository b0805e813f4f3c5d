"""The page of `biaslab view` in a real Chromium (one browser for the module, see tests/annotate/test_browser.py):
the filters narrow the attempts and say how many are shown, hostile answers show as text and run nothing, long
answers are folded, and the page fits a phone's width (390 px) and a laptop's (1280 px).
BIASLAB_SCREENSHOTS=DIR keeps a screenshot of each width."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.annotate.test_browser import browser, chromium, shot  # noqa: F401  (the fixtures, reused)
from tests.cli_runner import run_cli
from tests.conftest import requires_data
from tests.report.view_runs import HOSTILE, make_runs

pytestmark = [pytest.mark.browser, pytest.mark.slow, requires_data]

# after the module skips where Chromium is missing (the import above)
from selenium.common.exceptions import NoAlertPresentException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402

# the page's width against the window's, every attempt's card inside the window, and the count line
MEASURE_JS = r"""
const cards = Array.from(document.querySelectorAll('#list article'));
return {pageWidth: document.documentElement.scrollWidth, viewport: window.innerWidth,
        outside: cards.filter(c => c.getBoundingClientRect().right > window.innerWidth + 1).length,
        shown: cards.length, count: document.querySelector('#pager-top .count').textContent,
        readings: cards.map(c => c.querySelector('.rd').textContent)};
"""


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> tuple[Path, Path, Path]:
    root = tmp_path_factory.mktemp("view")
    levy, jobs = make_runs(root)
    run_cli("view", levy, jobs, "-o", root / "t.html", check=True)
    return root / "t.html", levy, jobs


def _open(driver, page: Path, width: int):
    driver.set_window_size(width, 900)
    driver.get(page.as_uri())
    inner = driver.execute_script("return window.innerWidth")
    if inner != width:  # the window's frame: size the viewport itself
        driver.set_window_size(2 * width - inner, 900)
        driver.get(page.as_uri())
    return driver.execute_script(MEASURE_JS)


def _undetected(run: Path) -> int:
    return (run / "attempts.jsonl").read_text(encoding="utf-8").count('"evaluation": null')


def test_filters_count_hostile_text_and_both_widths(page, browser):  # noqa: F811
    html, levy, jobs = page
    m = _open(browser, html, 1280)
    assert m["count"] == "Showing 1\u201319 of 19 matching attempts (of 19)" and m["shown"] == 19
    assert m["pageWidth"] <= m["viewport"] and m["outside"] == 0, m
    with pytest.raises(NoAlertPresentException):
        _ = browser.switch_to.alert.text  # alert(1) never ran
    assert browser.execute_script("return window.__pwned === undefined")
    answers = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#list .texts > div:last-child .txt")]
    assert sum(a.startswith(HOSTILE) for a in answers) == 3  # shown as the text it is
    assert browser.find_elements(By.CSS_SELECTOR, "#list details summary")  # the long jobs-lum answer, folded

    Select(browser.find_element(By.ID, "f-reading")).select_by_value("undetected")
    m = browser.execute_script(MEASURE_JS)
    both = _undetected(levy) + _undetected(jobs)
    assert m["shown"] == both and m["count"] == f"Showing 1\u2013{both} of {both} matching attempts (of 19)"
    Select(browser.find_element(By.ID, "f-model")).select_by_value("levy_a")
    m = browser.execute_script(MEASURE_JS)
    assert m["shown"] == _undetected(levy) == 6 and set(m["readings"]) == {"undetected"}
    Select(browser.find_element(By.ID, "f-reason")).select_by_value("empty answer")
    assert browser.execute_script(MEASURE_JS)["shown"] == 2
    shot(browser, "view-1280-filtered")

    m = _open(browser, html, 390)
    shot(browser, "view-390")
    assert m["shown"] == 19 and m["viewport"] == 390
    assert m["pageWidth"] <= m["viewport"] and m["outside"] == 0, m
    assert browser.execute_script("return window.__pwned === undefined")
