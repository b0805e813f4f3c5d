"""The pages in a real Chromium (Debian's `chromium` + `chromium-driver`, driven by Selenium):
log in, consent, annotate with the mouse and the keyboard, progress, break reminder, skip, log
out, the admin page's flag, and hostile texts that display as text and run nothing.

Skipped where Chromium is not installed, except in CI (CI=true), where a missing browser fails.
Set BIASLAB_SCREENSHOTS=DIR to keep a screenshot of every page visited.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from biaslab.annotate.assignment import Submission, next_tuple, submit
from biaslab.annotate.client import ApiClient
from biaslab.annotate.db import Database
from biaslab.annotate.project import Settings
from tests.annotate.helpers import ServerProcess, make_accounts, make_project

CHROMIUM = os.environ.get("BIASLAB_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("BIASLAB_CHROMEDRIVER", "/usr/bin/chromedriver")
HOSTILE = {
    "1": "<script>window.__pwned = 1; alert('x')</script> women belong in the kitchen",
    "2": '<img src=x onerror="window.__pwned = 2"> he is a nurse',
    "3": '<a href="javascript:window.__pwned=3">click me</a> she is an engineer',
    "4": "\u202eniamod siht ni tnetepmoc era nem ylnO\u202c the end",
    "5": "Long text. " * 9_100,  # about 100 KB
}


def _browser_available() -> bool:
    return Path(CHROMIUM).is_file() and Path(CHROMEDRIVER).is_file()


if not _browser_available():
    if os.environ.get("CI", "").lower() == "true":
        raise RuntimeError(
            f"CI=true but Chromium is missing ({CHROMIUM}, {CHROMEDRIVER}): apt-get install -y chromium chromium-driver"
        )
    pytest.skip("Chromium not installed (apt-get install -y chromium chromium-driver)", allow_module_level=True)

if os.environ.get("CI", "").lower() != "true":
    pytest.importorskip("selenium")  # in CI a missing selenium fails at the import below
from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import (  # noqa: E402
    NoAlertPresentException,
    StaleElementReferenceException,
    WebDriverException,
)
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _start_chromium() -> tuple[webdriver.Chrome, str]:
    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager must not try to download anything
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="biaslab-chromium-")
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1200,900",
        f"--user-data-dir={profile}",
        "--no-first-run",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    return driver, profile


@pytest.fixture(scope="module")
def chromium():
    """One Chromium for a module's tests (each start costs about 2 s of CPU), restarted if a test left it broken;
    :func:`browser` hands it to each test as a fresh one."""
    held: dict[str, Any] = {}
    yield held
    if "driver" in held:
        held["driver"].quit()
        shutil.rmtree(held["profile"], ignore_errors=True)


def _fresh(driver: webdriver.Chrome) -> None:
    """As a new browser: one blank window of 1200x900, no cookies (they are per host, not per port, and every
    test's server is on 127.0.0.1), no cache, no console messages from before."""
    handles = driver.window_handles
    for handle in handles[1:]:
        driver.switch_to.window(handle)
        driver.close()
    driver.switch_to.window(handles[0])
    driver.get("about:blank")
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    driver.execute_cdp_cmd("Network.clearBrowserCache", {})
    driver.set_window_size(1200, 900)
    driver.get_log("browser")


@pytest.fixture
def browser(chromium):
    if "driver" in chromium:
        try:
            _fresh(chromium["driver"])
        except WebDriverException:  # an alert left open, a crashed tab: a new browser
            chromium.pop("driver").quit()
            shutil.rmtree(chromium.pop("profile"), ignore_errors=True)
    if "driver" not in chromium:
        chromium["driver"], chromium["profile"] = _start_chromium()
    driver = chromium["driver"]
    yield driver
    with contextlib.suppress(WebDriverException):  # the page's storage (a later server may get the same port)
        if driver.current_url.startswith("http"):
            driver.execute_script("localStorage.clear(); sessionStorage.clear();")


def shot(driver, name: str) -> None:
    folder = os.environ.get("BIASLAB_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(Path(folder) / f"{name}.png"))


def until(driver, condition):
    """Wait up to 30 s for ``condition``; an element replaced by a page update while it is read means "not yet"."""
    return WebDriverWait(driver, 30, ignored_exceptions=(StaleElementReferenceException,)).until(condition)


def wait_for(driver, element_id: str):
    return until(driver, EC.presence_of_element_located((By.ID, element_id)))


def ready_body(driver):
    """The page's body once its keyboard shortcuts are bound (a key sent before would be lost on a busy machine)."""
    until(driver, EC.presence_of_element_located((By.CSS_SELECTOR, '#annotate-form[data-keys="ready"]')))
    return driver.find_element(By.TAG_NAME, "body")


def log_in(driver, url: str, name: str, password: str) -> None:
    driver.get(url + "/login")
    wait_for(driver, "name").send_keys(name)
    driver.find_element(By.ID, "password").send_keys(password)
    button = driver.find_element(By.ID, "login")
    button.click()
    until(driver, replaced(button))  # the answer's page has replaced the form


def replaced(element):
    """A wait condition: ``element`` has left the document. While the next page replaces it, Chromium may
    answer "does not belong to the document" instead of a stale-element error: that is gone too."""

    def check(_driver) -> bool:
        try:
            element.is_enabled()
        except StaleElementReferenceException:
            return True
        except WebDriverException as exc:
            if "does not belong to the document" in str(exc):
                return True
            raise
        return False

    return check


def progress_value(driver) -> int:
    return int(driver.find_element(By.ID, "progress-bar").get_attribute("value"))


def stored(project: Path, name: str) -> list[tuple]:
    db = Database(project)
    try:
        return [
            tuple(r)
            for r in db.conn().execute(
                "SELECT a.tuple_id, a.best, a.worst, a.feedback FROM annotations a JOIN annotators n "
                "ON n.id = a.annotator_id WHERE n.name = ? ORDER BY a.id",
                (name,),
            )
        ]
    finally:
        db.close()


def current_items(driver) -> list[str]:
    return [el.get_attribute("value") for el in driver.find_elements(By.CSS_SELECTOR, 'input[name="best"]')]


def test_login_consent_annotate_with_mouse_and_keyboard_break_and_logout(tmp_path, browser):
    project = make_project(tmp_path, n_items=120, n_tuples=60, per_tuple=1, cap=1.0)
    password = make_accounts(project, ["ann"])["ann"]
    with ServerProcess(project) as server:
        d = browser
        d.get(server.url + "/annotate")
        wait_for(d, "login")  # not logged in: the login page
        log_in(d, server.url, "ann", "not the password")
        assert "Wrong name or password" in wait_for(d, "login-form").find_element(By.XPATH, "..").text
        log_in(d, server.url, "ann", password)
        wait_for(d, "accept")
        shot(d, "consent")
        assert "Content warning" in d.page_source
        d.get(server.url + "/annotate")  # consent must come first
        wait_for(d, "accept").click()
        d.find_element(By.ID, "consent").click()
        wait_for(d, "start")
        shot(d, "instructions")
        assert "most negatively gender-biased" in d.find_element(By.TAG_NAME, "main").text
        d.find_element(By.ID, "start").click()

        # 1. Mouse: click the radio buttons, type feedback, click Submit.
        wait_for(d, "annotate-form")
        shot(d, "annotate")
        assert progress_value(d) == 0
        items = current_items(d)
        d.find_element(By.ID, "best-3").click()
        d.find_element(By.ID, "worst-1").click()
        d.find_element(By.ID, "feedback").send_keys("clicked")
        d.find_element(By.ID, "submit").click()
        until(d, lambda drv: progress_value(drv) == 1)
        first = stored(project, "ann")
        assert first == [(first[0][0], items[2], items[0], "clicked")]

        # 2. Keyboard: 2 = most biased is text 2; Q then 4 ... the same text cannot be both:
        items = current_items(d)
        body = ready_body(d)
        body.send_keys("4")
        body.send_keys("r")  # least = text 4: clears "most" = text 4
        assert not d.find_element(By.ID, "best-4").is_selected()
        assert d.find_element(By.ID, "worst-4").is_selected()
        body.send_keys("2")
        body.send_keys("\ue007")  # Enter
        until(d, lambda drv: progress_value(drv) == 2)
        assert stored(project, "ann")[-1][1:3] == (items[1], items[3])

        # 3. Skip with the S key: nothing stored, a new tuple.
        skipped = d.find_element(By.NAME, "tuple_id").get_attribute("value")
        ready_body(d).send_keys("s")
        until(d, lambda drv: drv.find_element(By.NAME, "tuple_id").get_attribute("value") != skipped)
        assert len(stored(project, "ann")) == 2

        # 4. Break reminder every 25: do 22 through the API (same account), the 25th in the browser.
        api = ApiClient(server.url)
        api.login("ann", password)
        held = api.next()  # the tuple the page shows
        for _ in range(22):
            tup = api.next()
            ids = [i["id"] for i in tup["items"]]
            if tup["tuple_id"] == held["tuple_id"]:
                api.skip(tup["tuple_id"])
                continue
            api.submit(tup["tuple_id"], ids[0], ids[1])
        d.get(server.url + "/annotate")
        done_before = progress_value(d)
        while progress_value(d) < 25:
            body = ready_body(d)
            body.send_keys("1")
            body.send_keys("w")
            body.send_keys("\ue007")
            until(d, lambda drv, before=done_before: drv.find_elements(By.ID, "break") or progress_value(drv) > before)
            if d.find_elements(By.ID, "break"):
                break
            done_before = progress_value(d)
        wait_for(d, "break")
        shot(d, "break")
        assert "Time for a break" in d.page_source and "25" in d.find_element(By.ID, "break").text
        d.find_element(By.ID, "continue").click()
        wait_for(d, "annotate-form")

        # 5. Log out: back to the login page, and the session no longer opens pages.
        d.find_element(By.ID, "logout").click()
        wait_for(d, "login")
        d.get(server.url + "/annotate")
        wait_for(d, "login")
        # No script error or CSP violation on any page (network entries are the expected 401/303s).
        severe = [e for e in d.get_log("browser") if e["level"] == "SEVERE" and e.get("source") != "network"]
        assert severe == []


def test_hostile_texts_are_shown_as_text_and_run_nothing(tmp_path, browser):
    project = make_project(tmp_path, n_items=8, n_tuples=4, per_tuple=1, cap=1.0, texts=HOSTILE)
    password = make_accounts(project, ["reader"])["reader"]
    with ServerProcess(project) as server:
        d = browser
        log_in(d, server.url, "reader", password)
        wait_for(d, "accept").click()
        d.find_element(By.ID, "consent").click()
        wait_for(d, "start")
        shown: dict[str, str] = {}
        for k in range(4):
            d.get(server.url + "/annotate")
            if d.find_elements(By.ID, "finished"):
                break
            wait_for(d, "annotate-form")
            shot(d, f"hostile-{k}")
            with pytest.raises(NoAlertPresentException):
                _ = d.switch_to.alert.text  # alert('x') never ran
            assert d.execute_script("return window.__pwned === undefined")
            texts = d.find_elements(By.CSS_SELECTOR, ".item-text")
            assert not d.find_elements(By.CSS_SELECTOR, ".item-text *")  # no element inside a text
            for radio, text in zip(current_items(d), texts):
                shown[radio] = d.execute_script("return arguments[0].textContent", text)
            big = [t for t in texts if len(t.get_attribute("textContent")) > 50_000]
            for t in big:  # the 100 KB text scrolls inside its box
                assert t.size["height"] < 400
            d.find_element(By.ID, "best-1").click()
            d.find_element(By.ID, "worst-2").click()
            d.find_element(By.ID, "submit").click()
        for item_id, text in HOSTILE.items():
            assert shown[item_id] == text  # displayed literally, characters intact
        note = d.page_source
        assert d.execute_script("return window.__pwned === undefined")
        hrefs = d.execute_script("return Array.from(document.links, a => a.getAttribute('href') || '').join(' ')")
        assert "javascript:" not in hrefs  # read in one go: the page may be updating
        assert note


def test_admin_page_shows_progress_and_the_gold_flag(tmp_path, browser):
    gold = [[str(k), str(k + 10), str(k + 20), str(k + 30), str(k + 10), str(k + 30)] for k in range(1, 4)]
    project = make_project(
        tmp_path,
        n_items=40,
        n_tuples=20,
        per_tuple=1,
        cap=1.0,
        gold=gold,
        gold_rate=0.5,
        gold_min=2,
        gold_threshold=0.9,
    )
    passwords = make_accounts(project, ["sloppy"])
    passwords.update(make_accounts(project, ["lead"], admin=True))
    db = Database(project)
    s = Settings.load(db)
    me = db.conn().execute("SELECT id FROM annotators WHERE name = 'sloppy'").fetchone()[0]
    for k in range(6):  # best: the highest item id, worst: the lowest; the reverse of every gold answer
        tup = next_tuple(db, s, me, lease=60)  # (positions are shuffled per annotator: pick by id)
        ids = sorted((i["id"] for i in tup["items"]), key=int)
        submit(db, s, me, Submission(tup["tuple_id"], ids[-1], ids[0], "", f"g{k}"))
    db.close()
    with ServerProcess(project) as server:  # a fresh process reads the stored flag
        d = browser
        log_in(d, server.url, "lead", passwords["lead"])
        wait_for(d, "admin")
        shot(d, "admin")
        text = d.find_element(By.ID, "admin").text
        assert "Flagged for low gold accuracy: sloppy" in text
        assert "3 of 20 annotations" in text and "0/3" in text
        log_in(d, server.url, "sloppy", passwords["sloppy"])
        d.get(server.url + "/admin")
        assert "Admins only" in d.page_source


LAYOUT_PROBE = """
const root = document.documentElement;
const rect = el => el.getBoundingClientRect();
const texts = Array.from(document.querySelectorAll('.item-row .text'), el => rect(el).width);
const picks = Array.from(document.querySelectorAll('label.pick'), el => [rect(el).width, rect(el).height]);
const logout = document.getElementById('logout');
return {viewport: window.innerWidth, scroll: root.scrollWidth, body: document.body.scrollWidth, texts: texts,
        picks: picks, logoutRight: logout ? rect(logout).right : null,
        firstPickLeftOfText: rect(document.querySelector('label.pick.best')).right <=
                             rect(document.querySelector('.item-row .text')).left};
"""


@pytest.mark.parametrize("width, phone", [(390, True), (1280, False), (360, True)])
def test_layout_fits_phones_and_desktops(tmp_path, browser, width, phone):
    texts = {"1": "A short one.", "2": "Word " * 120, "3": "Averyveryverylongwordwithoutanyspaces" * 8}
    project = make_project(tmp_path, n_items=8, n_tuples=4, per_tuple=1, cap=1.0, texts=texts)
    password = make_accounts(project, ["ann"])["ann"]
    with ServerProcess(project) as server:
        d = browser
        d.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": 844, "deviceScaleFactor": 2 if phone else 1, "mobile": phone},
        )
        log_in(d, server.url, "ann", password)
        for page_id in ("accept",):
            wait_for(d, page_id)
            probe = d.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
            assert probe[0] <= probe[1], "the consent page scrolls sideways"
        d.find_element(By.ID, "accept").click()
        d.find_element(By.ID, "consent").click()
        wait_for(d, "start").click()
        wait_for(d, "annotate-form")
        shot(d, f"layout-{width}")
        m = d.execute_script(LAYOUT_PROBE)
        assert m["viewport"] == width
        assert m["scroll"] <= m["viewport"] and m["body"] <= m["viewport"], m  # no horizontal scroll
        assert len(m["texts"]) == 4 and min(m["texts"]) >= 200, m  # statements readable
        assert m["logoutRight"] is not None and m["logoutRight"] <= m["viewport"], m
        assert all(w >= 44 and h >= 44 for w, h in m["picks"]), m["picks"]  # big enough to tap
        assert m["firstPickLeftOfText"] is (not phone)  # stacked on phones only
        if phone:  # tap the choices, submit
            d.find_element(By.CSS_SELECTOR, 'label[for="best-2"]').click()
            d.find_element(By.CSS_SELECTOR, 'label[for="worst-3"]').click()
            d.find_element(By.ID, "submit").click()
            until(d, lambda drv: progress_value(drv) == 1)
            assert len(stored(project, "ann")) == 1


def test_skip_and_undo_with_the_keyboard(tmp_path, browser):
    project = make_project(tmp_path, n_items=40, n_tuples=10, per_tuple=1, cap=1.0)
    password = make_accounts(project, ["ann"])["ann"]
    with ServerProcess(project) as server:
        d = browser
        log_in(d, server.url, "ann", password)
        wait_for(d, "accept").click()
        d.find_element(By.ID, "consent").click()
        wait_for(d, "start").click()
        wait_for(d, "annotate-form")
        assert not d.find_elements(By.ID, "undo-skip")
        first, first_items = d.find_element(By.NAME, "tuple_id").get_attribute("value"), current_items(d)
        ready_body(d).send_keys("s")
        until(d, lambda drv: drv.find_element(By.NAME, "tuple_id").get_attribute("value") != first)
        wait_for(d, "undo-skip")
        ready_body(d).send_keys("u")
        until(d, lambda drv: drv.find_element(By.NAME, "tuple_id").get_attribute("value") == first)
        assert current_items(d) == first_items  # the same tuple, items in the same places
        assert not d.find_elements(By.ID, "undo-skip")


def page_text(driver) -> str:
    """Everything on the page a reader could meet: the visible text, the markup (titles, labels, attributes)."""
    return driver.find_element(By.TAG_NAME, "body").text + "\n" + driver.page_source


@pytest.mark.parametrize("construct", ["anti-Muslim bias", "antisemitism"])
def test_a_study_of_another_construct_names_it_on_every_page_and_never_gender(tmp_path, browser, construct):
    gold = [["1", "11", "21", "31", "11", "31"]]
    project = make_project(
        tmp_path, n_items=40, n_tuples=6, per_tuple=1, cap=0.5, gold=gold, gold_rate=0.5, construct=construct
    )
    passwords = make_accounts(project, ["ann"])
    passwords.update(make_accounts(project, ["lead"], admin=True))
    seen: dict[str, str] = {}
    with ServerProcess(project) as server:
        d = browser
        d.get(server.url + "/login")
        wait_for(d, "login")
        seen["login"] = page_text(d)
        log_in(d, server.url, "ann", passwords["ann"])
        wait_for(d, "accept")
        shot(d, f"construct-consent-{construct}")
        seen["consent"] = page_text(d)
        assert construct in d.find_element(By.ID, "construct-warning").text
        d.execute_script("document.getElementById('accept').required = false;")
        d.find_element(By.ID, "consent").click()  # not ticked: refused, the page again
        until(d, lambda drv: drv.find_elements(By.CSS_SELECTOR, ".error"))
        seen["consent refused"] = page_text(d)
        d.find_element(By.ID, "accept").click()
        d.find_element(By.ID, "consent").click()
        wait_for(d, "start")
        seen["instructions"] = page_text(d)
        assert f"most {construct}" in d.find_element(By.TAG_NAME, "main").text
        d.find_element(By.ID, "start").click()
        wait_for(d, "annotate-form")
        shot(d, f"construct-tuple-{construct}")
        seen["tuple"] = page_text(d)
        question = d.find_element(By.ID, "question").text
        assert f"the most {construct}" in question and f"the least {construct}" in question
        d.find_element(By.ID, "best-1").click()  # one choice only, past the page's checks: the server asks for both
        d.execute_script("HTMLFormElement.prototype.submit.call(document.getElementById('annotate-form'))")
        wait_for(d, "error")
        seen["tuple refused"] = page_text(d)
        assert construct in d.find_element(By.ID, "error").text
        # A skip counts toward the cap of 3; then a study tuple and (at --gold-rate 0.5) the gold one.
        for key in ("s", "answer", "answer"):
            form = wait_for(d, "annotate-form")
            body = ready_body(d)
            body.send_keys(*(["s"] if key == "s" else ["1", "w", "\ue007"]))
            until(d, replaced(form))
        wait_for(d, "finished")
        shot(d, f"construct-done-{construct}")
        seen["done"] = page_text(d)
        assert "reached your limit of 3" in d.find_element(By.ID, "finished").text
        assert construct in d.find_element(By.ID, "finished").text
        log_in(d, server.url, "lead", passwords["lead"])
        wait_for(d, "admin")
        shot(d, f"construct-admin-{construct}")
        seen["admin"] = page_text(d)
        admin = d.find_element(By.ID, "admin").text
        assert construct in d.find_element(By.TAG_NAME, "h1").text and construct in admin
        row = next(r for r in d.find_elements(By.CSS_SELECTOR, "table.status tbody tr") if r.text.startswith("ann"))
        assert row.find_element(By.CSS_SELECTOR, "td.seen").text == "3 (100%)"  # 1 study + 1 gold + 1 skipped
        assert "Seen counts every tuple shown" in d.find_element(By.ID, "cap-note").text
    for name, html in seen.items():
        assert "gender" not in html.lower(), f"the {name} page mentions gender"
    out = tmp_path / "export.csv"
    from biaslab.annotate.manage import export

    export(project, out)
    text = out.read_text(encoding="utf-8")
    assert "gender" not in text.lower() and text.splitlines()[0].endswith(",construct")
    assert len(text.splitlines()) == 2 and text.splitlines()[1].endswith("," + construct)  # the study answer


def test_the_default_study_asks_about_gender_bias(tmp_path, browser):
    project = make_project(tmp_path, n_items=8, n_tuples=4, per_tuple=1, cap=1.0)
    password = make_accounts(project, ["ann"])["ann"]
    with ServerProcess(project) as server:
        d = browser
        log_in(d, server.url, "ann", password)
        assert "gender bias" in wait_for(d, "construct-warning").text
        d.find_element(By.ID, "accept").click()
        d.find_element(By.ID, "consent").click()
        wait_for(d, "start").click()
        assert "the most gender bias" in wait_for(d, "question").text
