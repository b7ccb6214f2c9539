"""Issue 27: the HTML reports as a reader's browser shows them (headless Chromium, Selenium).

The page loads without console errors, every figure has a size and draws something, and no
markup shows as text. `.ci/run` installs Chromium and chromedriver when they are missing.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from accelkb.advise import advise
from accelkb.advise.report import render
from accelkb.ontology.kb import KnowledgeBase

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
_spec = importlib.util.spec_from_file_location("browser_check", EXAMPLES / "browser_check.py")
assert _spec and _spec.loader
browser_check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(browser_check)

pytestmark = pytest.mark.skipif(browser_check.chromedriver() is None,
                                reason="chromedriver not installed (apt-get install -y chromium "
                                "chromium-driver; .ci/run does it)")
QUESTIONS = json.loads((EXAMPLES / "questions.json").read_text("utf-8"))


@pytest.fixture(scope="module")
def driver():  # type: ignore[no-untyped-def]
    with browser_check.browser() as d:
        yield d


@pytest.mark.parametrize("qid", [q["id"] for q in QUESTIONS])
def test_shipped_report_reads_right_in_a_browser(driver, qid: str) -> None:  # type: ignore[no-untyped-def]
    page = EXAMPLES / "reports" / f"{qid}.html"
    assert browser_check.check_page(driver, page) == []
    assert browser_check.figure_count(driver) >= 2  # the time breakdown and memory per tier
    assert (EXAMPLES / "reports" / f"{qid}.png").stat().st_size > 10_000


def test_fresh_report_and_checker_catch_markup_as_text(driver, kb: KnowledgeBase,  # type: ignore[no-untyped-def]
                                                       tmp_path: Path) -> None:
    a = advise("groq-576", "llama2-70b-inference", kb=kb)
    good = tmp_path / "q3.html"
    good.write_text(render(a, "html"), "utf-8")
    assert browser_check.check_page(driver, good) == []
    shot = tmp_path / "q3.png"
    browser_check.screenshot(driver, shot)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The failure this test exists for: a figure's markup escaped into paragraphs, and a figure
    # that has no size. The checker must see both.
    page = render(a, "html")
    broken = page.replace("<figure><svg", "<figure><p>&lt;svg width='0'&gt;</p><svg width='0' "
                          "height='0'", 1)
    bad = tmp_path / "bad.html"
    bad.write_text(broken, "utf-8")
    problems = browser_check.check_page(driver, bad)
    assert any("markup shows as text" in p for p in problems), problems
    assert any("has no size" in p for p in problems), problems
