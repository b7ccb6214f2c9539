"""CLI subcommands. Each module defines ``NAME``, ``HELP``, ``add_arguments(parser)`` and
``run(args) -> int``; :mod:`accelkb.cli` discovers them, so adding a command edits no other file."""
