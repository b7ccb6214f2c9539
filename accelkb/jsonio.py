"""JSON the way accelkb reads and writes it: strict, so bad input is an error, not a surprise.

Python's ``json`` accepts ``NaN``, ``Infinity`` and integers of any length (one of 5,000 digits
raised a ValueError traceback on conversion), and writes NaN back out, which is not JSON.

>>> strict_json('{"links": 2}', "t.json")
{'links': 2}
>>> strict_json('{"links": Infinity}', "t.json")
Traceback (most recent call last):
...
accelkb.errors.InputError: t.json: expected JSON numbers, got Infinity (not JSON)
"""

from __future__ import annotations

import json
from typing import Any

from accelkb.errors import InputError

#: Longest integer accepted, in digits (no quantity accelkb reads needs more than 20).
MAX_INT_DIGITS = 30


def strict_json(text: str, where: str, expected: str = "JSON") -> Any:
    """Parse ``text`` as JSON: no NaN or Infinity, no integers longer than 30 digits, and nesting
    no deeper than Python's parser handles; ``where`` names the input and ``expected`` what it
    should be (``"a node-link JSON topology file"``) in the error.

    Raises
    ------
    InputError
        What was expected, what was got, and where.
    """
    def constant(name: str) -> Any:
        raise InputError(f"{where}: expected JSON numbers, got {name} (not JSON)")

    def integer(digits: str) -> int:
        if len(digits.lstrip("-")) > MAX_INT_DIGITS:
            raise InputError(f"{where}: expected an integer of at most {MAX_INT_DIGITS} digits, "
                             f"got one of {len(digits.lstrip('-'))}")
        return int(digits)

    try:
        return json.loads(text, parse_constant=constant, parse_int=integer)
    except RecursionError:
        raise InputError(f"{where}: expected JSON nested a few levels deep, got it nested too "
                         "deep to read") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"expected {expected}, got a JSON syntax error at line {exc.lineno}, "
                         f"column {exc.colno} ({exc.msg}), in {where}") from None


def dumps_strict(value: Any, **kwargs: Any) -> str:
    """``json.dumps`` that refuses NaN and infinities instead of writing them (not JSON)."""
    return json.dumps(value, allow_nan=False, **kwargs)
