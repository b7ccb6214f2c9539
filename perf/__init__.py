"""accelkb.perf: the numeric performance model (training, inference, before/after checks).

Entry points: :func:`estimate_training`, :func:`estimate_inference`, :func:`compare_before_after`;
inputs are the spec models below (or knowledge-base names / JSON files).
"""

from .api import estimate_inference, estimate_training
from .checks import BeforeAfter, Candidate, compare_before_after
from .inference import InferenceConfig, InferenceEstimate
from .specs import ChipSpec, MemoryTierSpec, ModelSpec, NetworkLevelSpec, SystemSpec
from .training import TrainingConfig, TrainingEstimate

__all__ = [
    "BeforeAfter",
    "Candidate",
    "ChipSpec",
    "InferenceConfig",
    "InferenceEstimate",
    "MemoryTierSpec",
    "ModelSpec",
    "NetworkLevelSpec",
    "SystemSpec",
    "TrainingConfig",
    "TrainingEstimate",
    "compare_before_after",
    "estimate_inference",
    "estimate_training",
]
