"""Large logs stream: memory grows with the number of cases (a fingerprint of each id, to refuse
duplicates), not with the size of the file."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

from checkweigh.importers import ImportContext, get_format, import_cases
from support.importing import FIXTURES

CONVERSATIONS = (FIXTURES / "openai_airline.jsonl").read_text().splitlines()


def _peak_bytes(path: Path) -> tuple[int, int]:
    """(cases read, peak traced memory) of importing ``path`` as openai."""
    tracemalloc.start()
    try:
        count = sum(1 for _ in import_cases(get_format("openai"), [path], ImportContext()))
        return count, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _log(path: Path, n: int) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            record = json.loads(CONVERSATIONS[i % len(CONVERSATIONS)])
            record["id"] = f"conv-{i}"
            fh.write(json.dumps(record) + "\n")
    return path


def test_memory_stays_flat_in_the_size_of_the_log(tmp_path: Path) -> None:
    small, large = _log(tmp_path / "small.jsonl", 500), _log(tmp_path / "large.jsonl", 2500)
    (n_small, peak_small), (n_large, peak_large) = _peak_bytes(small), _peak_bytes(large)
    assert (n_small, n_large) == (500, 2500)
    grown = large.stat().st_size - small.stat().st_size  # about 4 MB more to read
    # reading it whole would cost more than the file; streaming costs the ids seen (to refuse
    # duplicates), about 30 bytes a case
    assert peak_large - peak_small < grown / 10, (peak_small, peak_large, grown)
