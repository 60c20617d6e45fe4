"""The command target against real programs (Python run with this interpreter, /bin/sh, Node
when it is installed): the request they read, the replies they give, and every way a program
can fail, time out or leave processes behind."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from checkweigh.core import Case, Step
from checkweigh.runs.targets import (
    AgentFailure,
    AgentRun,
    CommandTarget,
    TargetRequest,
    build_target,
    timed,
)
from checkweigh.suites import CommandTargetSpec
from support.process_groups import HAS_PROC, children, wait_gone

pytestmark = pytest.mark.skipif(os.name != "posix", reason="process groups are POSIX")

AGENT = r"""
import json
import os
import signal
import subprocess
import sys
import time

mode = sys.argv[1]


def reply(request):
    return {
        "trace": [
            {"kind": "user", "content": request["input"]["message"]},
            {"kind": "tool_call", "name": "book_meeting", "arguments": {"time": "10:00"},
             "result": {"ok": True}},
            {"kind": "assistant", "content": "Booked for 10:00."},
        ],
        "final_state": {
            "time": "10:00",
            "id": request["id"],
            "metadata": request["metadata"],
            "messages": request.get("messages"),
            "turn": request.get("turn"),
            "cwd": os.getcwd(),
            "token": os.environ.get("AGENT_TOKEN"),
        },
        "usage": {"input_tokens": 120, "output_tokens": 14},
    }


def note_group():
    with open("group", "w") as f:
        f.write(str(os.getpgid(0)))


if mode == "no_stdin":
    print(json.dumps({"trace": [], "final_state": {"read": False}}))
    sys.exit(0)
request = json.load(sys.stdin)
if mode == "ok":
    print(json.dumps(reply(request)))
elif mode == "slow":
    time.sleep(0.3)
    print(json.dumps(reply(request)))
elif mode in ("hang", "hang_ignoring_term"):
    if mode == "hang_ignoring_term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(100)"])
    note_group()
    time.sleep(100)
elif mode == "logs_then_hangs":
    for n in range(200):
        print(f"retrying the calendar API ({n})", file=sys.stderr)
    print("\x1b[31mstill waiting for the calendar lock", file=sys.stderr, flush=True)
    time.sleep(100)
elif mode == "exit3":
    print("Traceback (most recent call last):", file=sys.stderr)
    print('  File "agent.py", line 40, in book', file=sys.stderr)
    print("ConnectionError: calendar API unreachable", file=sys.stderr)
    sys.exit(3)
elif mode == "segfault":
    os.kill(os.getpid(), signal.SIGSEGV)
elif mode == "junk":
    print("Booked at 10:00, see you then!")
elif mode == "empty":
    pass
elif mode == "huge":
    note_group()
    chunk = "x" * 65536
    while True:
        sys.stdout.write(chunk)
elif mode == "closes_stdout_early":
    sys.stdout.write(json.dumps(reply(request)))
    sys.stdout.flush()
    os.close(1)
    time.sleep(0.3)
    print("finished the clean-up after replying", file=sys.stderr)
elif mode == "empty_list":
    print("[]")
elif mode == "invalid":
    print(json.dumps({"trace": [{"kind": "bogus"}], "final_state": {}}))
elif mode == "not_an_object":
    print(json.dumps([1, 2, 3]))
elif mode == "terminal_escapes":
    sys.stderr.write("\x1b]0;pwned\x07\x1b[2J\rquota exceeded\n")
    sys.exit(1)
elif mode == "openai":
    print(json.dumps({"messages": [
        {"role": "user", "content": request["input"]["message"]},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
         "function": {"name": "check_availability", "arguments": "{\"date\": \"2025-03-04\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "free"},
        {"role": "assistant", "content": "Booked for 10:00."},
    ], "final_state": {"time": "10:00"}}))
elif mode == "bad_openai":
    print(json.dumps({"messages": [{"role": "bot", "content": "hi"}]}))
"""

SH_AGENT = """#!/bin/sh
# echoes the request it read back inside its final state
request=$(cat)
printf '{"trace": [{"kind": "assistant", "content": "ok"}], "final_state": {"request": %s}}\\n' \
  "$request"
"""

NODE_AGENT = """
let data = "";
process.stdin.on("data", (chunk) => { data += chunk; });
process.stdin.on("end", () => {
  const request = JSON.parse(data);
  const reply = {
    trace: [{kind: "assistant", content: `Booked ${request.input.message.length} chars`}],
    final_state: {id: request.id, node: process.version.startsWith("v")},
  };
  process.stdout.write(JSON.stringify(reply));
});
"""


def _case(n: int = 0, message: str = "Book Alice on 2025-03-04 at 10:00") -> Case:
    return Case(id=f"book-{n}", input={"message": message}, metadata={"team": "sales"})


def _target(folder: Path, command: Any, **spec: Any) -> CommandTarget:
    (folder / "agent.py").write_text(AGENT)
    parsed = CommandTargetSpec.model_validate({"kind": "command", "command": command, **spec})
    return CommandTarget.load(parsed, folder)


def _python(folder: Path, mode: str, **spec: Any) -> CommandTarget:
    return _target(folder, [sys.executable, "agent.py", mode], **spec)


def _call(target: CommandTarget, request: TargetRequest, timeout_s: float = 10) -> AgentRun:
    return asyncio.run(timed(target, request, timeout_s))[0]


def _failure(target: CommandTarget, timeout_s: float = 10) -> str:
    with pytest.raises(AgentFailure) as failed:
        _call(target, TargetRequest(_case()), timeout_s)
    return str(failed.value)


# answers -------------------------------------------------------------------------------


def test_a_program_reads_the_request_and_its_reply_becomes_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CALENDAR_TOKEN", "s3cret-token")
    target = _python(tmp_path, "ok", env={"AGENT_TOKEN": "Bearer ${CALENDAR_TOKEN}"})
    ran = _call(target, TargetRequest(_case(7)))
    assert [s.kind for s in ran.trace] == ["user", "tool_call", "assistant"]
    assert ran.trace[0].content == "Book Alice on 2025-03-04 at 10:00"
    assert ran.trace[1].result == {"ok": True}
    assert ran.final_state == {
        "time": "10:00",
        "id": "book-7",
        "metadata": {"team": "sales"},
        "messages": None,
        "turn": None,
        "cwd": str(tmp_path.resolve()),
        "token": "Bearer s3cret-token",
    }
    assert ran.usage is not None
    assert ran.usage.input_tokens == 120
    # the spec keeps the reference, never the secret
    assert "s3cret" not in json.dumps(target.command.argv)
    spec = CommandTargetSpec.model_validate(
        {"kind": "command", "command": ["sh"], "env": {"AGENT_TOKEN": "Bearer ${CALENDAR_TOKEN}"}}
    )
    assert "s3cret" not in spec.model_dump_json()


def test_a_conversation_turn_sends_the_messages_so_far_and_the_turn(tmp_path: Path) -> None:
    history = (
        Step(kind="user", content="Book Alice tomorrow"),
        Step(kind="assistant", content="At what time?"),
        Step(kind="user", content="10:00"),
    )
    ran = _call(_python(tmp_path, "ok"), TargetRequest(_case(), history=history, turn=1))
    assert ran.final_state["turn"] == 1
    assert ran.final_state["messages"] == [
        {"role": "user", "content": "Book Alice tomorrow"},
        {"role": "assistant", "content": "At what time?"},
        {"role": "user", "content": "10:00"},
    ]


def test_a_program_is_told_which_try_of_the_case_it_answers(tmp_path: Path) -> None:
    script = tmp_path / "agent.sh"
    script.write_text(SH_AGENT)
    script.chmod(0o755)
    target = _target(tmp_path, ["./agent.sh"])
    tries = [_call(target, TargetRequest(_case(), repeat=n)) for n in (0, 2)]
    assert [t.final_state["request"]["repeat"] for t in tries] == [0, 2]


def test_a_command_string_is_split_like_a_shell_and_cwd_is_relative(tmp_path: Path) -> None:
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "agent.py").write_text(AGENT)
    spec = CommandTargetSpec.model_validate(
        {"kind": "command", "command": f"'{sys.executable}' agent.py ok", "cwd": "agents"}
    )
    ran = _call(build_target(spec, tmp_path), TargetRequest(_case()))
    assert ran.final_state["cwd"] == str((tmp_path / "agents").resolve())


def test_a_sh_script_by_relative_path_gets_the_request_on_stdin(tmp_path: Path) -> None:
    script = tmp_path / "bin" / "agent.sh"
    script.parent.mkdir()
    script.write_text(SH_AGENT)
    script.chmod(0o755)
    ran = _call(_target(tmp_path, ["bin/agent.sh"]), TargetRequest(_case(3)))
    assert ran.final_state["request"] == {
        "id": "book-3",
        "input": {"message": "Book Alice on 2025-03-04 at 10:00"},
        "metadata": {"team": "sales"},
        "repeat": 0,
    }


def test_a_program_that_prints_plain_text_with_reply_format_text(tmp_path: Path) -> None:
    command = ["/bin/sh", "-c", "cat > /dev/null; echo 'Booked Alice at 10:00.'"]
    ran = _call(_target(tmp_path, command, reply={"format": "text"}), TargetRequest(_case()))
    assert [(s.kind, s.content) for s in ran.trace] == [("assistant", "Booked Alice at 10:00.")]
    assert ran.final_state == {}


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_a_node_script_agent(tmp_path: Path) -> None:
    (tmp_path / "agent.js").write_text(NODE_AGENT)
    ran = _call(_target(tmp_path, ["node", "agent.js"]), TargetRequest(_case(2, "héllo")))
    assert ran.trace[0].content == "Booked 5 chars"
    assert ran.final_state == {"id": "book-2", "node": True}


def test_a_reply_in_the_openai_format_goes_through_the_importer(tmp_path: Path) -> None:
    ran = _call(_python(tmp_path, "openai", reply={"format": "openai"}), TargetRequest(_case()))
    assert [(s.kind, s.name) for s in ran.trace] == [
        ("user", None),
        ("tool_call", "check_availability"),
        ("assistant", None),
    ]
    assert ran.trace[1].arguments == {"date": "2025-03-04"}
    assert ran.trace[1].result == "free"
    assert ran.final_state == {"time": "10:00"}


def test_a_big_request_reaches_a_program_and_one_that_never_reads_is_fine(
    tmp_path: Path,
) -> None:
    big = _case(1, "x" * 3_000_000)  # far more than a pipe holds
    assert _call(_python(tmp_path, "ok"), TargetRequest(big)).trace[0].content == "x" * 3_000_000
    assert _call(_python(tmp_path, "no_stdin"), TargetRequest(big)).final_state == {"read": False}


def test_a_program_that_closes_stdout_early_still_answers(tmp_path: Path) -> None:
    ran = _call(_python(tmp_path, "closes_stdout_early"), TargetRequest(_case()))
    assert ran.final_state["time"] == "10:00"


# failures ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "spec", "message"),
    [
        (
            "exit3",
            {},
            "command exited with status 3; stderr ends: Traceback (most recent call last): "
            'File "agent.py", line 40, in book ConnectionError: calendar API unreachable',
        ),
        ("segfault", {}, "command was killed by SIGSEGV"),
        ("junk", {}, "command's stdout is not one JSON document"),
        ("empty", {}, "command exited with status 0 but wrote nothing on stdout"),
        ("invalid", {}, "command's reply does not fit format checkweigh: trace[0].kind"),
        (
            "not_an_object",
            {},
            "command's reply does not fit format checkweigh: expected an object with trace",
        ),
        (
            "bad_openai",
            {"reply": {"format": "openai"}},
            "command's reply does not fit format openai: messages[0]",
        ),
        ("huge", {"max_reply_bytes": 2**20}, "command wrote more than 1 MiB on stdout"),
        (
            "empty_list",
            {"reply": {"format": "openai"}},
            "command's reply holds no message (format openai): it is an empty list",
        ),
        ("terminal_escapes", {}, "command exited with status 1; stderr ends: ]0;pwned"),
    ],
)
def test_a_failing_program_is_one_line_naming_what_went_wrong(
    tmp_path: Path, mode: str, spec: dict[str, Any], message: str
) -> None:
    text = _failure(_python(tmp_path, mode, **spec))
    assert message in text
    assert not any(c in text for c in "\n\r\x1b\x07")
    if mode == "junk":
        assert "'Booked at 10:00, see you then!" in text
    if mode == "huge":
        assert wait_gone(int((tmp_path / "group").read_text())) == []


def test_stderr_is_quoted_by_its_end_and_bounded(tmp_path: Path) -> None:
    (tmp_path / "loud.py").write_text(
        "import sys\nsys.stderr.write('noise ' * 100000 + 'the real error')\nsys.exit(2)\n"
    )
    text = _failure(_target(tmp_path, [sys.executable, "loud.py"]))
    assert text.endswith("noise the real error")
    assert len(text) < 500


@pytest.mark.skipif(not HAS_PROC, reason="reads /proc")
@pytest.mark.parametrize("mode", ["hang", "hang_ignoring_term"])
def test_a_timeout_ends_the_whole_process_group(tmp_path: Path, mode: str) -> None:
    began = time.monotonic()
    assert _failure(_python(tmp_path, mode), timeout_s=1) == "agent timed out after 1s"
    assert time.monotonic() - began < 3  # the limit, the grace, the reaping
    group = int((tmp_path / "group").read_text())
    assert wait_gone(group) == []  # the program and the grandchild it started


def test_a_timeout_quotes_the_end_of_the_programs_stderr(tmp_path: Path) -> None:
    text = _failure(_python(tmp_path, "logs_then_hangs"), timeout_s=1)
    assert text.startswith("agent timed out after 1s; stderr ends: ...")
    assert text.endswith("retrying the calendar API (199) [31mstill waiting for the calendar lock")
    assert "\x1b" not in text
    assert len(text) < 500  # bounded: 200 lines were written


@pytest.mark.skipif(not HAS_PROC, reason="reads /proc")
def test_cancelling_a_call_ends_the_group_and_propagates(tmp_path: Path) -> None:
    target = _python(tmp_path, "hang")

    async def scenario() -> None:
        call = asyncio.create_task(target.run(TargetRequest(_case())))
        while not (tmp_path / "group").exists():
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.05)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call

    asyncio.run(scenario())
    assert wait_gone(int((tmp_path / "group").read_text())) == []


@pytest.mark.skipif(not HAS_PROC, reason="reads /proc")
def test_a_grandchild_holding_stdout_does_not_hang_the_call(tmp_path: Path) -> None:
    reply = '{"trace": [], "final_state": {"time": "10:00"}}'
    script = f"echo $$ > group; sleep 100 & echo '{reply}'"
    target = _target(tmp_path, ["sh", "-c", script])
    began = time.monotonic()
    ran = _call(target, TargetRequest(_case()), timeout_s=30)
    assert time.monotonic() - began < 3
    assert ran.final_state == {"time": "10:00"}
    assert wait_gone(int((tmp_path / "group").read_text())) == []


@pytest.mark.skipif(not HAS_PROC, reason="reads /proc")
def test_many_calls_at_once_leave_no_process(tmp_path: Path) -> None:
    target = _python(tmp_path, "slow")
    # the test run may hold processes of its own (a browser, a server fixture): only the
    # agents started here must be gone
    before = set(children(os.getpid()))

    async def many() -> list[AgentRun]:
        return await asyncio.gather(*(target.run(TargetRequest(_case(n))) for n in range(12)))

    runs = asyncio.run(many())
    assert [r.final_state["id"] for r in runs] == [f"book-{n}" for n in range(12)]
    assert set(children(os.getpid())) - before == set()  # each one reaped


def test_a_program_removed_after_loading_is_an_errored_call(tmp_path: Path) -> None:
    script = tmp_path / "agent.sh"
    script.write_text(SH_AGENT)
    script.chmod(0o755)
    target = _target(tmp_path, ["./agent.sh"])
    script.unlink()
    assert _failure(target).startswith("command could not start: No such file or directory: ")


def test_a_signal_name_is_given_for_a_killed_program(tmp_path: Path) -> None:
    target = _target(tmp_path, ["sh", "-c", "kill -TERM $$"])
    assert _failure(target) == "command was killed by SIGTERM"


def test_a_reply_with_an_escaped_lone_surrogate_is_read_and_made_storable(
    tmp_path: Path,
) -> None:
    # json.dumps writes "\ud800": valid JSON that jiter refuses
    (tmp_path / "lone.py").write_text(
        "import json, sys\n"
        "sys.stdin.read()\n"
        'print(json.dumps({"trace": [{"kind": "assistant", "content": "at \\ud800 ten"}],'
        ' "final_state": {"time": "10:00"}}))\n'
    )
    target = _target(tmp_path, [sys.executable, "lone.py"])
    ran = _call(target, TargetRequest(_case()))
    assert ran.trace[0].content == "at \\ud800 ten"
    assert ran.final_state == {"time": "10:00"}
