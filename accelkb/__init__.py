"""accelkb: a declarative rule-and-constraint knowledge system for AI accelerator systems."""

__version__ = "0.1.0"
