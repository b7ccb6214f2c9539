"""Output files never harm what their name points to, and a write the file system refuses is
the user's to fix (exit 2), not "a bug in accelkb" (exit 70). From an audit: ``--out`` renamed
a regular file over a device, a FIFO or a symbolic link (as root, ``--out /dev/full`` replaced
the machine's /dev/full), and a read-only or full disk exited 70."""

from __future__ import annotations

import errno
import os
import stat
import threading
from pathlib import Path

import pytest

from accelkb.cli import main
from accelkb.errors import InputError
from accelkb.files import publish

SCHEDULE = ["schedule", "--topology", "ring:4", "--collective", "allgather"]


def test_a_symbolic_link_is_followed_and_kept(tmp_path: Path) -> None:
    (tmp_path / "run-42.json").write_text("old")
    link = tmp_path / "latest.json"
    link.symlink_to("run-42.json")
    assert main([*SCHEDULE, "--out", str(link)]) == 0
    assert link.is_symlink()
    assert '"collective": "allgather"' in (tmp_path / "run-42.json").read_text()


def test_a_device_is_written_through_not_replaced() -> None:
    null = Path("/dev/null")
    before = null.stat()
    assert stat.S_ISCHR(before.st_mode)
    publish(null, lambda p: p.write_text("discarded"))
    after = null.stat()
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev


def test_a_fifo_is_written_through(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    publish(fifo, lambda p: p.write_text("through the pipe"))
    reader.join(timeout=10)
    assert got == ["through the pipe"]
    assert stat.S_ISFIFO(fifo.stat().st_mode)


@pytest.mark.parametrize("code", [errno.EROFS, errno.ENOSPC, errno.EACCES])
def test_a_refused_write_is_bad_input_and_leaves_nothing(tmp_path: Path, code: int) -> None:
    def refused(p: Path) -> None:
        p.write_text("partial")
        raise OSError(code, os.strerror(code))

    with pytest.raises(InputError, match=rf"--out .*x\.json: cannot write it: "
                       rf"{os.strerror(code)}"):
        publish(tmp_path / "x.json", refused)
    assert list(tmp_path.iterdir()) == []


def test_the_cli_exits_2_where_the_file_system_refuses(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    def full(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "replace", full)
    assert main([*SCHEDULE, "--out", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err
    assert "No space left on device" in err and "bug" not in err


def test_sweep_checks_its_figure_before_it_runs(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text("name: x\nmodels: [llama2-7b]\nsystems: [dgx-h100]\nphases: [inference]\n")
    code = main(["sweep", str(spec), "--out", str(tmp_path / "r.csv"), "--figure",
                 str(tmp_path / "missing" / "p.svg"), "--no-progress"])
    assert code == 2 and "--figure" in capsys.readouterr().err
    assert not (tmp_path / "r.csv").exists()
