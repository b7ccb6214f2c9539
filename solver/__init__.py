"""accelkb.solver"""

from accelkb.solver.schedule_api import collective_seconds, schedule
from accelkb.solver.schedule_model import ScheduleResult, Status

__all__ = ["collective_seconds", "schedule", "ScheduleResult", "Status"]
