"""One exception tree. User mistakes are :class:`InputError`: one line naming the file, the
line where known, the field and what was expected."""

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
