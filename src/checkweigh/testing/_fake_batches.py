"""The provider batch APIs on the fake LLM server, for driving the SDKs' batch clients.

OpenAI (``wire="openai"``): ``POST /v1/files`` (multipart, ``purpose=batch``, a JSONL of
``{custom_id, method, url, body}`` lines), ``GET /v1/files/{id}``,
``GET /v1/files/{id}/content``, ``POST /v1/batches``, ``GET /v1/batches`` (newest first),
``GET /v1/batches/{id}``, ``POST /v1/batches/{id}/cancel``. A batch goes ``validating`` ->
``in_progress`` -> ``completed`` (or ``failed``, ``expired``, ``cancelling`` ->
``cancelled``); answered items are lines of its output file, the others (an error status,
expired, cancelled) of its error file.

Anthropic (``wire="anthropic"``): ``POST /v1/messages/batches``,
``GET /v1/messages/batches/{id}``, ``GET /v1/messages/batches/{id}/results`` (JSONL, once
``ended``), ``POST /v1/messages/batches/{id}/cancel``.

Each item is answered by the server's own script (``script``, ``respond``, ``default``), as a
synchronous call with the same body would be, usage included. :class:`BatchScript` sets how
long a batch takes and which items fail or expire; :meth:`FakeBatches.stats` counts what was
submitted, so a test can prove nothing was paid twice.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler
from typing import Any

from ._fake_batch_wire import (
    ENDPOINT,
    Batch,
    Item,
    anthropic_batch,
    anthropic_line,
    anthropic_problem,
    error,
    jsonl,
    openai_batch,
    openai_line,
    openai_lines,
)

Answer = Callable[[dict[str, Any], dict[str, str]], tuple[int, Any]]
"""Answers one item as a synchronous call would: ``(status, JSON body)``."""

ItemRule = Callable[[str], bool] | Collection[str]
"""Which items a rule picks: their custom_ids, or a predicate on them."""


@dataclass
class BatchScript:
    """How the fake's batches behave."""

    polls: int = 1
    """Polls of a batch that find it in progress (each answers a share of its items)
    before the next one finds it ended."""
    seconds: float | None = None
    """Instead of ``polls``: the batch ends this long after it was created."""
    fail: ItemRule = ()
    """Items that error (a 500 from the model) without reaching the script."""
    expire: ItemRule = ()
    """Items left unanswered until the batch ends, then expired."""
    lose: ItemRule = ()
    """Items answered but left out of the output (a provider's fault the client must catch)."""
    faults: list[int] = field(default_factory=list)
    """HTTP statuses answered to the next batch-API requests, one each, before any is served
    (a 503 on a poll, say: the client's retries)."""
    lost_answers: dict[str, list[int]] = field(default_factory=dict)
    """By request (``"POST /v1/batches"``): statuses answered instead of the real answer,
    one a request, after it was served (the batch created, the answer lost on the way)."""
    invalid: str | None = None
    """The whole batch fails validation with this message (OpenAI: ``failed`` on the first
    poll; Anthropic: a 400 on create)."""


def _picks(rule: ItemRule, custom_id: str) -> bool:
    return rule(custom_id) if callable(rule) else custom_id in rule


@dataclass
class FakeBatches:
    """The batches the fake server holds, and what it was sent."""

    script: BatchScript = field(default_factory=BatchScript)
    """How batches behave (may be replaced while the server runs)."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    """Held while a batch request is served (the server answers on many threads)."""
    batches: dict[str, Batch] = field(default_factory=dict)
    """Every batch created, by id."""
    files: dict[str, tuple[dict[str, Any], bytes]] = field(default_factory=dict)
    """OpenAI's files (uploaded, output and error), by id: the file object and the bytes."""
    counts: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(
            ("batches", "items", "files", "polls", "results", "cancels"), 0
        )
    )
    """What :meth:`stats` reports."""

    def stats(self) -> dict[str, int]:
        """Batches created, items submitted, files uploaded, polls, result downloads and
        cancels."""
        with self.lock:
            return dict(self.counts)

    def serve(
        self, handler: BaseHTTPRequestHandler, wire: str, base_url: str, answer: Answer
    ) -> bool:
        """Answer ``handler``'s request if it is one of the batch endpoints (False: it is not)."""
        method = handler.command
        path = handler.path.split("?", 1)[0].rstrip("/")
        parts = path.strip("/").split("/")
        if wire == "anthropic" and parts[:3] == ["v1", "messages", "batches"]:
            route = self._anthropic
        elif wire == "openai" and parts[:2] in (["v1", "files"], ["v1", "batches"]):
            route = self._openai
        else:
            return False
        length = int(handler.headers.get("content-length", "0"))
        raw = handler.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in handler.headers.items()}
        with self.lock:
            if self.script.faults:
                status = self.script.faults.pop(0)
                payload = error(wire, status, "api_error", f"scripted {status}")
            else:
                status, payload = route(method, parts[1:], raw, headers, base_url, answer)
                lost = self.script.lost_answers.get(f"{method} {path}")
                if lost:
                    status = lost.pop(0)
                    payload = error(wire, status, "api_error", f"scripted {status}")
        _send(handler, status, payload)
        return True

    # -- OpenAI ------------------------------------------------------------------------

    def _openai(
        self,
        method: str,
        parts: list[str],
        raw: bytes,
        headers: dict[str, str],
        base_url: str,
        answer: Answer,
    ) -> tuple[int, Any]:
        match method, parts:
            case "POST", ["files"]:
                return self._upload(raw, headers.get("content-type", ""))
            case "GET", ["files", file_id]:
                return self._file(file_id, lambda meta, _: meta)
            case "GET", ["files", file_id, "content"]:
                self.counts["results"] += 1
                return self._file(file_id, lambda _, data: data)
            case "POST", ["batches"]:
                return self._openai_create(_json(raw))
            case "GET", ["batches"]:  # newest first, as OpenAI lists them
                listed = [openai_batch(b) for b in reversed(self.batches.values())]
                return 200, {"object": "list", "data": listed, "has_more": False}
            case "GET", ["batches", batch_id] if batch_id in self.batches:
                self.counts["polls"] += 1
                batch = self.batches[batch_id]
                self._advance(batch, "openai", headers, answer)
                return 200, openai_batch(batch)
            case "POST", ["batches", batch_id, "cancel"] if batch_id in self.batches:
                self.counts["cancels"] += 1
                batch = self.batches[batch_id]
                if batch.status in ("validating", "in_progress"):
                    batch.cancelling = True
                    batch.status = "cancelling"
                return 200, openai_batch(batch)
        return 404, error("openai", 404, "invalid_request_error", f"no such object: {parts}")

    def _upload(self, raw: bytes, content_type: str) -> tuple[int, Any]:
        message = BytesParser(policy=HTTP).parsebytes(
            f"content-type: {content_type}\r\n\r\n".encode() + raw
        )
        fields: dict[str, tuple[str | None, bytes]] = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            data = part.get_payload(decode=True)
            if isinstance(name, str) and isinstance(data, bytes):
                fields[name] = (part.get_filename(), data)
        purpose = fields.get("purpose", (None, b""))[1].decode()
        if "file" not in fields or purpose != "batch":
            text = f"expected a multipart file with purpose=batch, got purpose={purpose!r}"
            return 400, error("openai", 400, "invalid_request_error", text)
        filename, data = fields["file"]
        file_id = f"file-in-{len(self.files) + 1}"
        self.counts["files"] += 1
        self._store(file_id, filename or "upload.jsonl", "batch", data)
        return 200, self.files[file_id][0]

    def _store(self, file_id: str, filename: str, purpose: str, data: bytes) -> None:
        meta = {
            "id": file_id,
            "object": "file",
            "bytes": len(data),
            "created_at": int(time.time()),
            "filename": filename,
            "purpose": purpose,
            "status": "processed",
        }
        self.files[file_id] = (meta, data)

    def _file(self, file_id: str, pick: Callable[[dict[str, Any], bytes], Any]) -> tuple[int, Any]:
        if file_id not in self.files:
            text = f"No such File object: {file_id}"
            return 404, error("openai", 404, "invalid_request_error", text)
        return 200, pick(*self.files[file_id])

    def _openai_create(self, body: dict[str, Any]) -> tuple[int, Any]:
        file_id = body.get("input_file_id")
        if body.get("endpoint") != ENDPOINT or body.get("completion_window") != "24h":
            text = f"expected endpoint {ENDPOINT} and completion_window 24h, got {body}"
            return 400, error("openai", 400, "invalid_request_error", text)
        if not isinstance(file_id, str) or file_id not in self.files:
            text = f"No such File object: {file_id}"
            return 404, error("openai", 404, "invalid_request_error", text)
        items, errors = openai_lines(self.files[file_id][1])
        batch = self._new(items)
        batch.input_file_id = file_id
        batch.errors = errors
        if self.script.invalid is not None:
            batch.errors.append({"code": "invalid_request", "message": self.script.invalid})
        return 200, openai_batch(batch)

    # -- Anthropic ---------------------------------------------------------------------

    def _anthropic(
        self,
        method: str,
        parts: list[str],
        raw: bytes,
        headers: dict[str, str],
        base_url: str,
        answer: Answer,
    ) -> tuple[int, Any]:
        match method, parts:
            case "POST", ["messages", "batches"]:
                return self._anthropic_create(_json(raw), base_url)
            case "GET", ["messages", "batches", batch_id] if batch_id in self.batches:
                self.counts["polls"] += 1
                batch = self.batches[batch_id]
                self._advance(batch, "anthropic", headers, answer)
                return 200, anthropic_batch(batch, base_url)
            case "GET", ["messages", "batches", batch_id, "results"] if batch_id in self.batches:
                batch = self.batches[batch_id]
                if batch.status != "ended":
                    text = f"batch {batch_id} is still {batch.status}; results come once ended"
                    return 400, error("anthropic", 400, "invalid_request_error", text)
                self.counts["results"] += 1
                kept = (i for i in batch.items if not _picks(self.script.lose, i.custom_id))
                return 200, jsonl(anthropic_line(item) for item in kept)
            case "POST", ["messages", "batches", batch_id, "cancel"] if batch_id in self.batches:
                self.counts["cancels"] += 1
                batch = self.batches[batch_id]
                if batch.status == "in_progress":
                    batch.cancelling = True
                    batch.status = "canceling"
                return 200, anthropic_batch(batch, base_url)
        text = f"no such batch or endpoint: {'/'.join(parts)}"
        return 404, error("anthropic", 404, "not_found_error", text)

    def _anthropic_create(self, body: dict[str, Any], base_url: str) -> tuple[int, Any]:
        requests = body.get("requests")
        problem = anthropic_problem(requests) or self.script.invalid
        if problem is not None or not isinstance(requests, list):
            text = problem or "requests: expected a list"
            return 400, error("anthropic", 400, "invalid_request_error", text)
        batch = self._new([Item(r["custom_id"], r["params"]) for r in requests])
        batch.status = "in_progress"
        return 200, anthropic_batch(batch, base_url)

    # -- both --------------------------------------------------------------------------

    def _new(self, items: list[Item]) -> Batch:
        batch = Batch(id=f"batch_{len(self.batches) + 1:04d}", items=items, created=time.time())
        self.batches[batch.id] = batch
        self.counts["batches"] += 1
        self.counts["items"] += len(items)
        return batch

    def _advance(self, batch: Batch, wire: str, headers: dict[str, str], answer: Answer) -> None:
        """What a poll finds: a share of the items answered, or the batch ended."""
        if batch.status in ("completed", "failed", "expired", "cancelled", "ended"):
            return
        if batch.errors:  # OpenAI validates on the first poll
            batch.status = "failed"
            return
        if batch.cancelling:
            for item in batch.items:
                item.outcome = item.outcome or "canceled"
            self._end(batch, wire, "cancelled")
            return
        batch.polls += 1
        script = self.script
        if script.seconds is not None:
            share = (
                min(1.0, (time.time() - batch.created) / script.seconds) if script.seconds else 1
            )
        else:
            share = min(1.0, batch.polls / (script.polls + 1))
        due = int(share * len(batch.items))
        for item in batch.items[:due]:
            if item.outcome is None and not _picks(script.expire, item.custom_id):
                self._answer(item, wire, headers, answer)
        batch.status = "in_progress"
        if share >= 1.0:
            for item in batch.items:
                item.outcome = item.outcome or "expired"
            expired = any(item.outcome == "expired" for item in batch.items)
            self._end(batch, wire, "expired" if expired else "completed")

    def _answer(self, item: Item, wire: str, headers: dict[str, str], answer: Answer) -> None:
        if _picks(self.script.fail, item.custom_id):
            status, body = 500, error(wire, 500, "api_error", "scripted item failure")
        else:
            status, body = answer(item.body, headers)
        item.outcome = "succeeded" if status == 200 else "errored"
        item.status, item.answer = status, body

    def _end(self, batch: Batch, wire: str, status: str) -> None:
        if wire == "anthropic":
            batch.status = "ended"
            return
        batch.status = status
        kept = [i for i in batch.items if not _picks(self.script.lose, i.custom_id)]
        done = [i for i in kept if i.outcome == "succeeded"]
        other = [i for i in kept if i.outcome != "succeeded"]
        for items, name in ((done, "output"), (other, "error")):
            if items:
                file_id = f"file-{name}-{batch.id}"
                self._store(file_id, f"{batch.id}_{name}.jsonl", f"batch_{name}", b"")
                data = jsonl(openai_line(batch, item) for item in items)
                self.files[file_id] = (self.files[file_id][0] | {"bytes": len(data)}, data)
                setattr(batch, f"{name}_file_id", file_id)


def _json(raw: bytes) -> dict[str, Any]:
    try:
        body = json.loads(raw or b"{}")
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _send(handler: BaseHTTPRequestHandler, status: int, payload: Any) -> None:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    kind = "application/binary" if isinstance(payload, bytes) else "application/json"
    handler.send_response(status)
    handler.send_header("content-type", kind)
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)
