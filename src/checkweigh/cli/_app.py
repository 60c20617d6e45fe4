"""The ``checkweigh`` command: run a suite, list runs, show a run.

Exit codes: 0 gates passed, 1 gates failed, 2 usage or input error (including a database that
cannot be opened or written), 3 internal error (a bug), 130 interrupted.
"""

from __future__ import annotations

import os
import signal
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console

from .._process import real_exit
from ..errors import CheckweighError, InputError, StoreError
from ..reports import clean, plain
from ._common import (
    EXIT_GATES_FAILED,
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    DbOption,
    OnBadRecordOption,
    QuietOnClosedPipe,
    app,
    bad_record_choice,
    check_writable,
    consoles,
    fail_input,
    gates_exit,
    labelled,
    user_output_inert,
    warn_abandoned,
)

if TYPE_CHECKING:
    from rich.progress import Progress

    from ..core import CaseResult
    from ..runs import RunOutcome, RunStopped
    from ..store import Store

# The engine, the store (SQLAlchemy) and the service load inside the commands that use them,
# so that `checkweigh --help` and the other commands start without them.

JsonOption = Annotated[
    Path | None, typer.Option("--json", help="Write the full results as JSON here.")
]
JsonCasesOption = Annotated[
    bool,
    typer.Option(
        "--json-cases",
        help="Put each result's evaluated case (input, trace, final state) in the --json file, "
        "so a server it is uploaded to shows the conversations.",
    ),
]
JunitOption = Annotated[Path | None, typer.Option("--junit", help="Write a JUnit XML report here.")]
MarkdownOption = Annotated[
    Path | None,
    typer.Option("--markdown", help="Write a Markdown summary here (PR comment, job summary)."),
]
OutputOption = Annotated[
    list[str] | None,
    typer.Option(
        "--output",
        metavar="NAME=PATH",
        help="Write the report output NAME here (repeatable): json, junit, markdown or an "
        "installed plugin's (checkweigh plugins lists them).",
        show_default=False,
    ),
]


def _exit_now(_signum: int, _frame: FrameType | None = None) -> NoReturn:
    """End the process at once with 130 (a signal outside a run, or a second one in it)."""
    _flush_stdio()
    real_exit(EXIT_INTERRUPTED)


def _flush_stdio() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can be said
            continue


@app.command()
def run(
    suite: Annotated[Path, typer.Argument(help="The suite file (YAML).", show_default=False)],
    repeat: Annotated[
        int | None,
        typer.Option(
            "--repeat",
            min=1,
            max=10_000,
            help="Run each case K times (default: the suite's repeats, else 1).",
            show_default=False,
        ),
    ] = None,
    json_out: JsonOption = None,
    json_cases: JsonCasesOption = False,
    db: DbOption = None,
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency",
            min=1,
            max=1024,
            help="Agent calls at once (default: the target's concurrency). Recorded cases "
            "are admitted as the judge's pool takes them (--judge-concurrency).",
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    judge_spec: Annotated[
        str | None,
        typer.Option("--judge", help="PROVIDER:MODEL for judge checks, e.g. ollama:llama3.1."),
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Bypass the judge cache.")] = False,
    replay: Annotated[
        bool, typer.Option("--replay", help="Judge answers from the cache only; a miss errors.")
    ] = False,
    judge_concurrency: Annotated[
        int | None,
        typer.Option(
            "--judge-concurrency",
            min=1,
            max=1024,
            help="Judge calls at once [32; 2 for a local inference server].",
            show_default=False,
        ),
    ] = None,
    judge_timeout: Annotated[
        float | None,
        typer.Option("--judge-timeout", help="Seconds per judge attempt [60].", show_default=False),
    ] = None,
    judge_retries: Annotated[
        int | None,
        typer.Option("--judge-retries", help="Retries per judge call [10].", show_default=False),
    ] = None,
    judge_deadline: Annotated[
        float | None,
        typer.Option(
            "--judge-deadline",
            help="Seconds one judge call may take, retries included [120].",
            show_default=False,
        ),
    ] = None,
    judge_format: Annotated[
        str | None,
        typer.Option(
            "--judge-format",
            help="Structured output: auto, json_schema, json_object or prompt \\[auto].",
            show_default=False,
        ),
    ] = None,
    judge_batch: Annotated[
        bool, typer.Option("--judge-batch", help="One checklist call per case for yes/no checks.")
    ] = False,
    judge_mode: Annotated[
        str | None,
        typer.Option(
            "--judge-mode",
            metavar="sync|batch",
            help="batch: send the judge calls of recorded cases through the provider's batch "
            "API, at half the price (answers within hours) \\[suite's judge: {mode}, else sync].",
            show_default=False,
        ),
    ] = None,
    judge_poll: Annotated[
        float | None,
        typer.Option(
            "--judge-poll",
            help="Seconds between two polls of a judge batch [30].",
            show_default=False,
        ),
    ] = None,
    judge_retry_sync: Annotated[
        bool,
        typer.Option(
            "--judge-retry-sync",
            help="Ask synchronously for the judge calls a batch did not answer (expired, "
            "cancelled, errored) instead of ending their verdicts errored \\[suite's judge: "
            "{retry_sync}].",
            show_default=False,
        ),
    ] = False,
    resume: Annotated[
        str | None,
        typer.Option(
            "--resume",
            metavar="RUN",
            help="Finish RUN, a batch-judged run that was stopped while waiting for its "
            "batches (same suite and flags): its batches are polled again, never resubmitted.",
            show_default=False,
        ),
    ] = None,
    graded_weight: Annotated[
        list[str] | None,
        typer.Option(
            "--graded-weight",
            help="METRIC=WEIGHT for graded checks, this run only (repeatable; 0 drops a metric).",
        ),
    ] = None,
    judge_prices: Annotated[
        str | None,
        typer.Option(
            "--judge-prices",
            help="USD per million tokens, INPUT,OUTPUT[,CACHED_INPUT[,CACHE_WRITE]] "
            "(e.g. 0.15,0.6); prompt-cache rates left out are the provider's usual ones.",
        ),
    ] = None,
    judge_budget: Annotated[
        float | None,
        typer.Option(
            "--judge-budget",
            help="Send no judge call once they cost this many USD (needs --judge-prices).",
            show_default=False,
        ),
    ] = None,
    pass_threshold: Annotated[
        float | None,
        typer.Option(
            "--pass-threshold",
            help="Score (0-100) a case without expected outcomes needs \\[suite: 75].",
            show_default=False,
        ),
    ] = None,
    metrics_threshold: Annotated[
        float | None,
        typer.Option(
            "--metrics-threshold",
            help="Mean case score (0-100) the run needs \\[suite: 80].",
            show_default=False,
        ),
    ] = None,
    cases_threshold: Annotated[
        float | None,
        typer.Option(
            "--cases-threshold",
            help="Percentage of executions that must pass \\[suite: 100].",
            show_default=False,
        ),
    ] = None,
    junit: JunitOption = None,
    markdown: MarkdownOption = None,
    output: OutputOption = None,
    cases: Annotated[
        Path | None,
        typer.Option(
            "--cases",
            help="Read this file instead of the suite's cases (in the suite's format).",
            show_default=False,
        ),
    ] = None,
    on_bad_record: OnBadRecordOption = None,
    record_agent: Annotated[
        Path | None,
        typer.Option(
            "--record-agent",
            metavar="DIR",
            help="Record every agent call (request, reply, time) into DIR, replacing a "
            "recording there.",
            show_default=False,
        ),
    ] = None,
    replay_agent: Annotated[
        Path | None,
        typer.Option(
            "--replay-agent",
            metavar="DIR",
            help="Answer the agent calls from the recording in DIR; no agent runs.",
            show_default=False,
        ),
    ] = None,
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            min=1,
            max=256,
            help="Worker processes that parse and score recorded cases (1: in this process): "
            "the processes executor's size, and its shorthand.",
        ),
    ] = 1,
    executor: Annotated[
        str,
        typer.Option(
            "--executor",
            help="Where cases run: local, processes (see --workers), ray (agents and checks as "
            "Ray tasks; needs checkweigh\\[ray]), or an installed plugin's executor.",
        ),
    ] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address",
            metavar="ADDR",
            help="The Ray cluster to join, e.g. 10.0.0.5:6379 \\[Ray's default].",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Run SUITE, store the results and print the report."""
    if (workers > 1 and executor in ("local", "processes")) or executor == "processes":
        from .._workers_server import start_method

        start_method()  # the workers' server imports while this process does
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from ..core import CaseState
    from ..judges import CachedJudge
    from ..runs import RunStart, RunStopped, StopToken, stop_on_signals
    from ..service import (
        Exports,
        JudgeRequest,
        RunRequest,
        Thresholds,
        parse_outputs,
        run_request,
        write_exports,
    )

    out, err = consoles()
    try:
        request = RunRequest(
            suite=suite,
            cases=cases,
            on_bad_record=bad_record_choice(on_bad_record),
            db=db,
            repeat=repeat,
            concurrency=concurrency,
            judge=JudgeRequest(
                spec=judge_spec,
                no_cache=no_cache,
                replay=replay,
                concurrency=judge_concurrency,
                timeout_s=judge_timeout,
                retries=judge_retries,
                deadline_s=judge_deadline,
                format=judge_format,
                batch=judge_batch,
                prices=judge_prices,
                budget_usd=judge_budget,
                mode=_judge_mode(judge_mode),
                poll_s=judge_poll,
                retry_sync=True if judge_retry_sync else None,  # else the suite's
            ),
            resume=resume,
            graded_weights=tuple(graded_weight or ()),
            thresholds=Thresholds(
                pass_threshold=pass_threshold,
                metrics_threshold=metrics_threshold,
                cases_threshold=cases_threshold,
            ),
            exports=Exports(
                json_path=json_out,
                json_cases=json_cases,
                junit=junit,
                markdown=markdown,
                outputs=parse_outputs(output or ()),
            ),
            record_agent=record_agent,
            replay_agent=replay_agent,
            workers=workers,
            executor=executor,
            ray_address=ray_address,
        )
    except InputError as exc:
        fail_input(err, exc)
    progress = Progress(
        TextColumn("{task.description}", style="bold", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[errored]} errored"),
        TextColumn("{task.fields[judge]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err,
        disable=quiet,
        transient=True,
    )
    errored = 0
    started: list[RunStart] = []  # the checked run, once it starts

    def start(begun: RunStart) -> None:
        started.append(begun)
        progress.add_task(clean(begun.suite.name), total=begun.total, errored=0, judge="")
        progress.start()

    def tick(result: CaseResult) -> None:
        nonlocal errored
        begun = started[0]
        # the case verdict, as the summary counts it (an errored expected outcome included)
        errored += begun.policy.state(result)[0] is CaseState.ERRORED
        calls = ""
        if isinstance(begun.judge, CachedJudge):
            stats = begun.judge.stats()
            calls = f"judge {stats.calls} calls, {stats.cache_hits} cached, {stats.errors} errors"
        progress.update(progress.task_ids[0], advance=1, errored=errored, judge=calls)

    def ticks(stored: int, errored_now: int) -> None:  # chunks that worker processes stored
        nonlocal errored
        errored += errored_now
        progress.update(progress.task_ids[0], advance=stored, errored=errored)

    stopped: RunStopped | None = None
    # one signal stops the run between cases, a second ends the process at once
    folder = Path.cwd()  # an agent may change it; the output files are relative to this one
    with stop_on_signals(StopToken(), _exit_now) as stop, user_output_inert():
        try:
            report = run_request(
                request,
                on_start=start,
                on_result=tick,
                on_progress=ticks,
                stop=stop,
                on_note=lambda line: err.print(plain(line), soft_wrap=True),
            )
            outcome = report.outcome
        except InputError as exc:  # bad input; a broken agent recording; a bad case --workers met
            _end(progress, started)
            fail_input(err, exc)
        except StoreError as exc:
            _end(progress, started)
            _fail_store(err, exc)
        except RunStopped as exc:
            stopped = exc
            outcome = exc.outcome
        finally:
            _end(progress, started)
            os.chdir(folder)
    loaded, store = started[0].suite, started[0].store  # the run started: it was stored
    # the run is stored: a first signal now lets the report and the files be finished and the
    # exit code stay what the run earned; a second one ends the process at once
    late = _LateSignal()
    with late:
        _report(out, outcome, loaded.name, store)
        try:
            write_exports(store, outcome, request.exports, _say(out))
        except InputError as exc:
            fail_input(err, exc)
    if stopped is not None:
        _say_resume(err, store, stopped, suite)
        _stopped(err, stopped)
    if late.received:
        err.print(
            plain(f"note: signal received after run {outcome.run_id} was stored; it is complete"),
            soft_wrap=True,
        )
    raise typer.Exit(gates_exit(outcome.summary))


def _end(progress: Progress, started: list[Any]) -> None:
    """The progress bar gone, if the run started it (a refused run prints only its error)."""
    if started:
        progress.stop()


class _LateSignal:
    """While the report of a stored run is written: the first signal is noted, a second one
    ends the process with 130."""

    def __init__(self) -> None:
        self.received = False
        self._before: dict[int, Any] = {}

    def _noted(self, _signum: int, _frame: FrameType | None) -> None:
        if self.received:
            _exit_now(_signum)
        self.received = True

    def __enter__(self) -> None:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            self._before[signum] = signal.signal(signum, self._noted)

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._before.items():
            signal.signal(signum, handler)


def _stopped(err: Console, stopped: RunStopped) -> NoReturn:
    """Say why the run stopped early and what it kept (the count the store holds)."""
    from ..runs import Interrupted

    cause, outcome = stopped.cause, stopped.outcome
    kept = f"run {outcome.run_id} kept {outcome.kept} finished execution(s), marked incomplete"
    if isinstance(cause, Interrupted | KeyboardInterrupt):
        err.print(labelled("interrupted:", kept), soft_wrap=True)
        raise typer.Exit(EXIT_INTERRUPTED)
    if isinstance(cause, InputError | StoreError):
        text = cause.one_line() if isinstance(cause, InputError) else str(cause)
        err.print(labelled("error:", f"{text}; {kept}"), soft_wrap=True)
        raise typer.Exit(EXIT_INPUT)
    err.print(plain(kept), soft_wrap=True)
    raise cause


def _judge_mode(value: str | None) -> str | None:
    if value is not None and value not in ("sync", "batch"):
        raise InputError(f"expected sync or batch, got {value!r}", field="--judge-mode")
    return value


def _say_resume(err: Console, store: Store, stopped: RunStopped, suite: Path) -> None:
    """How to finish a run stopped while it waited for its judge batches."""
    from ..store import stored_batches

    run_id = stopped.outcome.run_id
    try:
        batches = stored_batches(store, run_id)
    except StoreError:
        return
    if batches:
        ids = ", ".join(b.batch_id for b in batches)
        err.print(
            labelled(
                "resume:",
                f"the judge batches ({ids}) are kept with the run: finish it with "
                f"`checkweigh run {suite} --resume {run_id}` and the same flags",
            ),
            soft_wrap=True,
        )


def _fail_store(err: Console, exc: StoreError) -> NoReturn:
    err.print(labelled("error:", str(exc)), soft_wrap=True)
    raise typer.Exit(EXIT_INPUT)


def _report(out: Console, outcome: RunOutcome, title: str, store: Store) -> None:
    from ..reports import render_summary

    render_summary(
        out, outcome.summary, title=title, run_id=outcome.run_id, status=outcome.status.value
    )
    out.print(plain(f"stored in {store.safe_url}", style="dim"))


def _say(out: Console) -> Callable[[str], None]:
    """Print a line of what was written (as plain text: paths are the user's)."""
    return lambda line: out.print(plain(line))


@app.command("runs")
def list_runs(
    db: DbOption = None,
    limit: Annotated[
        int, typer.Option("--limit", min=1, max=1_000_000, help="How many runs.")
    ] = 20,
    suite: Annotated[str | None, typer.Option("--suite", help="Only this suite.")] = None,
) -> None:
    """List stored runs, newest first."""
    from rich.table import Table

    from ..store import Store

    out, err = consoles()
    try:
        store = Store(db)
        runs = store.list_runs(limit=limit, suite=suite)
    except InputError as exc:
        fail_input(err, exc)
    except StoreError as exc:
        _fail_store(err, exc)
    if not runs:
        out.print(plain(f"no runs in {store.safe_url}"))
        return
    table = Table(header_style="bold")
    for col in ("run", "suite", "started", "status", "executions", "TCR", "gates"):
        table.add_column(col)
    for r in runs:
        first = r.summary.rubrics[0] if r.summary and r.summary.rubrics else None
        tcr = f"{first.rubric} {first.tcr:.3f}" if first and first.tcr is not None else "—"
        gates = {"passed": "pass", "failed": "FAIL"}.get(r.verdict().word, "not decided")
        table.add_row(
            r.id,
            plain(r.suite),
            r.created_at.strftime("%Y-%m-%d %H:%M:%S"),
            r.status.value + (" (abandoned)" if r.abandoned else ""),
            str(r.executions),
            plain(tcr),
            gates,
        )
    out.print(table)
    for r in runs:
        warn_abandoned(err, r)


@app.command()
def show(
    run_ref: Annotated[
        str, typer.Argument(metavar="RUN", help="Run id, id prefix, latest or previous.")
    ],
    db: DbOption = None,
    json_out: JsonOption = None,
    json_cases: JsonCasesOption = False,
    junit: JunitOption = None,
    markdown: MarkdownOption = None,
    output: OutputOption = None,
) -> None:
    """Print the report of a stored run."""
    from ..runs import RunOutcome
    from ..service import Exports, parse_outputs, write_exports
    from ..store import RunStatus, Store, database_file

    out, err = consoles()
    try:
        exports = Exports(
            json_path=json_out,
            json_cases=json_cases,
            junit=junit,
            markdown=markdown,
            outputs=parse_outputs(output or ()),
        )
        for path, flag in exports.files():
            check_writable(path, flag, {"the database": database_file(db)})
        store = Store(db)
        info = store.get_run(run_ref)
    except InputError as exc:
        fail_input(err, exc)
    except StoreError as exc:
        _fail_store(err, exc)
    if info.summary is None:
        fail_input(
            err,
            InputError(
                f"run {info.id} is still {info.status.value} (its process is alive); show it "
                "once it has finished",
                field="RUN",
            ),
        )
    warn_abandoned(err, info)
    outcome = RunOutcome(info.id, info.status, info.summary, info.executions)
    _report(out, outcome, info.suite, store)
    try:
        write_exports(store, outcome, exports, _say(out))
    except InputError as exc:
        fail_input(err, exc)
    if info.status is not RunStatus.COMPLETE:
        # its gates were measured on part of the cases: a CI step reading it must not pass
        err.print(
            labelled("gates:", f"not passed: run {info.id} is {info.status.value}"),
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_GATES_FAILED)
    raise typer.Exit(gates_exit(info.summary))


def main() -> None:
    """Console-script entry point: runs the command and maps what ends it to an exit code.

    An error of the user's input or environment exits 2 with one line; anything unexpected is
    a bug: one line naming the exception (the traceback with ``CHECKWEIGH_DEBUG=1``), exit 3.
    """
    # outside a run a signal ends the process at once; `run` stops gracefully instead
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _exit_now)
    sys.stdout, sys.stderr = QuietOnClosedPipe(sys.stdout), QuietOnClosedPipe(sys.stderr)
    code = _main()
    _flush_stdio()
    # Everything is stored and printed: leave now. Interpreter shutdown would wait for any
    # thread a user's agent left behind (blocked, timed out, or a non-daemon thread of its own)
    # and, once it resets the signal handlers, a late Ctrl-C would kill the process with a
    # signal instead of this exit code.
    real_exit(code)


def _main() -> int:
    try:
        return _command()
    finally:
        # the process leaves with os._exit: nothing else would checkpoint a SQLite file's log
        if (stores := sys.modules.get("checkweigh.store._store")) is not None:
            stores.close_stores()


def _command() -> int:
    try:
        app()
    except SystemExit as exc:
        return _exit_code(exc.code)
    except CheckweighError as exc:
        Console(stderr=True).print(labelled("error:", str(exc)), soft_wrap=True)
        return EXIT_INPUT
    except BaseException as exc:  # noqa: BLE001 - a bug: one line and its own exit code
        if os.environ.get("CHECKWEIGH_DEBUG") == "1":
            traceback.print_exc()
        text = " ".join(str(exc).split())[:300]
        Console(stderr=True).print(
            labelled(
                "internal error:", f"{type(exc).__name__}: {text}" if text else type(exc).__name__
            ),
            plain(
                "(a bug in checkweigh: please report it; CHECKWEIGH_DEBUG=1 shows the traceback)"
            ),
            soft_wrap=True,
        )
        return EXIT_INTERNAL
    return 0


def _exit_code(code: object) -> int:
    """SystemExit's code as the process's exit status. checkweigh exits with numbers only: a
    message instead is printed, as the interpreter would, but as the bug it is (not 1, which
    means a failed gate)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(f"internal error: exit with {code!r}", file=sys.stderr)
    return EXIT_INTERNAL
