"""accelkb.advise: the advise pipeline, a question in, an explained and checked report out.

knowledge base -> :mod:`.baseline` (the layout a competent user would pick) -> rules and
:mod:`.findings` (bottlenecks with evidence) -> :mod:`.parts` (candidate checks, what-ifs,
scaling, before/after by the performance model) -> :mod:`.solver` (the configuration solver's
best layout) and :mod:`.schedule` (collision-free schedules vs dynamic routing) ->
:class:`~accelkb.advise.advice.Advice` (:mod:`.advice`, the pydantic result) -> :mod:`.report`
(Markdown, HTML with :mod:`.figures`, JSON). :mod:`.pipeline` runs the steps; :mod:`.kbfacts`
reads sourced facts and citations.

Exposes :func:`advise`, :data:`GOALS` and :class:`Advice`. May import every other accelkb
package; nothing but :mod:`accelkb.commands` and the top-level API imports it.
"""

from accelkb.advise.advice import Advice
from accelkb.advise.pipeline import GOALS, advise

__all__ = ["GOALS", "Advice", "advise"]
