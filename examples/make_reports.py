"""Regenerate the example reports of the three questions accelkb exists for.

Usage: ``python examples/make_reports.py [OUTDIR]`` (default: examples/reports). Writes
``<id>.md``, ``<id>.html`` and ``<id>.json`` per question in examples/questions.json, and
``<id>.png``, the top of the HTML page as headless Chromium draws it, after checking the page
with :mod:`browser_check` (skipped, with a message, where chromedriver is not installed).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from accelkb.advise import advise
from accelkb.advise.report import render
from accelkb.commands._output import write_atomically

HERE = Path(__file__).resolve().parent


def questions() -> list[dict[str, object]]:
    return json.loads((HERE / "questions.json").read_text(encoding="utf-8"))


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else HERE / "reports"
    out.mkdir(parents=True, exist_ok=True)
    for q in questions():
        a = advise(str(q["system"]), str(q["workload"]), goal=str(q["goal"]),
                   compare=list(q["compare"]), question=str(q["question"]),  # type: ignore[arg-type]
                   sizes=list(q.get("sizes", [])),  # type: ignore[arg-type]
                   workloads=list(q.get("workloads", [])))  # type: ignore[arg-type]
        for fmt in ("md", "html", "json"):
            write_atomically(str(out / f"{q['id']}.{fmt}"), render(a, fmt))
        print(f"{q['id']}: {a.seconds:.1f} s, {len(a.findings)} bottlenecks, "
              f"{sum(r.status == 'recommended' for r in a.recommendations)} recommended")
    return _screenshots(out, [str(q["id"]) for q in questions()])


def _screenshots(out: Path, ids: list[str]) -> int:
    sys.path.insert(0, str(HERE))
    import browser_check

    if browser_check.chromedriver() is None:
        print("no screenshots: chromedriver is not installed", file=sys.stderr)
        return 0
    failed = 0
    with browser_check.browser() as driver:
        for qid in ids:
            problems = browser_check.check_page(driver, out / f"{qid}.html")
            for p in problems:
                print(f"{qid}.html: {p}", file=sys.stderr)
            failed += bool(problems)
            browser_check.screenshot(driver, out / f"{qid}.png")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
