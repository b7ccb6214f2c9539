"""Regenerate the example reports of the three questions accelkb exists for.

Usage: ``python examples/make_reports.py [OUTDIR]`` (default: examples/reports). Writes
``<id>.md``, ``<id>.html`` and ``<id>.json`` per question in examples/questions.json.
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
                   compare=list(q["compare"]), question=str(q["question"]))  # type: ignore[arg-type]
        for fmt in ("md", "html", "json"):
            write_atomically(str(out / f"{q['id']}.{fmt}"), render(a, fmt))
        print(f"{q['id']}: {a.seconds:.1f} s, {len(a.findings)} bottlenecks, "
              f"{sum(r.status == 'recommended' for r in a.recommendations)} recommended")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
