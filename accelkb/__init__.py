"""accelkb: a declarative rule-and-constraint knowledge system for AI accelerator systems.

The few entry points users need, imported lazily (``import accelkb`` stays cheap):

>>> import accelkb
>>> sorted(accelkb.__all__)[:3]
['KnowledgeBase', 'advise', 'configure']

The packages, each importing only those listed before it (``errors`` is shared by all):

- :mod:`accelkb.ontology`: the knowledge (schema, shapes, sourced facts) and its loader;
- :mod:`accelkb.perf`: the performance model (:mod:`~accelkb.perf.netsim` simulators and
  :mod:`~accelkb.perf.validation` beside it; the simulators use the schedule solver's topologies);
- :mod:`accelkb.solver`: the Z3 solvers (:mod:`~accelkb.solver.schedule` imports no perf,
  :mod:`~accelkb.solver.config` imports perf);
- :mod:`accelkb.rules`: the declarative rules and their engine (reads ontology and perf);
- :mod:`accelkb.advise`, :mod:`accelkb.serve`: the advise pipeline and the SPARQL endpoint;
- :mod:`accelkb.cli` and :mod:`accelkb.commands`: the command line, thin over the above.

``accelkb.advise`` is the function even after its package has been imported
(``from accelkb.advise.report import render`` imports modules of the package by full name).
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "KnowledgeBase": "accelkb.knowledge",
    "advise": "accelkb.advise",
    "estimate_training": "accelkb.perf",
    "estimate_inference": "accelkb.perf",
    "compare_before_after": "accelkb.perf",
    "schedule": "accelkb.solver",
    "configure": "accelkb.solver",
    "infer": "accelkb.rules",
    "explain": "accelkb.rules",
}
__all__ = sorted(_EXPORTS)


class _Api(types.ModuleType):
    """The package module: an entry point keeps its name when a subpackage of that name loads.

    The import system binds a loaded subpackage on its parent (``accelkb.advise`` = the package);
    that would hide the ``advise`` function after the first report. The binding is skipped, so
    the name resolves through :func:`__getattr__` to the entry point; ``sys.modules`` still holds
    the package for ``from accelkb.advise.x import y``.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _EXPORTS and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'accelkb' has no attribute {name!r}")


sys.modules[__name__].__class__ = _Api
