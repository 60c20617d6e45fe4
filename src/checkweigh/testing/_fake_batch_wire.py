"""The fake batch APIs' records and how they read on each wire: the JSON of a batch, the
lines of its output, error and results files, and the providers' validation of what was sent.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

_CUSTOM_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
ENDPOINT = "/v1/chat/completions"
Outcome = Literal["succeeded", "errored", "expired", "canceled"]


@dataclass
class Item:
    """One request of a batch and, once answered, its outcome."""

    custom_id: str
    body: dict[str, Any]
    outcome: Outcome | None = None
    status: int = 200
    answer: Any = None


@dataclass
class Batch:
    """A submitted batch (either wire; ``status`` in the wire's own words)."""

    id: str
    items: list[Item]
    created: float
    input_file_id: str = ""
    polls: int = 0
    status: str = "validating"
    cancelling: bool = False
    errors: list[dict[str, Any]] = field(default_factory=list)
    output_file_id: str | None = None
    error_file_id: str | None = None

    def count(self, *outcomes: Outcome | None) -> int:
        return sum(1 for item in self.items if item.outcome in outcomes)


def error(wire: str, status: int, kind: str, message: str) -> dict[str, Any]:
    """An error body as the wire writes it (``status`` is the HTTP status it goes with)."""
    if wire == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def anthropic_problem(requests: Any) -> str | None:
    """What is wrong with a Message Batches request list (Anthropic's validation)."""
    if not isinstance(requests, list) or not requests:
        return "requests: expected a non-empty list"
    ids = [r.get("custom_id") if isinstance(r, dict) else None for r in requests]
    bad = [i for i in ids if not isinstance(i, str) or not _CUSTOM_ID.fullmatch(i)]
    if bad:
        return f"custom_id {bad[0]!r}: expected 1-64 characters of [A-Za-z0-9_-]"
    if len(set(ids)) != len(ids):
        return "custom_id values must be unique within a batch"
    if any(not isinstance(r.get("params"), dict) for r in requests):
        return "params: expected an object for every request"
    return None


def openai_lines(data: bytes) -> tuple[list[Item], list[dict[str, Any]]]:
    """The items of an input file, and what is wrong with it (OpenAI's validation)."""
    items: list[Item] = []
    errors: list[dict[str, Any]] = []
    seen: set[str] = set()
    for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            row = None
        if not isinstance(row, dict) or not isinstance(row.get("body"), dict):
            errors.append({"code": "invalid_json_line", "message": "not a request", "line": number})
            continue
        custom_id = row.get("custom_id")
        if not isinstance(custom_id, str) or custom_id in seen:
            text = f"custom_id {custom_id!r} is missing or used twice"
            errors.append({"code": "duplicate_custom_id", "message": text, "line": number})
        elif row.get("method") != "POST" or row.get("url") != ENDPOINT:
            text = f"expected method POST and url {ENDPOINT}"
            errors.append({"code": "invalid_url", "message": text, "line": number})
        else:
            seen.add(custom_id)
            items.append(Item(custom_id, row["body"]))
    if not items and not errors:
        errors.append({"code": "empty_file", "message": "the input file holds no requests"})
    return items, errors


def openai_batch(batch: Batch) -> dict[str, Any]:
    errors = [{"line": None, "param": None} | e for e in batch.errors]
    return {
        "id": batch.id,
        "object": "batch",
        "endpoint": ENDPOINT,
        "errors": {"object": "list", "data": errors} if errors else None,
        "input_file_id": batch.input_file_id,
        "completion_window": "24h",
        "status": batch.status,
        "output_file_id": batch.output_file_id,
        "error_file_id": batch.error_file_id,
        "created_at": int(batch.created),
        "expires_at": int(batch.created) + 86400,
        "request_counts": {
            "total": len(batch.items),
            "completed": batch.count("succeeded"),
            "failed": batch.count("errored", "expired", "canceled"),
        },
        "metadata": None,
    }


def openai_line(batch: Batch, item: Item) -> dict[str, Any]:
    line: dict[str, Any] = {"id": f"batch_req_{batch.id}_{item.custom_id}"}
    line["custom_id"] = item.custom_id
    if item.outcome in ("succeeded", "errored"):
        request_id = f"req_{batch.id}_{item.custom_id}"
        line["response"] = {"status_code": item.status, "request_id": request_id}
        line["response"]["body"] = item.answer
        line["error"] = None
    else:
        code = "batch_expired" if item.outcome == "expired" else "batch_cancelled"
        text = f"This request was not executed: the batch was {item.outcome}."
        line["response"] = None
        line["error"] = {"code": code, "message": text}
    return line


def anthropic_batch(batch: Batch, base_url: str) -> dict[str, Any]:
    ended = batch.status == "ended"
    return {
        "id": batch.id,
        "type": "message_batch",
        "processing_status": batch.status,
        "request_counts": {
            "processing": batch.count(None),
            "succeeded": batch.count("succeeded"),
            "errored": batch.count("errored"),
            "canceled": batch.count("canceled"),
            "expired": batch.count("expired"),
        },
        "created_at": _iso(batch.created),
        "expires_at": _iso(batch.created + 86400),
        "ended_at": _iso(time.time()) if ended else None,
        "cancel_initiated_at": _iso(batch.created) if batch.cancelling else None,
        "archived_at": None,
        "results_url": f"{base_url}/v1/messages/batches/{batch.id}/results" if ended else None,
    }


def anthropic_line(item: Item) -> dict[str, Any]:
    result: dict[str, Any] = {"type": item.outcome}
    if item.outcome == "succeeded":
        result["message"] = item.answer
    elif item.outcome == "errored":
        result["error"] = item.answer
    return {"custom_id": item.custom_id, "result": result}


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")


def jsonl(lines: Any) -> bytes:
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)
