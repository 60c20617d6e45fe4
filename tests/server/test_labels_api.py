"""Labels written through ``POST /api/labels`` and read back as a judge check's labelling
queue: the fingerprints they are stored with, how they follow the same evidence into a later
run and not changed evidence, several reviewers and their kappa, the errors of bad bodies, and
who may write (same origin, JSON only, the token or a session when one is set)."""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from checkweigh.cli import app as cli
from checkweigh.core import Confusion, LabelSource, evidence_fingerprint, queue_order
from checkweigh.server import create_app
from checkweigh.store import Store, criteria, judged_executions, read_labels
from support import cli_process
from support.html_page import parse
from support.judged_suite import (
    JUDGE,
    QUESTION,
    judged_run_env,
    scripted_judge,
    tone_cases,
    write_tone_suite,
)
from support.postgres import fresh_database
from support.recorded_suite import standard_cases, write_suite

TOKEN = "labels-token-for-tests-0f3c"
ORIGIN = "http://127.0.0.1:8000"
HOSTILE_ID = '<img src=x onerror="window.__pwned=1">'
JSON = {"Content-Type": "application/json"}


class Judged(NamedTuple):
    """Three runs of the tone suite: the first and second on the same cases (the judge saw
    the same prompts), the third with ``tone-05``'s reply changed."""

    url: str
    first: str
    second: str
    changed: str


def _cases(changed: bool = False) -> list[dict[str, Any]]:
    cases = tone_cases(count=10, shouting=3)
    cases.append({**cases[4], "id": HOSTILE_ID})
    if changed:
        trace = cases[5]["trace"]
        trace[-1] = {**trace[-1], "content": "Booked: Alice, Bob, 10:00. Anything else?"}
    return cases


def _run(folder: Path, db: str, cases: list[dict[str, Any]], env: dict[str, str]) -> str:
    suite = write_tone_suite(folder, cases)
    result = CliRunner().invoke(
        cli, ["run", str(suite), "--db", db, "-q", "--judge", JUDGE], env=env
    )
    assert result.exit_code in (0, 1), result.output
    with Store(db) as store:
        return store.get_run("latest").id


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Judged:
    folder = tmp_path_factory.mktemp("labels")
    db = f"sqlite:///{folder / 'runs.db'}"
    with scripted_judge() as judge:
        env = judged_run_env(folder, judge.base_url)
        first = _run(folder / "first", db, _cases(), env)
        second = _run(folder / "second", db, _cases(), env)
        changed = _run(folder / "changed", db, _cases(changed=True), env)
    return Judged(db, first, second, changed)


@pytest.fixture
def store(judged: Judged, tmp_path: Path) -> Iterator[Store]:
    """A copy of the judged runs' store for one test: its labels are its own."""
    copy = tmp_path / "runs.db"
    copy.write_bytes(Path(judged.url.removeprefix("sqlite:///")).read_bytes())
    with Store(f"sqlite:///{copy}") as opened:
        yield opened


@pytest.fixture
def client(store: Store) -> Iterator[TestClient]:
    with TestClient(create_app(store), base_url=ORIGIN) as c:
        yield c


def _label(run: str, case: str, label: bool, **more: Any) -> dict[str, Any]:
    return {"run": run, "check": "polite", "case": case, "label": label, **more}


def _queue(client: TestClient, run: str, **params: Any) -> dict[str, Any]:
    answer = client.get(f"/api/runs/{run}/labels/polite", params=params)
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = answer.json()
    return found


def test_a_label_is_stored_with_the_criterion_and_the_evidence_the_judge_saw(
    client: TestClient, store: Store, judged: Judged
) -> None:
    posted = client.post(
        "/api/labels",
        json=[
            _label(judged.first, "tone-00", False, reviewer="ann", note="shouts"),
            _label(judged.first, "tone-05", True, reviewer="ann"),
        ],
    )
    assert posted.status_code == 201, posted.text
    info = store.get_run(judged.first)
    executions = {e.case_id: e for e in judged_executions(store, info.id, ["polite"])["polite"]}
    criterion = criteria(info.config, ["polite"])["polite"]
    stored = {x.case_id: x for x in read_labels(store, checks=["polite"])}
    assert set(stored) == {"tone-00", "tone-05"}
    for case, label, verdict in (("tone-00", False, "no"), ("tone-05", True, "yes")):
        x = stored[case]
        assert (x.label, x.reviewer, x.run_id, x.repeat) == (label, "ann", info.id, 0)
        assert (x.judge, x.verdict, x.source) == (JUDGE, verdict, LabelSource.API)
        assert x.criterion == criterion is not None
        # the fingerprint of the very prompt the judge was sent for this case
        assert x.evidence == evidence_fingerprint(executions[case].messages)
    assert stored["tone-00"].note == "shouts"
    assert posted.json()[0]["evidence"] == stored["tone-00"].evidence

    # a second run of the same cases: the judge saw the same prompts, the labels apply there
    second = _queue(client, judged.second, order="labelled")
    assert second["progress"]["labelled"] == 2
    assert {(i["case_id"], i["labels"][0]["label"]) for i in second["items"]} == {
        ("tone-00", False),
        ("tone-05", True),
    }
    # tone-05's reply changed: its label is stale there, tone-00's still applies
    changed = _queue(client, judged.changed, order="labelled")
    assert changed["progress"]["labelled"] == 1
    assert changed["progress"]["stale_evidence"] == 1
    assert [i["case_id"] for i in changed["items"]] == ["tone-00"]


def test_the_queue_shows_every_decided_execution_with_what_the_judge_saw(
    client: TestClient, judged: Judged
) -> None:
    q = _queue(client, judged.first, limit=500)
    assert (q["question"], q["judge"], q["order"]) == (QUESTION, JUDGE, "queue")
    assert (q["judged_yes"], q["judged_no"]) == (8, 3)
    assert q["progress"] == {
        "labelled": 0,
        "decided": 11,
        "budget": 50,
        "stale_criterion": 0,
        "stale_evidence": 0,
    }
    assert sorted(i["case_id"] for i in q["items"]) == sorted(c["id"] for c in _cases())
    by_id = {i["case_id"]: i for i in q["items"]}
    assert by_id["tone-01"]["verdict"] == "no"
    assert by_id["tone-01"]["reason"] == "the reply shouts at the user"
    assert "BOOKED!! Alice and Bob at 10:00 1" in by_id["tone-01"]["prompt"]
    assert by_id["tone-06"]["verdict"] == "yes"
    assert "You are a strict evaluator" not in by_id["tone-06"]["prompt"]  # the system message

    # labelled executions leave the queue; the other orders hold the same executions
    client.post("/api/labels", json=_label(judged.first, "tone-06", True))
    q = _queue(client, judged.first, limit=500)
    assert q["progress"]["labelled"] == 1
    assert q["total"] == 10
    assert "tone-06" not in {i["case_id"] for i in q["items"]}
    shuffled = _queue(client, judged.first, order="random", limit=500)
    assert sorted(i["case_id"] for i in shuffled["items"]) == sorted(
        i["case_id"] for i in q["items"]
    )
    assert [i["case_id"] for i in _queue(client, judged.first, order="labelled")["items"]] == [
        "tone-06"
    ]
    # paging and the budget
    page = _queue(client, judged.first, offset=3, limit=2, budget=7)
    assert [i["case_id"] for i in page["items"]] == [i["case_id"] for i in q["items"][3:5]]
    assert page["progress"]["budget"] == 7


def test_the_figures_are_the_labels_calibration_and_the_queue_is_the_cores_order(
    client: TestClient, store: Store, judged: Judged
) -> None:
    run = judged.first
    # people say the judge was wrong on tone-02 (it said no) and on tone-07 (it said yes)
    truth = {"tone-00": False, "tone-01": False, "tone-02": True, "tone-06": True}
    truth |= {"tone-07": False, "tone-08": True}
    body = [_label(run, case, value, reviewer="ann") for case, value in truth.items()]
    assert client.post("/api/labels", json=body).status_code == 201
    q = _queue(client, run, limit=500)
    cal = q["calibration"]
    assert cal["confusion"] == {"true_yes": 2, "false_yes": 1, "false_no": 1, "true_no": 2}
    assert (cal["judged_yes"], cal["judged_no"], cal["labels"]) == (8, 3, 6)
    assert cal["raw_pass_rate"] == pytest.approx(8 / 11)
    # by hand, per verdict: of the judge's 8 yes, people said yes to 2 of 3 labelled; of
    # its 3 no, to 1 of 3: (8 * 2/3 + 3 * 1/3) / 11
    assert cal["calibrated_pass_rate"] == pytest.approx((8 * 2 / 3 + 3 * 1 / 3) / 11)
    assert cal["calibrated_low"] <= cal["calibrated_pass_rate"] <= cal["calibrated_high"]
    assert q["trust"] is None  # the suite sets no bar

    # the queue presents the unlabelled executions in the order the core chooses
    info = store.get_run(run)
    decided = judged_executions(store, info.id, ["polite"])["polite"]
    verdicts = [e.state.value == "passed" for e in decided]
    labelled = {i for i, e in enumerate(decided) if e.case_id in truth}
    confusion = Confusion(true_yes=2, false_yes=1, false_no=1, true_no=2)
    expected = [decided[i].case_id for i in queue_order(verdicts, labelled, confusion)]
    assert [i["case_id"] for i in q["items"]] == expected


def test_a_check_with_a_trust_bar_budgets_its_labels_and_says_what_it_needs(
    tmp_path: Path,
) -> None:
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    suite = write_tone_suite(tmp_path / "suite", _cases(), trust={"min_labels": 5})
    with scripted_judge() as judge:
        env = judged_run_env(tmp_path, judge.base_url)
        result = CliRunner().invoke(
            cli, ["run", str(suite), "--db", db, "-q", "--judge", JUDGE], env=env
        )
    assert result.exit_code in (0, 1, 4), result.output  # 4: a gate the judge cannot decide
    with Store(db) as store, TestClient(create_app(store), base_url=ORIGIN) as c:
        run = store.get_run("latest").id
        body = [_label(run, case, True) for case in ("tone-05", "tone-06")]
        assert c.post("/api/labels", json=body).status_code == 201
        q = _queue(c, run)
        assert q["progress"]["budget"] == 5
        assert q["trust"]["status"] == "inconclusive"
        assert q["trust"]["needs"] == "3 more labels (5 required, 2 made)"
        assert _queue(c, run, budget=9)["progress"]["budget"] == 9
        page = parse(c.get(f"/runs/{run}/label/polite").text)
        assert page.by_id("progress-budget").text == "5"
        assert page.by_id("trust").get("data-status") == "inconclusive"
        assert "needs 3 more labels" in page.by_id("trust").text


def test_a_second_reviewer_is_kept_beside_the_first_and_their_kappa_appears(
    client: TestClient, store: Store, judged: Judged
) -> None:
    run = judged.first
    ann = {"tone-00": False, "tone-01": False, "tone-05": True, "tone-06": True}
    bob = {"tone-00": False, "tone-01": True, "tone-05": True, "tone-06": True}
    for reviewer, answers in (("ann", ann), ("bob", bob)):
        body = [_label(run, case, value, reviewer=reviewer) for case, value in answers.items()]
        assert client.post("/api/labels", json=body).status_code == 201
    # ann changes her mind on tone-06: her label is replaced, not added
    client.post("/api/labels", json=_label(run, "tone-06", False, reviewer="ann"))
    assert len(read_labels(store, checks=["polite"])) == 8
    q = _queue(client, run)
    assert q["reviewers"] == {"ann": 4, "bob": 4}
    assert q["overlap"] == 4
    assert q["progress"]["labelled"] == 4
    # by hand: they agree on 2 of 4 (p_o 0.5); ann says yes 1/4, bob 3/4:
    # p_e = 1/4 * 3/4 + 3/4 * 1/4 = 0.375; kappa = (0.5 - 0.375) / 0.625 = 0.2
    assert q["reviewer_kappa"] == pytest.approx(0.2)
    labelled = _queue(client, run, order="labelled")["items"]
    tone06 = next(i for i in labelled if i["case_id"] == "tone-06")
    assert {(x["reviewer"], x["label"]) for x in tone06["labels"]} == {
        ("ann", False),
        ("bob", True),
    }


@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        ({"check": "polite", "case": "tone-00", "label": True}, 422, "body.run: Field required"),
        ({"run": "RUN", "case": "tone-00", "label": True}, 422, "body.check: Field required"),
        ({"run": "RUN", "check": "polite", "label": True}, 422, "body.case: Field required"),
        (
            {"run": "RUN", "check": "polite", "case": "tone-00", "label": "yes"},
            422,
            "body.label: Input should be a valid boolean",
        ),
        (
            {"run": "RUN", "check": "polite", "case": "tone-00", "label": True, "repeat": "0"},
            422,
            "body.repeat: Input should be a valid integer",
        ),
        (
            {"run": "RUN", "check": "polite", "case": "tone-00", "label": True, "repeat": -1},
            422,
            "body.repeat: Input should be greater than or equal to 0",
        ),
        (
            {"run": "RUN", "check": "polite", "case": "tone-00", "label": True, "verdict": "x"},
            422,
            "body.verdict: unknown field",
        ),
        (
            {"run": "nope", "check": "polite", "case": "tone-00", "label": True},
            404,
            "body.run: no run 'nope'",
        ),
        (
            {"run": "RUN", "check": "tone", "case": "tone-00", "label": True},
            422,
            "body.check: run RUN has no check 'tone'",
        ),
        (
            {"run": "RUN", "check": "polite", "case": "tone-99", "label": True},
            404,
            "body.case: run RUN has no verdict on case 'tone-99'",
        ),
        (
            {"run": "RUN", "check": "polite", "case": "tone-00", "label": True, "repeat": 2},
            404,
            "body.repeat: run RUN has no repeat 2 of that case",
        ),
        (
            {"run": "RUN", "check": "polite", "case": "a\x00b", "label": True},
            404,
            "body.case: run RUN has no verdict on case 'a\\x00b'",
        ),
        ([], 422, "body: expected a label or a non-empty list of labels"),
        ("yes", 422, "body: expected an object with run, check, case and label"),
        (
            [{"run": "RUN", "check": "polite", "case": "tone-00", "label": True}, {"run": "RUN"}],
            422,
            "body[1].check: Field required",
        ),
    ],
)
def test_a_bad_label_is_a_one_line_error_naming_its_field_and_nothing_is_stored(
    client: TestClient, store: Store, judged: Judged, body: Any, status: int, error: str
) -> None:
    body = json.loads(json.dumps(body).replace("RUN", judged.first))
    answer = client.post("/api/labels", json=body)
    assert answer.status_code == status, answer.text
    assert answer.json() == {"error": error.replace("RUN", judged.first)}
    assert read_labels(store) == []


def test_the_queue_of_a_check_that_is_not_judged_or_not_there_is_refused(
    client: TestClient, judged: Judged
) -> None:
    for check, status, error in (
        ("correct_time", 422, f"check: 'correct_time' is not a judge check of run {judged.first}"),
        ("tone", 404, f"check: run {judged.first} has no check 'tone'"),
    ):
        answer = client.get(f"/api/runs/{judged.first}/labels/{check}")
        assert (answer.status_code, answer.json()) == (status, {"error": error})
        page = client.get(f"/runs/{judged.first}/label/{check}")
        assert page.status_code == status
        assert parse(page.text).by_id("error").text == error
    answer = client.get(f"/api/runs/{judged.first}/labels/polite", params={"order": "best"})
    assert answer.status_code == 422
    assert answer.json()["error"].startswith("query parameter order:")


@pytest.mark.parametrize("value", ["9223372036854775808", "-1", "1" + "0" * 40, "x"])
def test_an_out_of_range_number_is_a_422_naming_it(
    client: TestClient, judged: Judged, value: str
) -> None:
    api = f"/api/runs/{judged.first}/labels/polite"
    for name in ("offset", "limit", "budget"):
        answer = client.get(api, params={name: value})
        assert answer.status_code == 422, (name, answer.text)
        assert answer.json()["error"].startswith(f"query parameter {name}: ")
        assert value not in answer.text
    page = client.get(f"/runs/{judged.first}/label/polite", params={"budget": value})
    assert page.status_code == 422
    assert parse(page.text).by_id("error").text.startswith("budget: expected")


def test_a_write_from_another_site_or_not_in_json_is_refused(
    client: TestClient, store: Store, judged: Judged
) -> None:
    body = _label(judged.first, "tone-00", True)
    for headers, status in (
        ({"Origin": "http://evil.example"}, 403),
        ({"Origin": "http://127.0.0.1:9999"}, 403),  # another port is another origin
        ({"Origin": ORIGIN, "Sec-Fetch-Site": "cross-site"}, 403),
    ):
        answer = client.post("/api/labels", json=body, headers=headers)
        assert answer.status_code == status, headers
        assert answer.json() == {"error": "labels are refused from another site's page (Origin)"}
    # a form post (what another site's page can send without asking first) is not JSON
    form = client.post("/api/labels", data={k: str(v) for k, v in body.items()})
    assert form.status_code == 415
    assert read_labels(store) == []
    # this server's own page, and a client that is not a browser, may write
    assert client.post("/api/labels", json=body, headers={"Origin": ORIGIN}).status_code == 201
    assert client.post("/api/labels", json=body).status_code == 201


def test_with_a_token_a_label_needs_it_or_a_session_of_this_origin(
    store: Store, judged: Judged
) -> None:
    body = _label(judged.first, "tone-00", True, reviewer="ann")
    app = create_app(store, token=TOKEN)
    with TestClient(app, base_url=ORIGIN) as c:
        assert c.post("/api/labels", json=body).status_code == 401
        assert c.post("/api/labels", json=body, headers={"Origin": ORIGIN}).status_code == 401
        auth = {"Authorization": f"Bearer {TOKEN}"}
        assert c.post("/api/labels", json=body, headers=auth).status_code == 201
        wrong = {"Authorization": "Bearer not-the-token-at-all-0000"}
        assert c.post("/api/labels", json=body, headers=wrong).status_code == 401
        # signed in on the login page: the session labels from this server's pages only
        signed = c.post("/login", data={"token": TOKEN, "next": "/runs"}, follow_redirects=False)
        assert signed.status_code == 303
        assert c.post("/api/labels", json=body, headers={"Origin": ORIGIN}).status_code == 201
        assert c.post("/api/labels", json=body).status_code == 401  # no Origin: not a page
        other = {"Origin": "http://evil.example"}
        assert c.post("/api/labels", json=body, headers=other).status_code == 401
        # and a session still uploads no run
        assert c.post("/api/runs", json={}, headers={"Origin": ORIGIN}).status_code == 401
    assert [x.reviewer for x in read_labels(store)] == ["ann"]


def test_the_labels_list_filters_by_check_and_case(client: TestClient, judged: Judged) -> None:
    client.post(
        "/api/labels",
        json=[
            _label(judged.first, "tone-00", False),
            _label(judged.first, "tone-05", True),
            {"run": judged.first, "check": "correct_time", "case": "tone-05", "label": True},
        ],
    )
    every = client.get("/api/labels").json()
    assert every["total"] == 3
    by_case = client.get("/api/labels", params={"case": "tone-05"}).json()
    assert {x["check"] for x in by_case["items"]} == {"polite", "correct_time"}
    only = client.get("/api/labels", params={"check": "polite", "case": "tone-05"}).json()
    assert [(x["check"], x["case_id"], x["label"]) for x in only["items"]] == [
        ("polite", "tone-05", True)
    ]
    # a deterministic check made no judge call: its label is bound to its run and repeat
    bound = next(x for x in by_case["items"] if x["check"] == "correct_time")
    assert (bound["evidence"], bound["run_id"], bound["repeat"]) == (None, judged.first, 0)
    assert client.get("/api/labels", params={"case": "a\x00b"}).json() == {"total": 0, "items": []}


ANY_TEXT = st.text(
    st.one_of(
        st.characters(exclude_categories=()),
        st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
    ),
    min_size=1,
    max_size=12,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(note=ANY_TEXT, reviewer=ANY_TEXT)
def test_any_note_and_reviewer_are_stored_and_shown_as_text(
    client: TestClient, judged: Judged, note: str, reviewer: str
) -> None:
    body = _label(judged.first, HOSTILE_ID, False, note=note + "<b>x</b>", reviewer=reviewer)
    # JSON as a browser sends it: a lone surrogate as its \\u escape
    answer = client.post("/api/labels", content=json.dumps(body), headers=JSON)
    assert answer.status_code == 201, answer.text
    stored = answer.json()
    assert stored["case_id"] == HOSTILE_ID
    page = client.get(f"/runs/{judged.first}/label/polite", params={"order": "labelled"})
    assert page.status_code == 200
    item = parse(page.text).one("article", "label-item", data_case_id=HOSTILE_ID)
    said = [li for li in item.all("li") if li.get("data-reviewer") == stored["reviewer"].strip()]
    assert len(said) == 1
    assert " ".join(stored["note"].split()) in said[0].text
    assert "<b>x</b>" not in page.text
    assert html.escape("<b>x</b>", quote=False) in page.text
    assert HOSTILE_ID not in page.text


def test_the_run_page_links_each_judge_check_to_its_queue_with_its_labelled_count(
    client: TestClient, judged: Judged
) -> None:
    # before any label: the counts, no calibrated rate
    tree = parse(client.get(f"/runs/{judged.first}").text)
    entry = tree.by_id("labelling").one(cls="labelling-check", data_check="polite")
    assert (entry.get("data-labelled"), entry.get("data-decided")) == ("0", "11")
    assert entry.all(cls="calibrated") == []
    client.post("/api/labels", json=_label(judged.first, "tone-00", False))
    for run, labelled in ((judged.first, "1"), (judged.second, "1"), (judged.changed, "1")):
        tree = parse(client.get(f"/runs/{run}").text)
        entry = tree.by_id("labelling").one(cls="labelling-check", data_check="polite")
        assert (entry.get("data-labelled"), entry.get("data-decided")) == (labelled, "11")
        assert entry.one("a").get("href") == f"/runs/{run}/label/polite"
        # the calibrated rate beside the raw one, as the labels stand now
        queue = _queue(client, run)
        calibration = queue["calibration"]
        shown = entry.one(cls="calibrated").text
        assert shown.startswith(f"{calibration['calibrated_pass_rate']:.3f} (")
        assert f"{calibration['raw_pass_rate']:.3f} raw" in entry.text


def test_a_run_without_a_judge_check_shows_no_labelling(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    suite = write_suite(tmp_path / "suite", standard_cases())
    assert CliRunner().invoke(cli, ["run", str(suite), "--db", db, "-q"]).exit_code in (0, 1)
    with Store(db) as store, TestClient(create_app(store)) as c:
        run = store.get_run("latest").id
        assert parse(c.get(f"/runs/{run}").text).all(id="labelling") == []
        answer = c.get(f"/api/runs/{run}/labels/correct_time")
        assert answer.status_code == 422


def test_labels_round_trip_through_postgresql(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with fresh_database() as url, scripted_judge() as judge:
        for name, value in judged_run_env(tmp_path, judge.base_url).items():
            monkeypatch.setenv(name, value)
        suite = write_tone_suite(tmp_path / "suite", _cases())
        done = cli_process.run(["run", str(suite), "--db", url, "-q", "--judge", JUDGE], tmp_path)
        assert done.code in (0, 1), done.err
        with Store(url) as store, TestClient(create_app(store), base_url=ORIGIN) as c:
            run = store.get_run("latest").id
            body = [
                _label(run, HOSTILE_ID, False, reviewer="ann", note="odd \ud800 <b>"),
                _label(run, "tone-06", True, reviewer="bob"),
            ]
            answer = c.post("/api/labels", content=json.dumps(body), headers=JSON)
            assert answer.status_code == 201, answer.text
            missing = c.post("/api/labels", json=_label(run, "a\x00b", True))
            assert missing.status_code == 404
            q = _queue(c, run, order="labelled")
            stored = {x.case_id: x for x in read_labels(store)}
        assert q["progress"]["labelled"] == 2
        assert stored[HOSTILE_ID].note == "odd \\ud800 <b>"
        assert stored["tone-06"].evidence is not None
        assert [x["note"] for i in q["items"] for x in i["labels"] if x["reviewer"] == "ann"] == [
            "odd \\ud800 <b>"
        ]
