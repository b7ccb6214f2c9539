"""accelkb: a declarative rule-and-constraint knowledge system for AI accelerator systems.

The few entry points users need, imported lazily (``import accelkb`` stays cheap):

>>> import accelkb
>>> sorted(accelkb.__all__)[:3]
['KnowledgeBase', 'advise', 'configure']
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "KnowledgeBase": "accelkb.ontology.kb",
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


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'accelkb' has no attribute {name!r}")
