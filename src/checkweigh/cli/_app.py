"""The ``checkweigh`` command: run a suite, list runs, show a run.

Exit codes: 0 gates passed, 1 gates failed, 2 usage or input error (including a database that
cannot be opened or written), 3 internal error (a bug), 130 interrupted.
"""

from __future__ import annotations

import math
import os
import signal
import sys
import traceback
from pathlib import Path
from types import FrameType
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from .._process import real_exit
from ..core import CaseResult, CaseState, PassMode, PassPolicy
from ..errors import CheckweighError, InputError, StoreError
from ..judges import (
    CachedJudge,
    CacheMode,
    GradedJudgeCheck,
    JudgeCache,
    JudgeOptions,
    MeteredJudge,
    Prices,
    cache_dir,
    make_judge,
)
from ..reports import clean, plain, render_summary, write_json_report, write_junit, write_markdown
from ..runs import (
    Interrupted,
    RunOutcome,
    RunStopped,
    StopToken,
    execute,
    stop_on_signals,
)
from ..store import RunStatus, Store, database_file, in_memory
from ..suites import Suite, load_suite
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
    labelled,
    user_output_inert,
    warn_abandoned,
)

JsonOption = Annotated[
    Path | None, typer.Option("--json", help="Write the full results as JSON here.")
]
JunitOption = Annotated[Path | None, typer.Option("--junit", help="Write a JUnit XML report here.")]
MarkdownOption = Annotated[
    Path | None,
    typer.Option("--markdown", help="Write a Markdown summary here (PR comment, job summary)."),
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
        int, typer.Option("--repeat", min=1, max=10_000, help="Run each case K times.")
    ] = 1,
    json_out: JsonOption = None,
    db: DbOption = None,
    concurrency: Annotated[
        int | None,
        typer.Option("--concurrency", min=1, max=1024, help="Cases at once (agent targets)."),
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
            help="Judge calls at once [16; 2 for a server on this machine].",
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
            help="Structured output: auto, json_schema, json_object or prompt [auto].",
            show_default=False,
        ),
    ] = None,
    judge_batch: Annotated[
        bool, typer.Option("--judge-batch", help="One checklist call per case for yes/no checks.")
    ] = False,
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
            "--judge-prices", help="USD per million tokens, INPUT,OUTPUT (e.g. 0.15,0.6)."
        ),
    ] = None,
    pass_threshold: Annotated[
        float | None,
        typer.Option(
            "--pass-threshold",
            help="Score (0-100) a case without expected outcomes needs [suite: 75].",
            show_default=False,
        ),
    ] = None,
    metrics_threshold: Annotated[
        float | None,
        typer.Option(
            "--metrics-threshold",
            help="Mean case score (0-100) the run needs [suite: 80].",
            show_default=False,
        ),
    ] = None,
    cases_threshold: Annotated[
        float | None,
        typer.Option(
            "--cases-threshold",
            help="Percentage of executions that must pass [suite: 100].",
            show_default=False,
        ),
    ] = None,
    junit: JunitOption = None,
    markdown: MarkdownOption = None,
    cases: Annotated[
        Path | None,
        typer.Option(
            "--cases",
            help="Read this file instead of the suite's cases (in the suite's format).",
            show_default=False,
        ),
    ] = None,
    on_bad_record: OnBadRecordOption = None,
) -> None:
    """Run SUITE, store the results and print the report."""
    out, err = consoles()
    try:
        prices = _prices(judge_prices)
        loaded = load_suite(suite)
        if cases is not None or on_bad_record is not None:
            loaded = loaded.with_cases(cases, bad_record_choice(on_bad_record))
        block = loaded.spec.judge.settings() if loaded.spec.judge else None
        judge = _judge(
            judge_spec,
            no_cache=no_cache,
            replay=replay,
            options=JudgeOptions.build(
                block,
                timeout_s=judge_timeout,
                retries=judge_retries,
                deadline_s=judge_deadline,
                format=judge_format,
                concurrency=judge_concurrency,
            ),
            prices=prices,
        )
        weights = _graded_weights(graded_weight or [], loaded)
        if pass_threshold is not None and loaded.policy.pass_policy is PassMode.ALL_CHECKS:
            raise InputError(
                "the suite's pass_policy is all_checks, which uses no score threshold",
                field="--pass-threshold",
            )
        policy = loaded.policy.with_thresholds(
            _percent(pass_threshold, "--pass-threshold"),
            _percent(metrics_threshold, "--metrics-threshold"),
            _percent(cases_threshold, "--cases-threshold"),
        )
        total = loaded.cases.count() * repeat
        if total == 0:
            raise InputError("the cases file holds no cases", file=loaded.cases_path)
        if in_memory(db):
            # e.g. sqlite:///$DB with $DB unset: "stored", then gone when the command ends
            raise InputError(
                f"{db or os.environ.get('CHECKWEIGH_DB')!r} is an in-memory database: the run "
                "would be lost when the command ends; give a file, e.g. sqlite:///results.db",
                field="--db",
            )
        inputs = {
            "the database": database_file(db),
            "the suite": suite,
            "the cases file": loaded.cases_path,
        }
        for path, flag in ((json_out, "--json"), (junit, "--junit"), (markdown, "--markdown")):
            if path is not None:
                check_writable(path, flag, inputs)
        store = Store(db)
    except InputError as exc:
        fail_input(err, exc)
    except StoreError as exc:
        _fail_store(err, exc)
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
    task = progress.add_task(clean(loaded.name), total=total, errored=0, judge="")
    errored = 0

    def tick(result: CaseResult) -> None:
        nonlocal errored
        # the case verdict, as the summary counts it (an errored expected outcome included)
        errored += policy.state(result)[0] is CaseState.ERRORED
        calls = ""
        if judge is not None:
            stats = judge.stats()
            calls = f"judge {stats.calls} calls, {stats.cache_hits} cached, {stats.errors} errors"
        progress.update(task, advance=1, errored=errored, judge=calls)

    stopped: RunStopped | None = None
    # one signal stops the run between cases, a second ends the process at once
    folder = Path.cwd()  # an agent may change it; the output files are relative to this one
    with progress, stop_on_signals(StopToken(), _exit_now) as stop, user_output_inert():
        try:
            outcome = execute(
                loaded,
                store,
                repeat=repeat,
                concurrency=concurrency,
                on_result=tick,
                judge=judge,
                judge_batch=judge_batch,
                graded_weights=weights,
                policy=policy,
                stop=stop,
            )
        except RunStopped as exc:
            stopped = exc
            outcome = exc.outcome
        finally:
            os.chdir(folder)
    _report(out, outcome, loaded.name, store)
    try:
        _exports(out, store, outcome, json_out, junit, markdown)
    except InputError as exc:
        fail_input(err, exc)
    if stopped is not None:
        _stopped(err, stopped)
    raise typer.Exit(0 if outcome.summary.gates_passed else EXIT_GATES_FAILED)


def _stopped(err: Console, stopped: RunStopped) -> NoReturn:
    """Say why the run stopped early and what it kept (the count the store holds)."""
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


def _fail_store(err: Console, exc: StoreError) -> NoReturn:
    err.print(labelled("error:", str(exc)), soft_wrap=True)
    raise typer.Exit(EXIT_INPUT)


def _graded_weights(items: list[str], suite: Suite) -> dict[str, float]:
    """``METRIC=WEIGHT`` flags, checked against every graded check of the suite."""
    weights: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            weights[name.strip()] = float(value)
        except ValueError:
            sep = ""
        if not sep or not name.strip():
            raise InputError(f"expected METRIC=WEIGHT, got {item!r}", field="--graded-weight")
    graded = [c.check for c in suite.checks.values() if isinstance(c.check, GradedJudgeCheck)]
    if weights and not graded:
        raise InputError("the suite has no graded check (type: graded)", field="--graded-weight")
    for check in graded:
        try:
            check.with_weights(weights)
        except ValueError as exc:
            raise InputError(str(exc), field="--graded-weight") from None
    return weights


def _percent(value: float | None, flag: str) -> float | None:
    if value is not None and not 0.0 <= value <= 100.0:
        raise InputError(f"expected a percentage from 0 to 100, got {value:g}", field=flag)
    return value


def _prices(text: str | None) -> Prices | None:
    if text is None:
        return None
    try:
        low, high = (float(x) for x in text.split(","))
    except ValueError:
        raise InputError(
            f"expected INPUT,OUTPUT USD per million tokens, e.g. 0.15,0.6; got {text!r}",
            field="--judge-prices",
        ) from None
    if not (low >= 0 and high >= 0 and math.isfinite(low + high)):  # NaN fails every >=
        raise InputError(f"prices must be finite and >= 0, got {text!r}", field="--judge-prices")
    return Prices(low, high)


def _judge(
    spec: str | None,
    *,
    no_cache: bool,
    replay: bool,
    options: JudgeOptions | None = None,
    prices: Prices | None = None,
) -> CachedJudge | None:
    """The run's judge behind its cache, from the --judge, --no-cache and --replay flags
    and the judge options (suite ``judge:`` block overridden by the --judge-* flags)."""
    if spec is None:
        if replay or no_cache:
            raise InputError("--replay and --no-cache apply to a judge: give --judge too")
        return None
    if replay and no_cache:
        raise InputError("--replay reads only the cache and --no-cache bypasses it: pick one")
    mode = CacheMode.REPLAY if replay else CacheMode.BYPASS if no_cache else CacheMode.USE
    options = options or JudgeOptions()
    model = make_judge(spec, options=options, offline=replay)
    options = options.for_judge(model)
    metered = MeteredJudge(model, concurrency=options.limit, prices=prices, options=options)
    return CachedJudge(metered, JudgeCache(cache_dir()), mode)


def _report(out: Console, outcome: RunOutcome, title: str, store: Store) -> None:
    render_summary(
        out, outcome.summary, title=title, run_id=outcome.run_id, status=outcome.status.value
    )
    out.print(plain(f"stored in {store.safe_url}", style="dim"))


def _exports(
    out: Console,
    store: Store,
    outcome: RunOutcome,
    json_out: Path | None,
    junit: Path | None,
    markdown: Path | None,
) -> None:
    """Write the requested files; a failure names the file and keeps the stored run."""
    if json_out is None and junit is None and markdown is None:
        return
    info = store.get_run(outcome.run_id)
    for path, flag in ((json_out, "--json"), (junit, "--junit"), (markdown, "--markdown")):
        if path is None:
            continue
        try:
            if flag == "--json":
                n = write_json_report(
                    path,
                    run=info.model_dump(mode="json", exclude={"summary"}),
                    summary=outcome.summary,
                    results=store.iter_results(outcome.run_id),
                    policy=PassPolicy.from_snapshot(info.config.get("thresholds")),
                )
                out.print(plain(f"wrote {n} result(s) to {path}"))
            elif flag == "--junit":
                n = write_junit(
                    path,
                    suite=info.suite,
                    run_id=info.id,
                    policy=PassPolicy.from_snapshot(info.config.get("thresholds")),
                    summary=outcome.summary,
                    results=store.iter_results(outcome.run_id),
                    repeats=info.repeat > 1,
                )
                out.print(plain(f"wrote {n} test case(s) to {path}"))
            else:
                write_markdown(
                    path,
                    suite=info.suite,
                    run_id=info.id,
                    status=outcome.status.value,
                    summary=outcome.summary,
                )
                out.print(plain(f"wrote the Markdown summary to {path}"))
        except OSError as exc:
            raise InputError(
                f"cannot write {path}: {exc.strerror or exc}; the run is stored as "
                f"{outcome.run_id}",
                field=flag,
            ) from None


@app.command("runs")
def list_runs(
    db: DbOption = None,
    limit: Annotated[
        int, typer.Option("--limit", min=1, max=1_000_000, help="How many runs.")
    ] = 20,
    suite: Annotated[str | None, typer.Option("--suite", help="Only this suite.")] = None,
) -> None:
    """List stored runs, newest first."""
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
        gates = "—" if r.gates_passed is None else ("pass" if r.gates_passed else "FAIL")
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
    junit: JunitOption = None,
    markdown: MarkdownOption = None,
) -> None:
    """Print the report of a stored run."""
    out, err = consoles()
    try:
        for path, flag in ((json_out, "--json"), (junit, "--junit"), (markdown, "--markdown")):
            if path is not None:
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
        _exports(out, store, outcome, json_out, junit, markdown)
    except InputError as exc:
        fail_input(err, exc)
    if info.status is not RunStatus.COMPLETE:
        # its gates were measured on part of the cases: a CI step reading it must not pass
        err.print(
            labelled("gates:", f"not passed: run {info.id} is {info.status.value}"),
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_GATES_FAILED)
    raise typer.Exit(0 if info.summary.gates_passed else EXIT_GATES_FAILED)


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
