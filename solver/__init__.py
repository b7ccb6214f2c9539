"""accelkb.solver"""

from accelkb.solver.config_api import configure
from accelkb.solver.config_model import ConfigResult
from accelkb.solver.schedule_api import collective_seconds, schedule
from accelkb.solver.schedule_model import ScheduleResult, Status
from accelkb.solver.schedule_traffic import layout_traffic, read_traffic

__all__ = ["configure", "ConfigResult", "collective_seconds", "layout_traffic", "read_traffic",
           "schedule", "ScheduleResult", "Status"]
