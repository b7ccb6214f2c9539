"""Time ``advise`` for each of the example questions (the issue asks for < 30 s on 2 cores).

Usage: ``python bench/advise_bench.py``. Prints one row per question: the time of the whole
advise (knowledge base already loaded and validated, which is timed separately) and per stage.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from accelkb.advise import advise
from accelkb.ontology.kb import KnowledgeBase

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def main() -> None:
    t0 = time.perf_counter()
    kb = KnowledgeBase()
    load = time.perf_counter() - t0
    print(f"knowledge base load + validate: {load:.2f} s (validation cached: see ACCELKB_NO_CACHE)")
    print(f"{'question':40s} {'total s':>8s}  slowest stages")
    for q in json.loads((EXAMPLES / "questions.json").read_text("utf-8")):
        stages: list[tuple[str, float]] = []
        last = [time.perf_counter(), "start"]

        def progress(msg: str, stages: list[tuple[str, float]] = stages, last: list = last) -> None:
            now = time.perf_counter()
            stages.append((str(last[1]), now - float(last[0])))
            last[0], last[1] = now, msg

        t = time.perf_counter()
        a = advise(q["system"], q["workload"], goal=q["goal"], compare=q["compare"], kb=kb,
                   sizes=q.get("sizes", []), workloads=q.get("workloads", []),
                   progress=progress)
        total = time.perf_counter() - t
        stages.append((str(last[1]), time.perf_counter() - float(last[0])))
        slow = sorted(stages, key=lambda s: -s[1])[:3]
        print(f"{q['id']:40s} {total:8.2f}  " + "; ".join(f"{n[:38]} {s:.1f}s" for n, s in slow)
              + f"  [{len(a.recommendations)} candidates]")


if __name__ == "__main__":
    main()
