"""Every `checkweigh` command that opened a SQLite file checkpoints its write-ahead log on the
way out: a copy of the ``.db`` file alone holds the last run, complete, and no ``-wal`` sidecar
is left with data in it."""

from __future__ import annotations

import json
import shutil
import signal
import time
from pathlib import Path

from checkweigh.store import RunStatus, Store
from support import cli_process as cli
from support.recorded_suite import standard_cases, write_suite

from .test_interrupt import AGENT, SUITE


def _sidecar_empty(db: Path) -> None:
    wal = db.with_name(db.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0, f"{wal} holds {wal.stat().st_size} bytes"


def _copy_alone(db: Path, folder: Path) -> Store:
    """The .db file copied without its sidecars, opened as a store."""
    folder.mkdir()
    shutil.copyfile(db, folder / db.name)
    assert not (folder / f"{db.name}-wal").exists()
    return Store(f"sqlite:///{folder / db.name}")


def test_a_finished_run_is_whole_in_the_db_file_alone(tmp_path: Path) -> None:
    cases = [{**c, "id": f"{c['id']}-{i}"} for i in range(40) for c in standard_cases()]
    suite = write_suite(tmp_path / "s", cases, gate=0.9)  # 240 executions
    db = tmp_path / "runs.db"
    done = cli.run(["run", str(suite), "--db", f"sqlite:///{db}", "-q"], tmp_path)
    assert done.code == 1, done.out + done.err  # the gate fails: a normal end, exit 1
    _sidecar_empty(db)
    copy = _copy_alone(db, tmp_path / "copy")
    info = copy.get_run("latest")
    assert info.status is RunStatus.COMPLETE
    assert info.executions == 240
    assert info.summary is not None
    assert info.summary.executions == 240
    assert len(list(copy.iter_results(info.id))) == 240
    copy.close()

    # a command that only reads (show, runs, compare) closes the file the same way
    shown = cli.run(["show", "latest", "--db", f"sqlite:///{db}"], tmp_path)
    assert shown.code == 1, shown.err
    _sidecar_empty(db)


def test_an_interrupted_run_is_whole_in_the_db_file_alone(tmp_path: Path) -> None:
    (tmp_path / "slow_agent.py").write_text(AGENT)
    (tmp_path / "suite.yaml").write_text(SUITE)
    (tmp_path / "cases.jsonl").write_text(
        "".join(json.dumps({"id": f"c{i:02d}", "input": {"n": i}}) + "\n" for i in range(40))
    )
    db = tmp_path / "runs.db"
    proc = cli.start(["run", "suite.yaml", "--db", f"sqlite:///{db}", "-q"], tmp_path)
    cli.wait_for_stored(db, 3, proc, timeout=60)
    began = time.monotonic()
    proc.send_signal(signal.SIGINT)
    done = cli.finish(proc, began, timeout=60)
    assert done.code == 130, done.out + done.err
    _sidecar_empty(db)
    copy = _copy_alone(db, tmp_path / "copy")
    info = copy.get_run("latest")
    assert info.status is RunStatus.INCOMPLETE
    assert info.executions == done.kept() == len(list(copy.iter_results(info.id)))
    copy.close()


def test_closing_a_store_twice_does_nothing_more(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    store = Store(f"sqlite:///{db}")
    store.create_run("s", "s.yaml", {}, 1)
    store.close()
    _sidecar_empty(db)
    store.close()
    assert Store(f"sqlite:///{db}").list_runs()[0].suite == "s"
