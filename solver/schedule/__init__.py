"""accelkb.solver.schedule: collision-free collective schedules and the proof of their quality.

- :mod:`.api`: ``schedule(...)``, the pipeline bounds -> constructions -> Z3 -> check;
- :mod:`.model`: the frozen instance, typed outcome and result objects;
- :mod:`.topology`: topology generators and files; :mod:`.cayley`: their regular automorphism
  groups; :mod:`.bounds`: lower bounds on the makespan;
- :mod:`.encoding`: the exact Z3 encoding of non-combining collectives;
- :mod:`.constructions`: constructive schedules (and :mod:`.constructions.allreduce`);
- :mod:`.verify`: the independent checker (no Z3); :mod:`.best`: the search state;
- :mod:`.traffic`: traffic matrices (files, parallel layouts); :mod:`.figure`: link x step SVG.

May import :mod:`accelkb.errors`, :mod:`accelkb.solver.status` and :mod:`accelkb.solver.z3fast`;
never :mod:`accelkb.perf`, the knowledge base or the configuration solver.
"""
