"""Sweep results on disk: a journal while the sweep runs, one CSV or Parquet file at the end.

While a sweep runs, each solved group's rows go into ``FILE.journal/`` as one JSON-lines file,
written to a temporary name and renamed into place, so a killed sweep leaves only whole
groups. A restart reads the journal (and the finished FILE, if any) and solves only the
groups that are missing. At the end every row is written to FILE in the grid's order, again
through a temporary file and a rename, and the journal is removed.

Examples
--------
>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> j = Journal(d / "out.csv", "abc")
>>> j.add("g1", [{"point_id": "p1", "spec_hash": "abc", "status": "OPTIMAL"}])
>>> sorted(j.done())
['p1']
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from accelkb.errors import InputError
from accelkb.files import publish, resolve

FORMATS = (".csv", ".parquet")
#: Columns kept as text whatever they look like (a hash of digits is not a number).
TEXT = frozenset({"spec_hash", "point_id", "model", "system", "phase", "precision", "goal",
                  "whatif", "whatif_value", "status", "reason", "layout", "layout_precision",
                  "interval_basis", "worker"})


def check_target(path: Path) -> None:
    """Refuse an output name whose format is unknown or whose folder does not exist."""
    if path.suffix not in FORMATS:
        raise InputError(f"expected --out ending in .csv or .parquet, got '{path.name}'")
    resolve(path)  # its folder exists, and it is not one


class Journal:
    """The rows solved so far, one file per group, beside the output file."""

    def __init__(self, out: Path, spec_hash: str) -> None:
        self.out = out
        self.dir = out.with_name(out.name + ".journal")
        self.spec_hash = spec_hash
        self.rows: dict[str, dict[str, Any]] = {}
        self._load()

    def _load(self) -> None:
        stale = []
        if self.out.exists():
            stale += [r for r in read_rows(self.out) if r.get("spec_hash") != self.spec_hash]
            self.rows.update({r["point_id"]: r for r in read_rows(self.out)
                              if r.get("spec_hash") == self.spec_hash})
        if self.dir.is_dir():
            for f in sorted(self.dir.glob("*.jsonl")):
                for line in f.read_text("utf-8").splitlines():
                    row = json.loads(line)
                    if row.get("spec_hash") != self.spec_hash:
                        stale.append(row)
                        continue
                    self.rows[row["point_id"]] = row
        if stale:
            raise InputError(f"{self.out} (or its journal) holds rows of another spec (hash "
                             f"{stale[0].get('spec_hash')}, this spec {self.spec_hash}); move it "
                             "away or choose another --out")

    def done(self) -> set[str]:
        """Ids of the points already solved."""
        return set(self.rows)

    def add(self, group: str, rows: list[dict[str, Any]]) -> None:
        """Record one group's rows atomically."""
        self.dir.mkdir(exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.dir, prefix=".tmp-", suffix=".part")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps(r, sort_keys=True) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.dir / f"{group}.jsonl")
        self.rows.update({r["point_id"]: r for r in rows})

    def finish(self, order: list[str], columns: tuple[str, ...]) -> None:
        """Write every row to the output file in ``order`` (point ids) and drop the journal."""
        write_rows(self.out, [self.rows[i] for i in order if i in self.rows], columns)
        shutil.rmtree(self.dir, ignore_errors=True)


def write_rows(path: Path, rows: list[dict[str, Any]], columns: tuple[str, ...]) -> None:
    """Write ``rows`` to ``path`` (.csv or .parquet) whole or not at all
    (:func:`accelkb.files.publish`)."""
    def write(tmp: Path) -> None:
        if path.suffix == ".parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            table = pa.Table.from_pylist([{c: r.get(c) for c in columns} for r in rows],
                                         schema=_schema(columns, rows))
            pq.write_table(table, tmp)
            return
        with open(tmp, "w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=list(columns), extrasaction="ignore")
            w.writeheader()
            for r in rows:
                w.writerow({c: "" if r.get(c) is None else r.get(c) for c in columns})

    publish(path, write)


def _schema(columns: tuple[str, ...], rows: list[dict[str, Any]]) -> Any:
    """A column type per column from its first non-null value (string when all are null)."""
    import pyarrow as pa

    fields = []
    for c in columns:
        values = [r[c] for r in rows if r.get(c) is not None]
        if c in TEXT or any(isinstance(v, str) for v in values) or not values:
            kind = pa.string()
        elif all(isinstance(v, bool) for v in values):
            kind = pa.bool_()
        elif all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            kind = pa.int64()
        else:
            kind = pa.float64()
        fields.append(pa.field(c, kind))
    return pa.schema(fields)


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a results file, with numbers as numbers and empty cells as None.

    Raises
    ------
    InputError
        A file that is not a results file.
    """
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        try:
            table = list(pq.read_table(path).to_pylist())
        except Exception as exc:  # pyarrow.ArrowInvalid and friends
            raise InputError(f"cannot read {path} as Parquet: {exc}") from None
        return _checked(path, table)
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            rows = [{k: v or None if k in TEXT else _cell(v) for k, v in r.items()}
                    for r in csv.DictReader(fh)]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"cannot read {path} as CSV: {exc}") from None
    return _checked(path, rows)


#: The solver outcomes a results row may hold.
STATUSES = ("OPTIMAL", "FEASIBLE", "UNSATISFIABLE", "UNKNOWN", "ERROR")


def _checked(path: Path, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` if they are a sweep's (a point_id column)."""
    if rows and "point_id" not in rows[0]:
        raise InputError(f"{path}: expected a sweep results file (a point_id column)")
    return rows


def check_outcomes(path: Path, rows: list[dict[str, Any]]) -> None:
    """Refuse rows whose status is no solver outcome: ``sweep --summary`` summed a row saying
    BANANA as '1 BANANA' (``query --results`` says it through the SHACL shapes instead)."""
    odd = sorted({str(r.get("status")) for r in rows} - set(STATUSES))
    if odd:
        raise InputError(f"{path}: expected one solver outcome per row: "
                         f"{', '.join(STATUSES)}; got {', '.join(odd)}")


def _cell(v: str | None) -> Any:
    if v is None or v == "":
        return None
    for kind in (int, float):
        try:
            return kind(v)
        except ValueError:
            pass
    return v
