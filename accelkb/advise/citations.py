"""Sources cited by number: each source listed once per report, derivations cite ``[n]``.

While the report is assembled, derivation lines carry a marker per source (:func:`marker`);
once the report's source list is known, :func:`numbered` replaces each marker by the source's
number in that list (1-based, the order of ``Advice.sources``) and writes the numbers of one
bracket sorted, each once. A source that the list does not hold (no title in the knowledge
base) keeps its title. Where in a source a fact is stated stays in the knowledge base
(``accelkb explain`` prints it).

Examples
--------
>>> from accelkb.rules.explain import SourceRef
>>> refs = [SourceRef(iri=f"http://x/s{i}", title=f"Paper {i}") for i in (1, 2, 3)]
>>> line = "a fact  [" + "; ".join(marker(r) for r in refs) + "]"
>>> numbered(line, {"http://x/s1": 7, "http://x/s2": 3})
'a fact  [3, 7; Paper 3]'
>>> marker_iris([line])
['http://x/s1', 'http://x/s2', 'http://x/s3']
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from accelkb.rules.explain import SourceRef

_MARK = re.compile(r"\x02([^\x1f\x03]*)\x1f([^\x03]*)\x03")
_BRACKET = re.compile(r"\[([^\[\]]*\x02[^\[\]]*)\]")


def marker(src: SourceRef) -> str:
    """A placeholder for ``src`` in a derivation line (control characters no text contains)."""
    return f"\x02{src.iri}\x1f{src.title}\x03"


def marker_iris(lines: Iterable[str]) -> list[str]:
    """The source IRIs the markers in ``lines`` name, in order of first appearance."""
    return list(dict.fromkeys(m.group(1) for line in lines for m in _MARK.finditer(line)))


def numbered(line: str, numbers: dict[str, int]) -> str:
    """``line`` with each bracket of markers replaced by its sources' numbers, then the titles
    of sources without one."""
    def bracket(m: re.Match[str]) -> str:
        found = _MARK.findall(m.group(1))
        nums = sorted({numbers[iri] for iri, _ in found if iri in numbers})
        titles = list(dict.fromkeys(title for iri, title in found if iri not in numbers))
        return "[" + "; ".join(x for x in (", ".join(map(str, nums)), *titles) if x) + "]"
    return _BRACKET.sub(bracket, line)
