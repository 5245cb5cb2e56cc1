"""Debian's headless Chromium for the browser tests, driven by Selenium."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
# --disable-background-networking and --disable-component-update keep Chromium from
# reaching out by itself; as root it runs only without its own sandbox.
FLAGS = ["--headless=new", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--window-size=1280,1400"]


@contextmanager
def chromium() -> Iterator[WebDriver]:
    """A fresh headless Chromium (its own profile, so its own cookies) logging the
    console and the network."""
    missing = [str(path) for path in (CHROMIUM, CHROMEDRIVER) if not path.exists()]
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        missing.append("the selenium package")
    if missing:
        pytest.fail(f"browser tests need {', '.join(missing)}: run `bash setup.sh test`",
                    pytrace=False)
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS + (["--no-sandbox"] if os.geteuid() == 0 else []):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.implicitly_wait(0)
    try:
        yield driver
    finally:
        driver.quit()
