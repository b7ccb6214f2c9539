"""accelkb.rules

Declarative rules (one SPARQL CONSTRUCT per ``rules/<id>.rq``) run by a generic forward-chaining
engine with PROV-O provenance. Stable API for the advise stage:

- :func:`infer` ``(kb, workload, system, chips=None) -> InferenceReport``: estimate the pair with
  the performance model (estimate node in the estimates graph), run every rule to a fixpoint,
  return findings (bottlenecks with evidence) and ranked candidate optimizations.
- :func:`explain` ``(kb, fact) -> Explanation``: the derivation tree of a derived fact or node
  down to asserted facts and their sources; ``Explanation.render()`` gives readable text.

Lower level: :func:`load_rules` (parse and check rule files, every bad file reported),
:func:`run_fixpoint` (the engine on an :class:`RdflibStore` or :class:`OxigraphStore`),
:func:`run_rules` (all rules over a knowledge base), :func:`estimate_pair` /
:func:`assert_estimate` (perf numbers into the graph).
"""

from .engine import FixpointReport, OxigraphStore, RdflibStore, run_fixpoint
from .estimates import PairEstimate, assert_estimate, estimate_pair
from .explain import Explanation, SourceRef, explain
from .infer import CandidateResult, FindingResult, InferenceReport, infer, run_rules
from .parse import Rule, RuleFileError, load_rules

__all__ = [
    "CandidateResult",
    "Explanation",
    "FindingResult",
    "FixpointReport",
    "InferenceReport",
    "OxigraphStore",
    "PairEstimate",
    "RdflibStore",
    "Rule",
    "RuleFileError",
    "SourceRef",
    "assert_estimate",
    "estimate_pair",
    "explain",
    "infer",
    "load_rules",
    "run_fixpoint",
    "run_rules",
]
