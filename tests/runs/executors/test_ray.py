"""``checkweigh run --executor ray`` against a real local Ray cluster (a head and a second node
on 127.0.0.1): the same results as a local run, a killed worker's case retried or errored but
never lost, judge calls under one cluster-wide limit, a bad address refused."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from checkweigh.core import Case
from checkweigh.store import Store
from checkweigh.testing import Reply, fake_llm_server, scripted_users
from support import cli_process as cli
from support.conversation_suite import scripted, simulated, write_desk
from support.ray_cluster import RayCluster, require_ray, start_cluster
from support.worker_suite import write_worker_suite


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[RayCluster]:
    require_ray()
    cluster = start_cluster(cpus_per_node=1)
    try:
        yield cluster
    finally:
        cluster.stop()


AGENT = """\
import os
import signal
import time
from pathlib import Path

HERE = Path(__file__).parent


def run(request):
    n = request["n"]
    if n in request.get("kill_first", []):
        marker = HERE / f"killed-{n}"
        if not marker.exists():  # the first attempt: its worker dies, as a lost node's would
            marker.touch()
            os.kill(os.getpid(), signal.SIGKILL)
    if n in request.get("kill_always", []):
        (HERE / f"killed-always-{n}-{os.getpid()}").touch()
        os.kill(os.getpid(), signal.SIGKILL)
    if n == 5:
        raise ConnectionError("calendar API unreachable")
    time.sleep(0.02)
    time_ = "10:00" if n % 3 else "11:00"
    reply = f"Booked Alice and Bob at {time_}." if n % 4 else "Done."
    return {
        "trace": [
            {"kind": "tool_call", "name": "check_availability", "arguments": {"n": n}},
            {"kind": "assistant", "content": reply},
        ],
        "final_state": {"time": time_, "booked": n % 7 != 0},
    }
"""

CHECKS = """\
def polite(case):
    return "Booked" in (case.output or "")
"""

SUITE = """\
name: bookings-on-ray
cases: cases.jsonl
target: {agent: "booking_agent:run", concurrency: 4}
checks:
  said_time: {type: contains, path: output, values: ["10:00"]}
  right_time: {type: equals, path: final_state.time, value: "10:00"}
  booked: {type: equals, path: final_state.booked, value: true}
  checked_first: {type: tool_called, step: {name: check_availability}}
  polite: {type: python, function: "ray_suite_checks:polite"}
JUDGE
rubrics:
  completion:
    weights:
      said_time: 0.2
      right_time: {weight: 0.3, required: true}
      booked: 0.2
      checked_first: 0.1
      polite: 0.2
      WEIGHT
thresholds: {metrics_pass_threshold: 40.0, cases_pass_threshold: 30.0}
"""

JUDGED = """\
  grounded:
    type: judge
    question: Is every statement in the final reply supported by the trace?
"""


def agent_suite(folder: Path, n: int, *, judged: bool = False, **inputs: list[int]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "booking_agent.py").write_text(AGENT)
    (folder / "ray_suite_checks.py").write_text(CHECKS)
    text = SUITE.replace("JUDGE\n", JUDGED if judged else "")
    text = text.replace("      WEIGHT\n", "      grounded: 0.2\n" if judged else "")
    (folder / "suite.yaml").write_text(text)
    rows = [{"id": f"booking-{i:03d}", "input": {"n": i, **inputs}} for i in range(n)]
    (folder / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder / "suite.yaml"


def run(folder: Path, name: str, *flags: str, timeout: float = 180) -> tuple[cli.Finished, Any]:
    args = ["run", "suite.yaml", "-q", "--db", f"sqlite:///{name}.db", "--json", f"{name}.json"]
    done = cli.run([*args, *flags], folder, timeout=timeout)
    assert "Traceback" not in done.err, done.err
    path = folder / f"{name}.json"
    return done, json.loads(path.read_text()) if path.exists() else None


def comparable(report: Any) -> tuple[list[Any], Any]:
    """The results in the cases' order without timings, and the summary without notes and
    timings, its failing cases in the cases' order (agent cases finish in any order, on Ray
    as in one process)."""
    results = sorted(report["results"], key=lambda r: (r["position"], r["repeat"]))
    for r in results:
        r.pop("latency_ms")
    summary = {k: v for k, v in report["summary"].items() if k not in ("notes", "usage", "slowest")}
    summary["case_gates"]["failing"].sort(key=lambda f: f["case_id"])
    # means are summed in the order cases finish, which varies in the last bits of a float
    return _rounded(results), _rounded(summary)


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def test_an_agent_suite_on_ray_gives_the_local_results(
    tmp_path: Path, ray_cluster: RayCluster
) -> None:
    folder = tmp_path / "s"
    agent_suite(folder, 40)
    local, local_report = run(folder, "local")
    on_ray, ray_report = run(
        folder, "ray", "--executor", "ray", "--ray-address", ray_cluster.address
    )
    assert on_ray.code == local.code == 0, on_ray.err
    assert comparable(ray_report) == comparable(local_report)
    errored = [r for r in ray_report["results"] if r["agent_error"]]
    assert [r["case_id"] for r in errored] == ["booking-005"]
    assert "calendar API unreachable" in errored[0]["agent_error"]
    assert "agent and checks run as Ray tasks" in on_ray.out


def test_recorded_cases_on_ray_give_the_local_results(
    tmp_path: Path, ray_cluster: RayCluster
) -> None:
    suite = write_worker_suite(tmp_path / "s", 1_500)
    local, local_report = run(suite.parent, "local")
    on_ray, ray_report = run(
        suite.parent, "ray", "--executor", "ray", "--ray-address", ray_cluster.address
    )
    assert on_ray.code == local.code == 0, on_ray.err
    # chunks come back in the cases' order: the very same list
    assert ray_report["results"] == local_report["results"]
    assert "recorded cases scored as Ray tasks" in on_ray.out


def test_a_killed_worker_is_retried_or_its_case_errored_never_lost(
    tmp_path: Path, ray_cluster: RayCluster
) -> None:
    folder = tmp_path / "s"
    agent_suite(folder, 16, kill_first=[3, 11], kill_always=[8])
    done, report = run(folder, "ray", "--executor", "ray", "--ray-address", ray_cluster.address)
    assert done.code in (0, 1), done.err
    assert (folder / "killed-3").exists()
    assert (folder / "killed-11").exists()
    by_id = {r["case_id"]: r for r in report["results"]}
    assert sorted(by_id) == [f"booking-{i:03d}" for i in range(16)]  # every case, once
    assert report["run"]["status"] == "complete"
    for retried in ("booking-003", "booking-011"):  # the second attempt ran the agent
        assert by_id[retried]["agent_error"] is None
        assert by_id[retried]["verdicts"]["booked"]["state"] == "passed"
    lost = by_id["booking-008"]["agent_error"]
    assert "failed after 3 retries" in lost
    assert len(list(folder.glob("killed-always-8-*"))) == 4  # the first try and 3 retries
    assert cli.stored(folder / "ray.db") == 16


def test_judge_calls_stay_under_one_cluster_wide_limit(
    tmp_path: Path, ray_cluster: RayCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "s"
    agent_suite(folder, 24, judged=True)
    delay = 0.25
    answer = json.dumps({"verdict": "yes", "reason": "the reply says what the trace did"})
    with fake_llm_server([], default=Reply(answer, delay_s=delay)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-stored")
        monkeypatch.setenv("CHECKWEIGH_CACHE_DIR", str(tmp_path / "cache"))
        done, report = run(
            folder,
            "ray",
            "--executor",
            "ray",
            "--ray-address",
            ray_cluster.address,
            "--judge",
            "openai:gpt-test",
            "--judge-concurrency",
            "2",
            "--concurrency",
            "8",
        )
    assert done.code in (0, 1), done.err
    assert len(server.times) == 23  # one call per case whose agent answered
    # each call is held `delay` at the server: calls that arrived within less than that of
    # each other were in flight together
    peak = max(sum(1 for u in server.times if t - delay * 0.9 < u <= t) for t in server.times)
    assert peak == 2
    judged = [r for r in report["results"] if not r["agent_error"]]
    assert all(r["verdicts"]["grounded"]["state"] == "passed" for r in judged)


@pytest.mark.parametrize(
    ("flags", "prelude", "fragment"),
    [
        (["--ray-address", "127.0.0.1:9"], "", "--ray-address: cannot join the Ray cluster at"),
        (["--ray-address", "head-node"], "", "--ray-address: expected HOST:PORT"),
        ([], "import sys; sys.modules['ray'] = None; ", "--executor: Ray is not installed"),
    ],
    ids=["nothing-listens", "no-port", "ray-not-installed"],
)
def test_ray_that_cannot_be_used_exits_2(
    tmp_path: Path, flags: list[str], prelude: str, fragment: str
) -> None:
    require_ray()
    folder = tmp_path / "s"
    agent_suite(folder, 3)
    db = folder / "runs.db"
    args = ["run", "suite.yaml", "-q", "--db", f"sqlite:///{db}", "--executor", "ray", *flags]
    done = cli.run(args, folder, prelude=prelude)
    assert done.code == 2, done.out + done.err
    assert fragment in done.err
    assert len(done.err.strip().splitlines()) == 1
    assert "Traceback" not in done.err
    assert cli.stored(db) == 0


HELD_REFS = """\
import json
import sys

import ray

import checkweigh as cw
from checkweigh.runs.executors.ray import RayExecutor, connect
from checkweigh.store import Store

executor = connect(sys.argv[1])
executor = RayExecutor(executor.ray, executor.address, chunk=16)  # many chunks
core = ray._private.worker.global_worker.core_worker
held = []
outcome = cw.run(
    "suite.yaml",
    store=Store("sqlite:///refs.db"),
    executor=executor,
    on_result=lambda result: held.append(len(core.get_all_reference_counts())),
    keep_results=False,
)
print(json.dumps({"cases": outcome.summary.executions, "cpus": executor.cpus, "held": held}))
"""


def test_the_driver_holds_a_bounded_number_of_ray_objects(
    tmp_path: Path, ray_cluster: RayCluster
) -> None:
    # each chunk's task, argument and result are released once its results are handed on:
    # the driver's references stay within the window of chunks in flight, however many
    # chunks the run has (its memory does not grow with them)
    suite = write_worker_suite(tmp_path / "s", 1_600)
    (suite.parent / "held_refs.py").write_text(HELD_REFS)
    done = subprocess.run(
        [sys.executable, "held_refs.py", ray_cluster.address],
        cwd=suite.parent,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["cases"] == 1_600 == len(got["held"])  # 100 chunks
    window = 2 * got["cpus"]
    assert max(got["held"]) <= 2 * window + 2, max(got["held"])


GOAL = "Book a 30 minute review with Alice on Tuesday; accept another slot if 10:00 is taken"
USER_LINES = ["Please book a review with Alice on Tuesday at 10:00", "OK, 11:30 works then"]


def test_conversations_on_ray_give_the_local_results(
    tmp_path: Path, ray_cluster: RayCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    # scripted users talk with the agent inside one task; a simulated user speaks through the
    # driver's judge, each agent turn a task; a conversation that breaks off keeps its turns
    suite = write_desk(
        tmp_path / "desk",
        [
            scripted(
                "corrects-time",
                ["Book the review at 10:00", "Sorry, make it 11:30"],
                time="11:30",
                stop_reason="script_end",
                last_reply="Booked at 11:30.",
            ),
            scripted("breaks-off", ["Book 09:00 with Alice", "now crash please"], time="09:00"),
            simulated(
                "accepts-alternative",
                GOAL,
                time="11:30",
                stop_reason="user_done",
                last_reply="Booked at 11:30.",
            ),
        ],
    )
    folder = suite.parent
    reports, bodies = {}, {}
    with fake_llm_server([], respond=scripted_users({GOAL: USER_LINES})) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-stored")
        for name, flags in (
            ("local", []),
            ("ray", ["--executor", "ray", "--ray-address", ray_cluster.address]),
        ):
            monkeypatch.setenv("CHECKWEIGH_CACHE_DIR", str(tmp_path / f"cache-{name}"))
            done, reports[name] = run(folder, name, "--judge", "openai:user-sim", *flags)
            assert done.code in (0, 1), done.err
            store = Store(f"sqlite:///{folder / f'{name}.db'}")
            stored = store.iter_results(store.get_run("latest").id, with_cases=True)
            bodies[name] = {r.case_id: json.loads(r.body or b"{}") for r in stored}
        assert len(server.requests) == 6  # the simulated user: two lines and "done", each run
    for report in reports.values():  # the judge's latency is the only figure that varies
        report["summary"]["judge"].pop("mean_latency_ms")
    assert comparable(reports["ray"]) == comparable(reports["local"])
    by_id = {r["case_id"]: r for r in reports["ray"]["results"]}
    assert by_id["accepts-alternative"]["agent_error"] is None
    assert {v["state"] for v in by_id["accepts-alternative"]["verdicts"].values()} == {"passed"}
    assert "calendar API unreachable" in by_id["breaks-off"]["agent_error"]
    assert _timeless(bodies["ray"]) == _timeless(bodies["local"])
    broken = Case.model_validate(bodies["ray"]["breaks-off"])
    assert [t.user for t in broken.turns] == ["Book 09:00 with Alice", "now crash please"]


def _timeless(value: Any) -> Any:
    """``value`` without its timings (each step's ``latency_ms`` is measured)."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if k != "latency_ms"}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value
