"""RecordingTarget and ReplayTarget on their own: what a recording holds, how a replay answers,
misses, changed inputs, recorded failures and timeouts, and a recording replaced whole."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from checkweigh.core import Case
from checkweigh.errors import InputError
from checkweigh.runs.targets import (
    AgentFailure,
    AgentRun,
    CallableTarget,
    RecordingTarget,
    ReplayTarget,
    TargetRequest,
    timed,
)
from checkweigh.runs.targets.recording import fingerprint


def _case(case_id: str, who: str, **metadata: Any) -> Case:
    return Case.model_validate({"id": case_id, "input": {"who": who}, "metadata": metadata})


class Counting:
    """A scheduling agent that counts its calls and fails for a calendar that is down."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, value: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        if value["who"] == "Mallory":
            raise ConnectionError("calendar API down")
        return {
            "trace": [
                {"kind": "tool_call", "name": "book_meeting", "arguments": {"who": value["who"]}},
                {"kind": "assistant", "content": f"Booked {value['who']} at 10:00."},
            ],
            "final_state": {"booking": {"who": value["who"], "time": "10:00"}},
            "usage": {"input_tokens": 120, "output_tokens": 30},
        }


async def _record(folder: Path, agent: Any, requests: list[TargetRequest], **kw: Any) -> Any:
    target = RecordingTarget(CallableTarget(agent), folder, suite="bookings", **kw)
    out: list[AgentRun | str] = []
    for request in requests:
        try:
            out.append((await timed(target, request, None))[0])
        except AgentFailure as exc:
            out.append(str(exc))
    await target.aclose()
    return target, out


async def _replay(folder: Path, requests: list[TargetRequest]) -> list[AgentRun | str]:
    target = ReplayTarget(folder)
    out: list[AgentRun | str] = []
    for request in requests:
        try:
            out.append((await timed(target, request, None))[0])
        except AgentFailure as exc:
            out.append(str(exc))
    await target.aclose()
    return out


REQUESTS = [
    TargetRequest(_case("alice", "Alice", team="sales")),
    TargetRequest(_case("alice", "Alice", team="sales"), repeat=1),
    TargetRequest(_case("mallory", "Mallory")),
]


def test_a_recording_holds_each_call_and_replays_it_without_the_agent(tmp_path: Path) -> None:
    agent = Counting()
    rec = tmp_path / "rec"
    target, recorded = asyncio.run(_record(rec, agent, REQUESTS))
    assert agent.calls == 3
    assert target.calls == 3
    manifest = json.loads((rec / "manifest.json").read_text())
    assert manifest["format"] == "checkweigh-agent-recording"
    assert manifest["format_version"] == 1
    assert manifest["suite"] == "bookings"
    assert manifest["target_kind"] == "python"
    assert set(manifest) == {
        "format",
        "format_version",
        "suite",
        "target_kind",
        "checkweigh_version",
        "created_at",
    }
    lines = [json.loads(x) for x in (rec / "calls.jsonl").read_text().splitlines()]
    assert [(x["case_id"], x["repeat"], x["turn"]) for x in lines] == [
        ("alice", 0, 0),
        ("alice", 1, 0),
        ("mallory", 0, 0),
    ]
    assert lines[0]["request"] == {
        "id": "alice",
        "input": {"who": "Alice"},
        "metadata": {"team": "sales"},
        "repeat": 0,
    }
    assert lines[0]["fingerprint"] == fingerprint(REQUESTS[0])
    # the try number is the call's key, not part of its fingerprint: recordings made before
    # requests carried it still replay
    assert lines[1]["fingerprint"] == lines[0]["fingerprint"]
    unnumbered = {k: v for k, v in lines[0]["request"].items() if k != "repeat"}
    canonical = json.dumps(unnumbered, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert lines[0]["fingerprint"] == hashlib.sha256(canonical.encode()).hexdigest()
    assert lines[0]["reply"]["final_state"] == {"booking": {"who": "Alice", "time": "10:00"}}
    assert "failure" not in lines[0]
    assert lines[0]["wall_ms"] >= 0
    assert lines[2]["failure"] == "agent raised ConnectionError: calendar API down"
    assert "reply" not in lines[2]

    replayed = asyncio.run(_replay(rec, REQUESTS))
    assert agent.calls == 3  # nothing ran
    assert replayed[2] == recorded[2] == "agent raised ConnectionError: calendar API down"
    for got, was, line in zip(replayed[:2], recorded[:2], lines[:2], strict=True):
        assert isinstance(got, AgentRun)
        assert isinstance(was, AgentRun)
        assert got == was  # trace, final state, usage and the latency the recording measured
        assert got.latency_ms == line["wall_ms"]
        assert got.usage is not None
        assert got.usage.input_tokens == 120


def test_a_replay_miss_and_a_changed_input_are_the_cases_errors(tmp_path: Path) -> None:
    rec = tmp_path / "rec"
    asyncio.run(_record(rec, Counting(), REQUESTS[:1]))
    got = asyncio.run(
        _replay(
            rec,
            [
                TargetRequest(_case("alice", "Alice", team="sales"), repeat=2),
                TargetRequest(_case("bob", "Bob")),
                TargetRequest(_case("alice", "Alicia", team="sales")),
                TargetRequest(_case("alice", "Alice", team="support")),
            ],
        )
    )
    assert got[0] == f"no recorded agent call for case 'alice' try 3 (turn 0) in {rec}"
    assert got[1] == f"no recorded agent call for case 'bob' try 1 (turn 0) in {rec}"
    changed = (
        f"the recorded agent call for case 'alice' try 1 (turn 0) in {rec} was sent a "
        "different request (the case's input, metadata or messages changed since it was "
        "recorded)"
    )
    assert got[2] == got[3] == changed


def test_a_conversation_turn_is_keyed_by_its_turn_and_messages(tmp_path: Path) -> None:
    from checkweigh.core import Step

    def chat(messages: list[dict[str, Any]]) -> dict[str, Any]:
        last = messages[-1]["content"]
        return {"trace": [{"kind": "assistant", "content": f"You said: {last}"}]}

    history = (Step(kind="user", content="Book Tuesday"),)
    turn1 = TargetRequest(_case("c", "Alice"), history=history, turn=1)
    rec = tmp_path / "rec"
    asyncio.run(_record(rec, chat, [turn1]))
    line = json.loads((rec / "calls.jsonl").read_text())
    assert line["turn"] == 1
    assert line["request"]["messages"] == [{"role": "user", "content": "Book Tuesday"}]
    again = asyncio.run(_replay(rec, [turn1]))[0]
    assert isinstance(again, AgentRun)
    assert again.trace[0].content == "You said: Book Tuesday"
    other = TargetRequest(
        _case("c", "Alice"), history=(Step(kind="user", content="Book Friday"),), turn=1
    )
    assert "was sent a different request" in str(asyncio.run(_replay(rec, [other]))[0])
    assert "turn 0" in str(asyncio.run(_replay(rec, [TargetRequest(_case("c", "Alice"))]))[0])


def test_a_timeout_is_recorded_and_replays_as_the_same_failure(tmp_path: Path) -> None:
    async def slow(_value: Any) -> dict[str, Any]:
        await asyncio.sleep(5)
        return {}

    rec = tmp_path / "rec"
    _, recorded = asyncio.run(_record(rec, slow, REQUESTS[:1], timeout_s=0.05))
    assert recorded == ["agent timed out after 0.05s"]
    assert asyncio.run(_replay(rec, REQUESTS[:1])) == ["agent timed out after 0.05s"]


def test_a_cancelled_call_is_not_recorded_and_finished_ones_are_on_disk(tmp_path: Path) -> None:
    rec = tmp_path / "rec"

    async def main() -> None:
        release = asyncio.Event()

        async def agent(value: dict[str, Any]) -> dict[str, Any]:
            if value["who"] == "Bob":
                await release.wait()
            return {"trace": [{"kind": "assistant", "content": "ok"}]}

        target = RecordingTarget(CallableTarget(agent), rec, suite="s")
        await target.run(TargetRequest(_case("a", "Alice")))
        # on disk already, before the run ends: a killed run keeps it
        assert len((rec / "calls.jsonl").read_text().splitlines()) == 1
        stuck = asyncio.create_task(target.run(TargetRequest(_case("b", "Bob"))))
        await asyncio.sleep(0.01)
        stuck.cancel()
        with pytest.raises(asyncio.CancelledError):
            await stuck
        await target.aclose()

    asyncio.run(main())
    assert [json.loads(x)["case_id"] for x in (rec / "calls.jsonl").read_text().splitlines()] == [
        "a"
    ]


def test_recording_again_replaces_the_old_recording_whole(tmp_path: Path) -> None:
    rec = tmp_path / "rec"
    first, _ = asyncio.run(_record(rec, Counting(), REQUESTS))
    assert first.replaced is None
    (rec / "notes.txt").write_text("the user's own file")
    second, _ = asyncio.run(_record(rec, Counting(), REQUESTS[:1]))
    assert second.replaced is not None
    assert second.replaced.suite == "bookings"
    assert len((rec / "calls.jsonl").read_text().splitlines()) == 1
    assert (rec / "notes.txt").read_text() == "the user's own file"
    assert sorted(p.name for p in rec.iterdir()) == ["calls.jsonl", "manifest.json", "notes.txt"]


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"calls.jsonl": "{}\n"}, "holds a calls.jsonl without a manifest.json; not overwritten"),
        (
            {"manifest.json": '{"name": "my-app"}'},
            "holds a manifest.json that is not a checkweigh agent recording; not overwritten",
        ),
    ],
)
def test_a_folder_holding_someone_elses_files_is_not_recorded_over(
    tmp_path: Path, files: dict[str, str], expected: str
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(InputError, match=expected) as caught:
        RecordingTarget(CallableTarget(Counting()), tmp_path, suite="s")
    assert caught.value.field == "--record-agent"
    for name, text in files.items():
        assert (tmp_path / name).read_text() == text


def test_a_malformed_line_names_file_and_line_and_a_cut_last_line_is_skipped(
    tmp_path: Path,
) -> None:
    rec = tmp_path / "rec"
    asyncio.run(_record(rec, Counting(), REQUESTS))
    calls = rec / "calls.jsonl"
    lines = calls.read_text().splitlines(keepends=True)

    calls.write_text(lines[0] + '{"case_id": "x", "repeat": "twice"}\n' + lines[1])
    with pytest.raises(InputError) as caught:
        ReplayTarget(rec)
    assert str(caught.value).startswith(f"{calls}:2: not a recorded agent call: ")
    assert "\n" not in str(caught.value)

    # killed while writing its last line: the finished calls replay, the cut one is noted
    calls.write_text(lines[0] + lines[1] + lines[2][:40])
    target = ReplayTarget(rec)
    assert len(target.calls) == 2
    assert target.notes == [
        f"{calls}:3: the last line was cut short (the recording was stopped while writing "
        "it); that call is not replayed"
    ]
