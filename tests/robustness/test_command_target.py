"""Catalogue: command agents that fail, and command targets written wrong, against the real
`checkweigh run` in a subprocess.

Each fault row is a realistic misbehaving program with its exact outcome: exit code (the
gates', never the program's), the one-line reason on its errored case, no traceback, the run
complete with every case stored, in time, and no process of the agent left running. Each
suite row is a mistake in a ``target: {kind: command}`` block: exit 2 and one line naming the
file, the line and the field.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from support import cli_process as cli
from support.process_groups import HAS_PROC, wait_gone

pytestmark = pytest.mark.skipif(os.name != "posix", reason="process groups are POSIX")

AGENT = r"""
import json
import os
import signal
import subprocess
import sys
import time

mode = sys.argv[1]
OK = {"trace": [{"kind": "assistant", "content": "Booked at 10:00."}],
      "final_state": {"time": "10:00"}}

if mode == "reads_no_stdin":
    print(json.dumps(OK))
    sys.exit(0)
n = json.load(sys.stdin)["input"]["n"]
os.makedirs("groups", exist_ok=True)
with open(f"groups/{n}", "w") as f:
    f.write(str(os.getpgid(0)))
if mode == "ok" or (n != 2 and mode != "hangs"):
    print(json.dumps(OK))
    sys.exit(0)
if mode == "exits_3":
    print("ConnectionError: calendar API unreachable", file=sys.stderr)
    sys.exit(3)
if mode == "segfaults":
    os.kill(os.getpid(), signal.SIGSEGV)
if mode == "junk":
    print("<html>502 Bad Gateway</html>")
if mode == "silent":
    sys.exit(0)
if mode == "huge":
    while True:
        sys.stdout.write("x" * 65536)
if mode == "hangs":
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(100)"])
    time.sleep(100)
if mode == "slow":
    time.sleep(0.5)
    print(json.dumps(OK))
if mode == "closes_stdout_early":
    sys.stdout.write(json.dumps(OK))
    sys.stdout.flush()
    os.close(1)
    time.sleep(0.2)
if mode == "kills_itself":
    os.kill(os.getpid(), signal.SIGKILL)
"""

SUITE = """\
name: bookings-{name}
cases: cases.jsonl
target:
  kind: command
  command: {command}
  concurrency: {concurrency}
{extra}checks:
  correct_time: {{type: equals, path: final_state.time, value: "10:00"}}
rubrics:
  completion:
    weights: {{correct_time: 1.0}}
"""


def _write(folder: Path, command: list[str], *, extra: str = "", concurrency: int = 2) -> None:
    (folder / "agent.py").write_text(AGENT)
    (folder / "suite.yaml").write_text(
        SUITE.format(
            name=command[-1] if command[-1].isidentifier() else "sh",
            command=json.dumps(command),
            concurrency=concurrency,
            extra=extra,
        )
    )
    (folder / "cases.jsonl").write_text(
        "".join(json.dumps({"id": f"book-{n}", "input": {"n": n}}) + "\n" for n in range(5))
    )


def _groups(folder: Path) -> list[int]:
    return [int(p.read_text()) for p in (folder / "groups").glob("*")]


@dataclass(frozen=True)
class Fault:
    mode: str
    code: int
    message: str
    errored: int
    extra: str = ""
    max_seconds: float = 20.0


FAULTS = [
    Fault("ok", 0, "5 execution(s) of 5 case(s); 0 errored", 0),
    Fault("reads_no_stdin", 0, "5 execution(s) of 5 case(s); 0 errored", 0),
    Fault("slow", 0, "5 execution(s) of 5 case(s); 0 errored", 0),
    Fault("closes_stdout_early", 0, "5 execution(s) of 5 case(s); 0 errored", 0),
    Fault(
        "exits_3",
        1,
        "command exited with status 3; stderr ends: ConnectionError: calendar API unreachable",
        1,
    ),
    Fault("segfaults", 1, "command was killed by SIGSEGV", 1),
    Fault("kills_itself", 1, "command was killed by SIGKILL", 1),
    Fault("junk", 1, "command's stdout is not one JSON document", 1),
    Fault("silent", 1, "command exited with status 0 but wrote nothing on stdout", 1),
    Fault("huge", 1, "command wrote more than 1 MiB on stdout", 1, "  max_reply_bytes: 1048576\n"),
    Fault("hangs", 1, "agent timed out after 1s", 5, "  timeout_s: 1\n", max_seconds=12),
]


@pytest.mark.parametrize("fault", FAULTS, ids=[f.mode for f in FAULTS])
def test_a_command_agent_fault_is_an_errored_case_never_the_runs_end(
    tmp_path: Path, fault: Fault
) -> None:
    _write(tmp_path, [sys.executable, "agent.py", fault.mode], extra=fault.extra)
    db = tmp_path / "runs.db"
    done = cli.run(["run", "suite.yaml", "--db", f"sqlite:///{db}", "-q"], tmp_path)
    assert done.code == fault.code, done.out + done.err
    assert fault.message in done.out, done.out
    assert "Traceback" not in done.out + done.err
    assert done.seconds < fault.max_seconds
    assert cli.stored(db) == 5
    assert cli.run_row(db) == ("complete", 5, False)
    assert f"{fault.errored} errored" in done.out
    if HAS_PROC and fault.mode != "reads_no_stdin":
        groups = _groups(tmp_path)
        assert len(groups) == 5
        assert [g for g in groups if wait_gone(g)] == []


@pytest.mark.skipif(not HAS_PROC, reason="reads /proc")
def test_a_sh_agent_whose_background_job_keeps_stdout_open_finishes_the_run(
    tmp_path: Path,
) -> None:
    # the shell answers and exits; the `sleep` it left holds the pipe: the run must not wait
    reply = json.dumps({"trace": [], "final_state": {"time": "10:00"}})
    script = f"cat > /dev/null; mkdir -p groups; echo $$ > groups/$$; sleep 100 & echo '{reply}'"
    _write(tmp_path, ["sh", "-c", script], concurrency=5)
    db = tmp_path / "runs.db"
    done = cli.run(["run", "suite.yaml", "--db", f"sqlite:///{db}", "-q"], tmp_path)
    assert done.code == 0, done.out + done.err
    assert "5 execution(s) of 5 case(s); 0 errored" in done.out
    assert done.seconds < 10
    assert cli.run_row(db) == ("complete", 5, False)
    assert [g for g in _groups(tmp_path) if wait_gone(g)] == []


@pytest.mark.skipif(not HAS_PROC, reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_one_signal_stops_a_run_of_hanging_programs_and_ends_their_groups(
    tmp_path: Path, sig: signal.Signals
) -> None:
    _write(tmp_path, [sys.executable, "agent.py", "hangs"], extra="  timeout_s: 60\n")
    db = tmp_path / "runs.db"
    proc = cli.start(["run", "suite.yaml", "--db", f"sqlite:///{db}", "-q"], tmp_path)
    deadline = time.monotonic() + 15
    while len(list((tmp_path / "groups").glob("*")) if (tmp_path / "groups").exists() else []) < 2:
        assert time.monotonic() < deadline, "the agents never started"
        assert proc.poll() is None
        time.sleep(0.05)
    time.sleep(0.2)
    began = time.monotonic()
    proc.send_signal(sig)
    done = cli.finish(proc, began)
    assert done.code == 130, done.out + done.err
    assert done.seconds < 4.0
    assert "interrupted: run" in done.err
    assert "Traceback" not in done.out + done.err
    assert [g for g in _groups(tmp_path) if wait_gone(g)] == []


# suites ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BadTarget:
    name: str
    target: str
    message: str


BAD_TARGETS = [
    BadTarget(
        "empty list",
        "  command: []\n",
        "suite.yaml:5: target.command: expected a program and its arguments, got an empty command",
    ),
    BadTarget(
        "empty string",
        '  command: ""\n',
        "suite.yaml:5: target.command: expected a program and its arguments, got an empty command",
    ),
    BadTarget(
        "unclosed quote",
        '  command: "node \'agent.js"\n',
        "suite.yaml:5: target.command: cannot split the command: No closing quotation",
    ),
    BadTarget(
        "not on PATH",
        "  command: [no-such-agent-binary, run]\n",
        "suite.yaml:5: target.command: program 'no-such-agent-binary' not found on PATH",
    ),
    BadTarget(
        "missing file",
        "  command: [./bin/agent]\n",
        "suite.yaml:5: target.command: program not found: ",
    ),
    BadTarget(
        "not executable",
        "  command: [./agent.py]\n",
        "suite.yaml:5: target.command: program is not an executable file: ",
    ),
    BadTarget(
        "a local file without ./",
        "  command: [agent.py]\n",
        "program 'agent.py' not found on PATH; for the file in the suite's folder write ./agent.py",
    ),
    BadTarget(
        "a folder",
        "  command: [./groups]\n",
        "suite.yaml:5: target.command: program is not an executable file: ",
    ),
    BadTarget(
        "cwd missing",
        "  command: [sh, agent.sh]\n  cwd: agents\n",
        "suite.yaml:6: target.cwd: folder not found: ",
    ),
    BadTarget(
        "env variable not set",
        '  command: [sh]\n  env: {AGENT_TOKEN: "Bearer ${CHECKWEIGH_TEST_UNSET_TOKEN}"}\n',
        "suite.yaml:6: target.env.AGENT_TOKEN: names $CHECKWEIGH_TEST_UNSET_TOKEN, which is "
        "not set in the environment",
    ),
    BadTarget(
        "env lone dollar",
        '  command: [sh]\n  env: {PRICE: "5$"}\n',
        "target.env.PRICE: a '$' must start $NAME or ${NAME}; write $$ for a '$' itself",
    ),
    BadTarget(
        "command typo",
        "  comand: [sh]\n",
        "suite.yaml:5: target.comand: unknown key 'comand'",
    ),
    BadTarget(
        "unknown reply format",
        "  command: [sh]\n  reply: {format: xml}\n",
        "suite.yaml:6: target.reply.format: ",
    ),
    BadTarget(
        "mapping without mapping",
        "  command: [sh]\n  reply: {format: mapping}\n",
        "suite.yaml:6: target.reply: format: mapping needs 'mapping' "
        "(messages or trace, final_state)",
    ),
    BadTarget(
        "max_reply_bytes zero",
        "  command: [sh]\n  max_reply_bytes: 0\n",
        "suite.yaml:6: target.max_reply_bytes: ",
    ),
]


@pytest.mark.parametrize("bad", BAD_TARGETS, ids=[b.name for b in BAD_TARGETS])
def test_a_command_target_written_wrong_is_one_line_and_exit_2(
    tmp_path: Path, bad: BadTarget
) -> None:
    _write(tmp_path, ["sh"])
    (tmp_path / "groups").mkdir()
    lines = (tmp_path / "suite.yaml").read_text().splitlines(keepends=True)
    target = lines.index("target:\n")
    lines[target + 1 : target + 3] = ["  kind: command\n", bad.target]
    (tmp_path / "suite.yaml").write_text("".join(lines))
    done = cli.run(["run", "suite.yaml", "--db", f"sqlite:///{tmp_path / 'runs.db'}"], tmp_path)
    assert done.code == 2, done.out + done.err
    assert bad.message in done.err, done.err
    assert len(done.err.strip().splitlines()) == 1
    assert "Traceback" not in done.out + done.err
    assert not (tmp_path / "runs.db").exists()


def test_a_token_given_through_env_reaches_the_program_and_is_never_stored(
    tmp_path: Path,
) -> None:
    secret = "sk-live-4f9c2e7d1b8a6350"
    # the program notes what it got in a file beside the suite, outside the database
    script = (
        'cat > /dev/null; printf "%s" "$AGENT_TOKEN" > seen_token; '
        'printf \'%s\' \'{"trace": [], "final_state": {"time": "10:00"}}\''
    )
    _write(tmp_path, ["sh", "-c", script], extra='  env: {AGENT_TOKEN: "Bearer ${CALENDAR_KEY}"}\n')
    db = tmp_path / "runs.db"
    proc = subprocess.run(
        [sys.executable, "-c", cli.ENTRY, "run", "suite.yaml", "--db", f"sqlite:///{db}", "-q"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "CALENDAR_KEY": secret},
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "5 execution(s) of 5 case(s); 0 errored" in proc.stdout
    assert (tmp_path / "seen_token").read_text() == f"Bearer {secret}"
    assert secret not in proc.stdout + proc.stderr
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("runs.db*"))
    assert b"${CALENDAR_KEY}" in stored  # the suite's snapshot keeps the reference
    assert secret.encode() not in stored


def _living(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie has ended, whoever is to reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in "ZX"


@pytest.mark.skipif(not HAS_PROC, reason="reads /proc")
def test_agents_and_their_children_do_not_outlive_a_killed_checkweigh(tmp_path: Path) -> None:
    _write(tmp_path, [sys.executable, "agent.py", "hangs"], extra="  timeout_s: 60\n")
    db = tmp_path / "runs.db"
    proc = cli.start(["run", "suite.yaml", "--db", f"sqlite:///{db}", "-q"], tmp_path)
    deadline = time.monotonic() + 15
    while len(list((tmp_path / "groups").glob("*")) if (tmp_path / "groups").exists() else []) < 2:
        assert time.monotonic() < deadline, "the agents never started"
        assert proc.poll() is None
        time.sleep(0.05)
    time.sleep(0.3)  # each agent has started its child by now
    groups = _groups(tmp_path)
    members = [
        int(entry)
        for entry in os.listdir("/proc")
        if entry.isdigit() and _in_groups(int(entry), groups)
    ]
    assert len(members) >= 4  # two agents and a child of each
    proc.kill()  # kill -9: checkweigh cleans up nothing itself
    proc.communicate(timeout=10)
    deadline = time.monotonic() + 5
    while (left := [pid for pid in members if _living(pid)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    for group in groups:  # should the test fail, it leaves nothing running either
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)
    assert left == []


def _in_groups(pid: int, groups: list[int]) -> bool:
    try:
        return os.getpgid(pid) in groups
    except OSError:
        return False
