"""Browser fixtures: one headless Chromium (Debian's, driven by Playwright) per test module."""

import pytest
from playwright.sync_api import sync_playwright

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--autoplay-policy=no-user-gesture-required",
]


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def log_in(browser, base_url, name, password):
    """A new browser context logged in as ``name``; returns (context, page) on the home page."""
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{base_url}/accounts/login/")
    page.fill("#id_username", name)
    page.fill("#id_password", password)
    page.keyboard.press("Enter")
    page.wait_for_url(f"{base_url}/")
    return context, page


def click_within(locator, x_fraction, y_fraction=0.5):
    """Click ``locator`` at fractions of its width and height, through the locator: Playwright waits
    until the element is stable and clicks where it is then. A click at page coordinates read a
    moment before missed the life-log track in a full run (the loading video moved it down)."""
    box = locator.bounding_box()
    locator.click(position={"x": box["width"] * x_fraction, "y": box["height"] * y_fraction})


# The page's player, from its module (static/js/lifelog.js exports it), as ``lifelog`` in the page.
READ_THE_PLAYER = (
    "async () => { window.lifelog = await import(document.querySelector('script[src*=\"js/lifelog.js\"]').src); }"
)
