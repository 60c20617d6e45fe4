"""One exception tree. User mistakes are :class:`InputError`: one line naming the file, the
line where known, the field and what was expected.

Every exception checkweigh defines is a :class:`CheckweighError` (``tests/test_exceptions.py``
holds it so); some are also the standard error their callers catch them as (``ValueError``).
Public names are given with their package, private ones with their module::

    CheckweighError
    ├── InputError                          a suite, a cases file, a flag, a URL: one line
    │   ├── SuiteError
    │   ├── CaseFileError
    │   ├── alignment.LabelFileError
    │   ├── live.MonitorError               a monitor file that cannot be used
    │   └── store.RunExists
    ├── TargetError                         the agent target could not be loaded
    ├── StoreError                          the results store could not be opened or written
    ├── plugins.PluginError                 an unknown or broken plugin entry
    ├── checks.ImportTargetError            (also ValueError) a dotted path that does not import
    ├── core.PathSyntaxError                (also ValueError)
    ├── core.RubricError                    (also ValueError)
    ├── core.SimulationStopped
    ├── core._rerun_batches.TooManyNoisyChecks   (also ValueError)
    ├── importers.RecordError               (also ValueError)
    ├── importers.ReplyError                an agent's reply a format cannot read
    ├── importers._otlp.SpanError           (also ValueError)
    ├── judges.JudgeError
    │   ├── judges.ReplayMiss
    │   ├── judges._sdk.FormatRejected
    │   ├── judges._context.ContextLimitError  a prompt over the model's input limit, not sent
    │   └── judges._metered.BudgetSpent     a call past the run's judge budget, not sent
    ├── judges.AnswerError                  (also ValueError)
    ├── judges.GaveUp
    ├── judges._retry.AttemptTimeout
    ├── runs.RunStopped                     a run that ended early, stored as incomplete
    ├── runs.Interrupted                    Ctrl-C, SIGTERM
    ├── runs.executors.WorkerLost
    ├── runs.targets.AgentFailure           a case's agent run failed: the case is errored
    │   └── runs.targets.ConversationFailure
    ├── runs.targets._users.UserFailure     a simulated user failed
    ├── server._errors.ApiError             an HTTP answer other than success
    ├── server._otlp.OtlpRefusal            an OTLP export request refused (its status)
    ├── suites.TextFileError                (also ValueError)
    ├── suites._command.CommandSpecError    (also ValueError)
    └── suites._yaml.YamlSyntaxError        (also ValueError)

Outside the tree, each for a reason given in ``tests/test_exceptions.py``: ``_process.ProcessExit``
(a ``SystemExit``: user code's ``os._exit``).
"""

from __future__ import annotations

from pathlib import Path


class CheckweighError(Exception):
    """The base of every error checkweigh raises on purpose."""


class InputError(CheckweighError):
    """A mistake in something the user gave: a suite, a cases file, a flag, a URL.

    ``str(error)`` is a single line: ``FILE:LINE: FIELD: MESSAGE``.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.message = " ".join(message.split())
        self.file = str(file) if file is not None else None
        self.line = line
        self.field = field
        super().__init__(self.one_line())

    def one_line(self) -> str:
        """The error as one line."""
        where = ""
        if self.file:
            where = self.file + (f":{self.line}" if self.line else "") + ": "
        what = f"{self.field}: " if self.field else ""
        return f"{where}{what}{self.message}"


class SuiteError(InputError):
    """A suite file that cannot be loaded."""


class CaseFileError(InputError):
    """A cases file, or one case in it, that cannot be read."""


class TargetError(CheckweighError):
    """The agent target could not be loaded."""


class StoreError(CheckweighError):
    """The results store could not be opened or written."""
