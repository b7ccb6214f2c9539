"""accelkb.serve: the read-only SPARQL 1.1 endpoint and the external SPARQL store.

- :mod:`.server`: ``accelkb serve``, the guarded HTTP front (refusals, limits, timeouts);
- :mod:`.backend`: the Oxigraph server binary run as a child process, replaced when it fails;
- :mod:`.policy`: what the endpoint refuses (updates, ``LOAD``, ``SERVICE``) and why;
- :mod:`.store`: accelkb's graphs in any SPARQL 1.1 server over the protocol (``--store``).

May import :mod:`accelkb.ontology` and :mod:`accelkb.errors`; the rule engine is run by the
command (:mod:`accelkb.commands.serve`), not here.
"""
