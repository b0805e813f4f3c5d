"""The report card in a real Chromium: it renders with no script and no error, a mark shows its reason on hover
(the title attribute), a run's link opens that run's report, and a hostile model name shows as text.

Skipped where Chromium is not installed, except in CI (CI=true), where a missing browser fails."""

from __future__ import annotations

import os
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

pytestmark = requires_data


@pytest.fixture
def browser():
    os.environ["SE_OFFLINE"] = "true"
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1300,900",
                f"--user-data-dir={tempfile.mkdtemp(prefix='biaslab-chromium-')}", "--no-first-run"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


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
    assert headings[:4] == ["How to read this card", "Marks at a glance", "Stereotypical reasoning",
                            "Representational harms"]
    # the hostile model name is text, not markup, and ran nothing
    assert HOSTILE in browser.find_element(By.TAG_NAME, "body").text
    assert browser.execute_script("return window.__pwned === undefined") is True
    assert not browser.find_elements(By.CSS_SELECTOR, "img")
    # every mark badge has its reason as a tooltip; model-a's masculine_rate is C by the interval's worse end
    badges = browser.find_elements(By.CSS_SELECTOR, "span.mark")
    assert badges and all(b.get_attribute("title") for b in badges)
    c_reasons = [b.get_attribute("title") for b in badges if b.text == "C"]
    assert any(r.startswith("C: the 95% interval reaches 0.17 from unbiased (0.5)") for r in c_reasons)
    # the run links lead to the runs' reports
    link = browser.find_element(By.CSS_SELECTOR, 'a[href="runs/model-a/jobs-lum/report.html"]')
    link.click()
    assert browser.title == "jobs-lum run"
    severe = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    assert not severe, severe
