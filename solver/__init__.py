"""accelkb.solver"""

from accelkb.solver.schedule_api import schedule
from accelkb.solver.schedule_model import ScheduleResult, Status

__all__ = ["schedule", "ScheduleResult", "Status"]
