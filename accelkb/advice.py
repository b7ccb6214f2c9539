"""Kept so that ``accelkb.advice.Advice`` still works: the model lives in :mod:`accelkb.advise.advice`."""

from accelkb.advise.advice import (
    Advice,
    Comparison,
    Estimate,
    Fact,
    Finding,
    Recommendation,
    ScalingPoint,
    ScheduleSummary,
    SourceRef,
    WhatIf,
)

__all__ = ["Advice", "Comparison", "Estimate", "Fact", "Finding", "Recommendation", "ScalingPoint",
           "ScheduleSummary", "SourceRef", "WhatIf"]
