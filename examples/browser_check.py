"""Open HTML reports in headless Chromium (Selenium + chromedriver) and check what a reader sees.

Checks, per page:

- it loads without a severe console message (a broken resource, a script error);
- every figure has a size and draws something (at least one visible shape or text element);
- no markup shows as text (no ``<svg``, ``<rect``, ``&lt;`` in the page's visible text).

``screenshot`` writes a full-page PNG. Usage: ``python examples/browser_check.py PAGE.html
[--screenshot OUT.png]``; exit 1 when a check fails, 2 when no browser is installed (Debian:
``apt-get install -y chromium chromium-driver``).
"""

from __future__ import annotations

import base64
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_FIGURES_JS = """
return Array.from(document.querySelectorAll('figure svg')).map(function (svg) {
  var box = svg.getBoundingClientRect();
  var drawn = Array.from(svg.querySelectorAll('path, rect, line, polyline, circle, text, use, image'))
    .filter(function (el) { var b = el.getBoundingClientRect(); return b.width > 0 || b.height > 0; });
  var title = svg.querySelector('title');
  return {width: box.width, height: box.height, drawn: drawn.length,
          title: title ? title.textContent : ''};
});
"""
_MARKUP = ("<svg", "</svg", "<rect", "<path", "<text", "<g ", "<figure", "<div", "&lt;", "&gt;")


def chromedriver() -> str | None:
    """Path of chromedriver, or None when it is not installed."""
    return shutil.which("chromedriver")


@contextmanager
def browser() -> Iterator[Any]:
    """A headless Chromium driven by Selenium through the installed chromedriver."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1200,900"):
        opts.add_argument(arg)
    if shutil.which("chromium"):
        opts.binary_location = str(shutil.which("chromium"))
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=opts, service=Service(executable_path=chromedriver()))
    try:
        yield driver
    finally:
        driver.quit()


def check_page(driver: Any, page: Path) -> list[str]:
    """Problems a reader of ``page`` would see (empty: none)."""
    driver.get(page.resolve().as_uri())
    problems = [f"console {e['level']}: {e['message']}" for e in driver.get_log("browser")
                if e["level"] == "SEVERE"]
    figures = driver.execute_script(_FIGURES_JS)
    for i, f in enumerate(figures):
        name = f"figure {i + 1}" + (f" ({f['title']})" if f["title"] else "")
        if f["width"] <= 0 or f["height"] <= 0:
            problems.append(f"{name} has no size ({f['width']} x {f['height']})")
        if f["drawn"] == 0:
            problems.append(f"{name} draws nothing")
    text = driver.execute_script("return document.body.innerText;")
    problems += [f"markup shows as text: {m!r} at ...{text[max(0, text.find(m) - 40):][:80]!r}"
                 for m in _MARKUP if m in text]
    return problems


def figure_count(driver: Any) -> int:
    """Figures on the page loaded last."""
    return len(driver.execute_script(_FIGURES_JS))


def screenshot(driver: Any, out: Path, max_height: int = 2600, scale: float = 0.6) -> None:
    """A PNG of the top of the page loaded last (Chrome DevTools, beyond the viewport): the
    answer, the baseline and its figures, at most ``max_height`` CSS pixels, scaled down so
    that the file stays a few hundred kB."""
    metrics = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})
    size = metrics["cssContentSize"]
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": size["width"],
                 "height": min(size["height"], max_height), "scale": scale}})
    out.write_bytes(base64.b64decode(shot["data"]))


def main(argv: list[str]) -> int:
    if not argv or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    if chromedriver() is None:
        print("browser_check: expected chromedriver on PATH, got none "
              "(Debian: apt-get install -y chromium chromium-driver)", file=sys.stderr)
        return 2
    page = Path(argv[0])
    with browser() as driver:
        problems = check_page(driver, page)
        if "--screenshot" in argv[1:]:
            screenshot(driver, Path(argv[argv.index("--screenshot") + 1]))
    for p in problems:
        print(f"{page}: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
