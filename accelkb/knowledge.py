"""``accelkb.KnowledgeBase``: the knowledge base with its reasoning entry points.

:class:`accelkb.ontology.kb.KnowledgeBase` holds and queries the knowledge; the rule engine
(:mod:`accelkb.rules`) reads it. This subclass, the one users get from ``accelkb``, adds
:meth:`~KnowledgeBase.infer` and :meth:`~KnowledgeBase.explain`, which delegate to the rule
engine, so the ontology package never imports the rules that read it.

>>> import accelkb
>>> issubclass(accelkb.KnowledgeBase, accelkb.ontology.kb.KnowledgeBase)
True
"""

from __future__ import annotations

from typing import Any

from accelkb.ontology import kb as _kb
from accelkb.rules.explain import Explanation, explain
from accelkb.rules.infer import InferenceReport, infer


class KnowledgeBase(_kb.KnowledgeBase):
    """Bundled knowledge plus the user's files (see :class:`accelkb.ontology.kb.KnowledgeBase`),
    with the rule engine's entry points as methods."""

    def infer(self, workload: str, system: str, chips: int | None = None,
              **options: Any) -> InferenceReport:
        """Estimate ``workload`` on ``system`` and run the rules; see :func:`accelkb.rules.infer`."""
        return infer(self, workload, system, chips, **options)

    def explain(self, fact: Any) -> Explanation:
        """Derivation tree of a derived fact down to sourced facts; see :func:`accelkb.rules.explain`."""
        return explain(self, fact)
