"""``accelkb query``: run SPARQL over the knowledge base.

SELECT and ASK print as a table, SPARQL 1.1 results JSON or CSV; CONSTRUCT and DESCRIBE print
Turtle (``--format table``), JSON-LD (``--format json``) or N-Triples (``--format csv``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from accelkb.commands._knowledge import add_data_option, add_results_option, load_results
from accelkb.commands._limit import TimeLimitReached, seconds_option, wall_clock_limit
from accelkb.errors import EXIT_NO_ANSWER, EXIT_OK, InputError
from accelkb.ontology.kb import KnowledgeBase
from accelkb.ontology.results import render_result

NAME = "query"
HELP = "run a SPARQL query (inline or --file) over the knowledge base"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("sparql", nargs="?", help="the query text (or use --file)")
    parser.add_argument("--file", "-f", help="read the query from this .rq file")
    parser.add_argument("--format", choices=("table", "json", "csv"), default="table",
                        help="output format (json = SPARQL 1.1 Query Results JSON)")
    add_data_option(parser)
    add_results_option(parser)
    parser.add_argument("--store", metavar="URL",
                        help="sparql+http://host:port/...: write the knowledge to that SPARQL 1.1 "
                        "server and run the query there")
    parser.add_argument("--no-write", action="store_true",
                        help="with --store: query what the server already holds")
    parser.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                        help="give up after this long, loading the knowledge included (exit 3, "
                        "no answer); default 60")


def _query_text(args: argparse.Namespace) -> str:
    if args.sparql and args.file:
        raise InputError("expected either a query text or --file, got both")
    if args.file:
        try:
            return Path(args.file).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise InputError(f"{args.file}: no such query file") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"{args.file}: cannot read query: {exc}") from None
    if not args.sparql:
        raise InputError("expected a SPARQL query text or --file FILE.rq, got neither")
    return str(args.sparql)


def _refuse_what_a_local_query_does_not_run(text: str) -> None:
    """The endpoint's refusals (:func:`accelkb.serve.policy.check_query`) as bad input: an
    Update (the bundled knowledge is read-only) and ``SERVICE``, which rdflib would run by
    fetching any URL, ``file://`` included.

    Raises
    ------
    InputError
        For an Update, a ``SERVICE`` pattern, or nesting deeper than the engine survives.
    """
    from accelkb.serve.policy import Refusal, check_query

    try:
        check_query(text)
    except Refusal as exc:
        words = exc.message.replace("this SPARQL endpoint is", "a local accelkb query is")
        raise InputError(words.replace("this server", "accelkb")) from None


def run(args: argparse.Namespace) -> int:
    text = _query_text(args)
    if args.no_write and not args.store:
        raise InputError("expected --no-write together with --store URL, got it alone")
    if args.results and args.store:
        raise InputError("expected --results without --store (sweep rows are queried in the "
                         "local knowledge base), got both")
    seconds = seconds_option(args.timeout, "--timeout")
    try:
        with wall_clock_limit(seconds):
            if args.store:
                from accelkb.serve.store import query_store

                result = query_store(args.store, text, args.data, write=not args.no_write)
            else:
                _refuse_what_a_local_query_does_not_run(text)
                kb = KnowledgeBase(args.data)
                load_results(kb, args.results)
                result = kb.query(text)
            rendered = render_result(result, args.format)  # lazy results evaluate here
    except TimeLimitReached as exc:
        sys.stderr.write(f"accelkb query: {exc} (--timeout {seconds:g}); the query may need "
                         "a longer limit, or a LIMIT\n")
        return EXIT_NO_ANSWER
    sys.stdout.write(rendered)
    return EXIT_OK
