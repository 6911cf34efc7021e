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


# How the verify page's followers are corrected while the leader plays (verify/player.js
# ``syncFollowers``): a small drift by the follower's rate, a large one by a seek. The log counts the
# leader's seeks too: a loop back to the clip's start seeks every follower, which is not this.
_WATCH_FOLLOWERS = """(selector) => {
  const [lead, ...followers] = document.querySelectorAll(selector);
  const rate = Object.getOwnPropertyDescriptor(HTMLMediaElement.prototype, 'playbackRate');
  window.followerLog = { rates: [], seeks: 0, leadSeeks: 0 };
  lead.addEventListener('seeking', () => { window.followerLog.leadSeeks += 1; });
  for (const f of followers) {
    Object.defineProperty(f, 'playbackRate', {
      configurable: true,
      get() { return rate.get.call(this); },
      set(v) { window.followerLog.rates.push(v / lead.playbackRate); rate.set.call(this, v); },
    });
    f.addEventListener('seeking', () => { window.followerLog.seeks += 1; });
  }
}"""
_DISPLACE = """([selector, offset, by]) => {
  const [lead, f] = document.querySelectorAll(selector);
  window.followerLog = { ...window.followerLog, rates: [], seeks: 0, leadSeeks: 0 };
  f.currentTime = lead.currentTime + offset + by;
}"""
_DRIFT = """([selector, offsets]) => {
  const t = [...document.querySelectorAll(selector)].map((v) => v.currentTime);
  return Math.max(...t.slice(1).map((x, i) => Math.abs(x - (t[0] + offsets[i + 1]))));
}"""


def assert_followers_corrected(
    page,
    offsets: list[float],
    *,
    videos: str = "#players video",
    seek_bound_s: float = 0.25,
    small_s: float = 0.15,
    frame_s: float = 1 / 25,
):
    """While a synced player's leader plays (the first of the ``videos`` selector's elements: the
    verify page's by default, a study's with ``"#widget .study-views video"``), its first follower
    (``offsets``: seconds of each player's sync offset, the leader's 0 first) is put 1 s behind, then
    ``small_s`` behind, then ``small_s`` ahead (within the page's seek bound ``seek_bound_s``: 0.25 s
    on the verify page, 0.1 s in a study); the page must seek it back (a seek of its own after ours, the leader not sought meanwhile:
    else it is put off again) to within ``seek_bound_s`` plus a frame, then speed it up (a rate above
    the leader's), then slow it down (below). Waits, not timed samples: how closely decoders keep
    pace on a busy 2-core machine is the machine's (0.2 to 0.3 s of drift seen in a fresh-clone run
    with three), what the page does about it is the page's. Raises Playwright's TimeoutError (15 s
    a wait) when it does not, AssertionError when the leader is not playing or loops every time."""
    assert page.evaluate("(selector) => !document.querySelector(selector).paused", videos)
    page.evaluate(_WATCH_FOLLOWERS, videos)
    for _ in range(3):
        page.evaluate(_DISPLACE, [videos, offsets[1], -1.0])
        page.wait_for_function(
            f"(arg) => window.followerLog.leadSeeks > 0 || "
            f"(window.followerLog.seeks >= 2 && ({_DRIFT})(arg) <= {seek_bound_s + frame_s})",
            arg=[videos, offsets],
            timeout=15_000,
        )
        if page.evaluate("() => window.followerLog.leadSeeks") == 0:
            break
    else:
        raise AssertionError("3 tries: each time the leader was sought (a loop) before the follower was sought back")
    page.evaluate(_DISPLACE, [videos, offsets[1], -small_s])
    page.wait_for_function("() => window.followerLog.rates.some((r) => r > 1.01)", timeout=15_000)
    page.evaluate(_DISPLACE, [videos, offsets[1], small_s])
    page.wait_for_function("() => window.followerLog.rates.some((r) => r < 0.99)", timeout=15_000)
