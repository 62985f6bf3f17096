"""The slow tier's browser test of `retrac serve`: Debian's Chromium, headless, driven through
Selenium and the system's chromedriver (no browser download), against a real server on loopback
with the real models. It ingests the demo folder from the Collection page, asks the demo question,
sees progress before the answer, opens a citation, and finds the run in the list.

With SERVE_SCREENSHOTS=FOLDER it also saves the pictures the README shows."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DEMO_DOCS, DEMO_QUESTIONS

pytestmark = pytest.mark.slow
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
ANSWER_WAIT_S = 900  # the demo question on 2 cores, with room for a loaded machine


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


TOKEN = "browser-test-token"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("serve-home")
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RETRAC_")} | {
        "RETRAC_HOME": str(home),
        "RETRAC_SERVE_TOKEN": TOKEN,  # the documented way; without it a new token is printed
    }
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "retrac_local.cli.main", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if process.poll() is not None:
                raise AssertionError(
                    f"retrac serve exited: {process.stdout.read() if process.stdout else ''}"
                ) from None
            time.sleep(0.2)
    print(f"\nretrac serve answered after {time.perf_counter() - started:.1f} s")
    yield url
    process.terminate()
    process.wait(timeout=30)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if CHROMIUM is None or CHROMEDRIVER is None:
        pytest.skip(
            "Chromium or chromedriver is not installed (Debian: apt-get install chromium chromium-driver; "
            "`make chromium` does it)"
        )
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (make setup)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1100,1400",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=CHROMEDRIVER))
    yield driver
    driver.quit()


def _wait(condition: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def _shot(driver: Any, name: str) -> None:
    folder = os.environ.get("SERVE_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(Path(folder) / name))


def test_ingest_ask_watch_and_read_in_a_real_browser(server: str, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    question = json.loads(DEMO_QUESTIONS.read_text().splitlines()[0])["question"]
    texts = lambda css: [e.text for e in browser.find_elements(By.CSS_SELECTOR, css)]  # noqa: E731

    # The printed address, opened once, sets the cookie; without it the page answers 401.
    browser.get(f"{server}/collection")
    assert "token" in browser.page_source
    browser.get(f"{server}/?token={TOKEN}")

    # Collection: ingest the demo folder by its path.
    browser.get(f"{server}/collection")
    browser.find_element(By.ID, "path").send_keys(str(DEMO_DOCS))
    browser.find_element(By.CSS_SELECTOR, "#ingest-path button").click()
    _wait(lambda: any(t.startswith("ingested") for t in texts("#progress li")), 600, "the ingest to finish")
    assert any(f"ingested {len(list(DEMO_DOCS.iterdir()))} file(s)" in t for t in texts("#progress li"))
    browser.get(f"{server}/collection")
    assert "karn-point-lighthouse.md" in browser.find_element(By.ID, "files-table").text
    _shot(browser, "serve-collection.png")

    # Ask: progress lines appear before the answer does.
    browser.get(server)
    browser.find_element(By.ID, "question").send_keys(question)
    asked = time.perf_counter()
    browser.find_element(By.ID, "ask-button").click()
    _wait(lambda: texts("#progress li"), 300, "the first progress line")
    print(f"\nfirst progress line {time.perf_counter() - asked:.1f} s after asking")
    _wait(lambda: any(t.startswith("started") for t in texts("#progress li")), 300, "the run to start")
    print(f"the run started (models loaded, question read) {time.perf_counter() - asked:.1f} s after asking")
    assert not browser.find_elements(By.ID, "answer")
    answer = _wait(lambda: browser.find_elements(By.ID, "answer"), ANSWER_WAIT_S, "the answer")[0]
    assert "1849" in answer.text
    assert len(texts("#progress li")) >= 3 and "job=" in browser.current_url

    # A citation opens its quote, highlighted in its chunk.
    citation = browser.find_element(By.CSS_SELECTOR, "details.citation")
    assert not citation.find_element(By.TAG_NAME, "mark").is_displayed()
    citation.find_element(By.TAG_NAME, "summary").click()
    mark = citation.find_element(By.TAG_NAME, "mark")
    assert mark.is_displayed() and mark.text.strip()
    _shot(browser, "serve-ask.png")

    # Reopening the page picks the run up again; the runs list shows it.
    browser.get(browser.current_url)
    _wait(lambda: browser.find_elements(By.ID, "answer"), 60, "the answer after reopening the page")
    browser.get(f"{server}/runs")
    assert question in browser.find_element(By.ID, "runs").text
