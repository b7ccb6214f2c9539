"""Golden results of the example queries: compute, store, compare.

``python tests/golden_rows.py`` rewrites tests/golden/*.json from the current knowledge; review the
diff before committing it (a changed golden is a changed answer).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rdflib.query import Result

TESTS = Path(__file__).resolve().parent
EXAMPLES = TESTS.parent / "examples" / "queries"
GOLDEN = TESTS / "golden"


def rows_of(result: Result) -> list[dict[str, str]] | bool | list[list[str]]:
    """A JSON-friendly, order-stable form of a SELECT (rows), ASK (bool) or CONSTRUCT (triples)."""
    if result.type == "ASK":
        return bool(result.askAnswer)
    if result.type in ("CONSTRUCT", "DESCRIBE"):
        assert result.graph is not None
        return sorted([str(s), str(p), str(o)] for s, p, o in result.graph)
    names = [str(v) for v in result.vars or []]
    return [{n: ("" if row[i] is None else str(row[i])) for i, n in enumerate(names)}  # type: ignore[index]
            for row in result]


def main() -> int:
    from accelkb.ontology.kb import KnowledgeBase

    kb = KnowledgeBase()
    GOLDEN.mkdir(exist_ok=True)
    for rq in sorted(EXAMPLES.glob("*.rq")):
        data = rows_of(kb.query(rq.read_text(encoding="utf-8")))
        (GOLDEN / f"{rq.stem}.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print(f"{rq.stem}: {len(data) if isinstance(data, list) else data}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
