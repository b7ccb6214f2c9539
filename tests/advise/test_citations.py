"""Issue 27: sources listed once per report, cited by number in derivations and facts."""

from __future__ import annotations

import re

from accelkb.advise import advise
from accelkb.advise.report import render
from accelkb.ontology.kb import KnowledgeBase


def test_derivations_cite_the_report_sources_by_number(kb: KnowledgeBase) -> None:
    a = advise("groq-576", "llama2-70b-inference", kb=kb)
    md = render(a, "md")
    assert "\x02" not in md and "\x03" not in md  # no marker left behind
    assert "+4 more" not in md and "more]" not in md  # every source cited, by number
    lines = [ln for f in a.findings for ln in f.derivation]
    cited = {int(n) for ln in lines for group in re.findall(r"\[([\d, ]+)\]", ln)
             for n in group.split(",")}
    assert cited and max(cited) <= len(a.sources)
    # The list holds each source once, numbered in order, and every cited number is in it.
    listed = re.findall(r"^- \[(\d+)\] ", md, flags=re.M)
    assert listed == [str(i) for i in range(1, len(a.sources) + 1)]
    assert len({s.iri for s in a.sources}) == len(a.sources)
    # A source's title appears once in the report: in the list, not on every derivation line.
    for s in a.sources:
        assert md.count(s.title) == 1, s.title
