"""Where a suite's cases come from: its own cases file, or agent logs read through an importer.

A run asks its :class:`CasesSource` for the cases (``iter_cases``) and, when they are done,
for what the import had to say (``notes``): skipped records and why.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..core import Case
from ..errors import InputError
from ..importers import (
    FieldMapping,
    Format,
    ImportContext,
    OnBadRecord,
    format_factory,
    get_format,
    import_cases,
)
from ._cases import STREAMED, count_cases, iter_cases, iter_sourced
from ._errors import first_error, loc_text
from ._yaml import read_yaml_file

MAPPING_FILE_LIMIT = 1 * 2**20
"""A field mapping is a few lines; a bigger file is refused before it is read."""


@dataclass(frozen=True)
class CasesSource:
    """The cases of a run: a checkweigh cases file (``format`` None), or a log file read
    through the importer ``format`` (with its ``mapping`` for ``mapping``).

    Each call of :meth:`iter_cases` reads the file again, with its own tally.
    """

    path: Path
    """The file."""
    format: str | None = None
    """The log format's name (``openai``, ``anthropic``...); None: checkweigh's own cases file."""
    on_bad_record: OnBadRecord = "fail"
    """What a bad record of a log does: stop the run (``fail``) or get skipped and reported."""
    mapping: FieldMapping | None = None
    """The field mapping of the ``mapping`` format."""
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """The format's own settings (keyword arguments of its class)."""

    @property
    def imported(self) -> bool:
        """Whether the cases are read from logs through an importer."""
        return self.format is not None

    def context(self) -> ImportContext:
        """A fresh tally for one pass over the file."""
        return ImportContext(on_bad_record=self.on_bad_record)

    def iter_cases(self, ctx: ImportContext | None = None) -> Iterator[Case]:
        """The cases in order, streamed; ``ctx`` (default: a fresh one) keeps the tally.

        Raises:
            CaseFileError: the file cannot be read, or a case (a record, under ``fail``) is bad.
            InputError: the format is unknown.
        """
        if self.format is None:
            return iter_cases(self.path)  # checkweigh's own file: the fast path, as it was
        fmt = self.reader()
        return import_cases(fmt, [self.path], ctx if ctx is not None else self.context())

    def iter_sourced(self, ctx: ImportContext | None = None) -> Iterator[tuple[Case, bytes | None]]:
        """:meth:`iter_cases` with each case's JSON line as read, where the case is one line
        of a checkweigh cases file (None for imported and YAML/JSON cases)."""
        if self.format is None:
            return iter_sourced(self.path)
        return ((case, None) for case in self.iter_cases(ctx))

    def reader(self) -> Format:
        """The importer of :attr:`format`, built with the mapping and options.

        Raises:
            InputError: the format is unknown, or takes no such option, or refuses its value.
        """
        if self.format is None:
            raise ValueError("a checkweigh cases file is read without an importer")
        options: dict[str, Any] = dict(self.options)
        if self.mapping is not None:
            options["mapping"] = self.mapping
        try:
            return get_format(self.format, **options)
        except TypeError:  # an option the format's class does not take
            known = [
                p.name
                for p in inspect.signature(format_factory(self.format)).parameters.values()
                if p.kind is p.KEYWORD_ONLY and p.name != "mapping"
            ]
            unknown = sorted(set(self.options) - set(known))
            raise InputError(
                f"format {self.format} has no option {', '.join(map(repr, unknown)) or '?'}; "
                f"it takes: {', '.join(known) or 'none'}",
                field="cases.options",
            ) from None
        except ValueError as exc:
            raise InputError(str(exc), field="cases.options") from None

    def count(self) -> int:
        """How many cases the file gives, validating (converting) every one on the way.

        Raises:
            CaseFileError: as :meth:`iter_cases`.
        """
        if self.format is None:
            return count_cases(self.path)  # screened at the speed of decoding
        return sum(1 for _ in self.iter_cases())

    @property
    def streamed(self) -> bool:
        """Whether the cases are a checkweigh JSONL file, which worker processes read
        themselves a range of lines at a time."""
        return self.format is None and self.path.suffix in STREAMED

    def replace(
        self, *, path: Path | None = None, on_bad_record: OnBadRecord | None = None
    ) -> CasesSource:
        """The same source with another file or bad-record choice (``--cases``,
        ``--on-bad-record``); the format stays.

        Raises:
            InputError: skipping bad records of a checkweigh cases file (it has no records).
        """
        changed = dataclasses.replace(
            self,
            path=path if path is not None else self.path,
            on_bad_record=on_bad_record or self.on_bad_record,
        )
        if changed.format is None and changed.on_bad_record == "skip":
            raise InputError(
                "skipping bad records applies to imported logs; this suite reads a checkweigh "
                "cases file (give the suite's cases a format, e.g. cases: {path: ..., format: "
                "openai})",
                field="--on-bad-record",
            )
        return changed

    def notes(self, ctx: ImportContext) -> list[str]:
        """What a report should say after a pass with ``ctx``: the skipped records, if any."""
        return ctx.notes() if self.format is not None else []

    def snapshot(self) -> dict[str, Any]:
        """The source's settings, for the run's stored configuration."""
        if self.format is None:
            return {}
        return {
            "cases_format": self.format,
            "on_bad_record": self.on_bad_record,
            "mapping": self.mapping.model_dump(exclude_none=True) if self.mapping else None,
        }


def load_mapping(path: Path) -> FieldMapping:
    """A field mapping from its own YAML file (``checkweigh import mapping --mapping FILE``).

    Raises:
        InputError: one line naming the file, the line, the field and what was expected.
    """
    data, lines = read_yaml_file(
        path,
        limit=MAPPING_FILE_LIMIT,
        what="field mapping (YAML)",
        missing="mapping file not found",
        unreadable="cannot read",
        field="--mapping",
    )
    if not isinstance(data, dict):
        raise InputError(
            "expected a mapping of case fields to paths, e.g. messages: turns", file=path, line=1
        )
    try:
        return FieldMapping.model_validate(data)
    except ValidationError as exc:
        loc, message = first_error(exc, FieldMapping.model_fields, data)
        raise InputError(
            message, file=path, line=lines.line(loc), field=loc_text(loc) or None
        ) from None
