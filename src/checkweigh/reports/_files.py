"""Report files appear whole or not at all."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def replaced_at(path: Path) -> Iterator[Path]:
    """A temporary file next to ``path`` that replaces it once the block ends without error.

    An interrupt (Ctrl-C ends the CLI at once outside a run) or a failure while a large report
    is written leaves the previous file, or none, never a truncated one that a CI step then
    reads as the report.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or (path.exists() and not path.is_file()):
        # /dev/stdout, a FIFO, a device, a link the user keeps: written in place, not replaced
        yield path
        return
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    os.close(fd)
    temporary = Path(name)
    try:
        yield temporary
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
