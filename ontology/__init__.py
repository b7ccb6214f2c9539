"""accelkb.ontology: the knowledge and the way it is loaded.

Turtle schema (``schema/``), SHACL shapes (``shapes/``) and sourced facts (``data/``) shipped as
package data; :mod:`.loader` reads and validates them with the user's files (all or nothing);
:mod:`.kb` is the :class:`~accelkb.ontology.kb.KnowledgeBase` (named graphs, SPARQL, names);
:mod:`.namespace` is the closed namespace generated from the schema (:mod:`.gen_namespace`);
:mod:`.results` renders query results; :mod:`.validation_cache` keeps SHACL results between runs.

May import :mod:`accelkb.errors` only: every other package reads the knowledge through this one.
"""
