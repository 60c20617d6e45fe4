"""The command target: a program in any language, started once per call.

The program gets the request (:func:`request_payload`) as one JSON document on its stdin,
which is then closed, and answers with one JSON document on its stdout (by default
``{trace, final_state}``, else one conversation in a log format, see :class:`ReplySpec`).
Its exit status is 0 when it answered.

It runs in a session of its own, so that it and everything it starts form one process group:
when the call ends (answered, failed, timed out or cancelled) the whole group is ended, so no
grandchild outlives its case or keeps its pipes, and with them the run, open. Should
checkweigh itself be killed, its watchdog (:mod:`._watchdog`) ends the group.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
from pathlib import Path
from subprocess import PIPE
from typing import cast

from pydantic_core import from_json, to_json

from ..._text import NOT_JSON, json_with_surrogates
from ...errors import InputError, TargetError
from ...suites import (
    CommandSpecError,
    CommandTargetSpec,
    ReplySpec,
    ResolvedCommand,
    loc_text,
    resolve_command,
)
from ._base import AgentFailure, AgentRun, TargetRequest, request_payload
from ._reply import raw_reader, reply_reader, size_text
from ._timing import note_progress
from ._watchdog import WATCHDOG

STDERR_KEPT = 2048
"""How much of the end of the program's stderr is kept (bytes)."""
STDERR_SHOWN = 400
"""How much of it an errored case's message quotes (characters)."""
PIPE_GRACE_S = 0.5
"""After the program exits, how long its pipes may stay open (held by a process it started)
before that process is killed."""
TERM_GRACE_S = 0.5
"""Between SIGTERM and SIGKILL, when a call is cancelled while the program runs."""
REAP_WAIT_S = 5.0
"""How long to wait for a killed program to be reaped (a process in uninterruptible sleep
cannot die sooner; the call returns anyway)."""


class CommandTarget:
    """Runs a program per call: the request as JSON on stdin, the reply as JSON on stdout."""

    kind = "command"

    def __init__(
        self,
        command: ResolvedCommand,
        *,
        reply: ReplySpec | None = None,
        max_reply_bytes: int = 16 * 2**20,
    ) -> None:
        self.command = command
        self.max_reply_bytes = max_reply_bytes
        self._read = reply_reader(reply or ReplySpec(), "command's reply")
        self._raw = raw_reader(reply or ReplySpec(), "command's reply")

    spec = CommandTargetSpec

    @classmethod
    def check(cls, spec: CommandTargetSpec, base: Path, *, load_agent: bool) -> None:
        """The program, its folder and the variables its ``env`` names are found now (even for
        a replay: a suite that names a missing program is wrong as written).

        Raises:
            InputError: what is missing, naming the field within ``target``.
        """
        try:
            resolve_command(spec, base)
        except CommandSpecError as exc:
            raise InputError(exc.message, field=".".join(exc.loc)) from None

    @classmethod
    def build(cls, spec: CommandTargetSpec, base: Path) -> CommandTarget:
        """The target ``spec`` describes (as :meth:`load`).

        Raises:
            TargetError: the program, its folder or a variable its ``env`` names is missing.
        """
        return cls.load(spec, base)

    @classmethod
    def load(cls, spec: CommandTargetSpec, base: Path) -> CommandTarget:
        """The target ``spec`` describes; relative paths start at ``base``.

        Raises:
            TargetError: the program, its folder or a variable its ``env`` names is missing.
        """
        try:
            command = resolve_command(spec, base)
        except CommandSpecError as exc:
            raise TargetError(f"target.{loc_text(exc.loc)}: {exc.message}") from None
        return cls(command, reply=spec.reply, max_reply_bytes=spec.max_reply_bytes)

    async def run(self, request: TargetRequest) -> AgentRun:
        """The program's answer to ``request``.

        Raises:
            AgentFailure: it could not start, exited non-zero or by a signal, wrote too much,
                nothing, or something that is not a reply.
        """
        payload = to_json(request_payload(request))
        loop = asyncio.get_running_loop()
        exchange = _Exchange(loop, self.max_reply_bytes)
        try:
            WATCHDOG.ready()  # before the program starts: it is watched from its first moment
        except OSError as exc:
            raise AgentFailure(f"cannot start the agents' watchdog: {exc}") from None
        try:
            transport, _ = await loop.subprocess_exec(
                lambda: exchange,
                *self.command.argv,
                stdin=PIPE,
                stdout=PIPE,
                stderr=PIPE,
                cwd=self.command.cwd,
                env=self.command.env,
                start_new_session=True,
            )
        except OSError as exc:  # removed or made unexecutable since the suite was loaded
            reason = exc.strerror or type(exc).__name__
            program = self.command.argv[0]
            raise AgentFailure(f"command could not start: {reason}: {program}") from None
        group = transport.get_pid()  # the program leads a new session: its group's id is its pid
        try:
            WATCHDOG.watch(group)  # should checkweigh itself be killed meanwhile
            stdin = cast(asyncio.WriteTransport, transport.get_pipe_transport(0))
            stdin.write(payload)
            stdin.close()  # after the buffer is written; a program that never reads is fine
            await exchange.settled
            if exchange.overflow:
                await _end_group(group, exchange)
                raise AgentFailure(
                    f"command wrote more than {size_text(self.max_reply_bytes)} on stdout "
                    f"(max_reply_bytes){exchange.stderr_end()}"
                )
            if not exchange.pipes_closed.done():
                # it exited but a process it started still holds its stdout or stderr
                await _wait(exchange.pipes_closed, PIPE_GRACE_S)
            # what it left running ends with its case
            _signal(group, signal.SIGKILL)
            return self._reply(exchange, transport.get_returncode())
        except BaseException:
            # cancelled (the case's time limit, Ctrl-C) or failed: nothing may outlive the call
            try:
                await _end_group(group, exchange)
            finally:
                # a time limit's message says only that time ran out: its stderr says why
                stderr = exchange.stderr_end()
                if stderr:
                    note_progress("stderr", stderr.removeprefix("; "))
            raise
        finally:
            transport.close()
            WATCHDOG.forget(group)

    async def aclose(self) -> None:
        """Nothing to release: every call's process is gone when the call returns."""

    def _reply(self, exchange: _Exchange, status: int | None) -> AgentRun:
        stderr = exchange.stderr_end()
        if status != 0:
            raise AgentFailure(f"command {_status_text(status)}{stderr}")
        out = bytes(exchange.stdout)
        if not out.strip():
            raise AgentFailure(f"command exited with status 0 but wrote nothing on stdout{stderr}")
        if self._raw is not None:
            return self._raw(out)
        try:
            data = from_json(out)
        except ValueError as exc:
            data = json_with_surrogates(out)  # valid JSON jiter refuses: a lone "\ud800"
            if data is NOT_JSON:
                raise AgentFailure(
                    f"command's stdout is not one JSON document ({exc}); it starts "
                    f"{_quoted(out[:80])}{stderr}"
                ) from None
        return self._read(data)


class _Exchange(asyncio.SubprocessProtocol):
    """What one call's program writes: stdout up to a size, the end of stderr; when it exits."""

    def __init__(self, loop: asyncio.AbstractEventLoop, max_stdout: int) -> None:
        self.max_stdout = max_stdout
        self.stdout = bytearray()
        self.stderr = bytearray()
        self.overflow = False
        self.exited: asyncio.Future[None] = loop.create_future()
        self.settled: asyncio.Future[None] = loop.create_future()
        """Done when the program exits or writes too much: something to act on."""
        self.pipes_closed: asyncio.Future[None] = loop.create_future()
        self._open = {1, 2}
        self._transport: asyncio.SubprocessTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.SubprocessTransport, transport)

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd == 2:
            self.stderr += data
            if len(self.stderr) > 2 * STDERR_KEPT:
                del self.stderr[:-STDERR_KEPT]
            return
        if self.overflow:
            return
        if len(self.stdout) + len(data) > self.max_stdout:
            self.overflow = True
            if self._transport is not None:  # stop reading: it blocks until it is killed
                pipe = self._transport.get_pipe_transport(1)
                if isinstance(pipe, asyncio.ReadTransport):
                    pipe.pause_reading()
            _resolve(self.settled)
            return
        self.stdout += data

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self._open.discard(fd)
        if not self._open:
            _resolve(self.pipes_closed)

    def process_exited(self) -> None:
        _resolve(self.exited)
        _resolve(self.settled)

    def stderr_end(self) -> str:
        """``; stderr ends: ...``: the last line(s) of its stderr on one line, or nothing."""
        text = _CONTROL.sub(" ", self.stderr[-STDERR_KEPT:].decode("utf-8", "replace"))
        text = " ".join(text.split())
        if not text:
            return ""
        if len(text) > STDERR_SHOWN:
            text = "..." + text[-(STDERR_SHOWN - 3) :]
        return f"; stderr ends: {text}"


# C0 and C1 controls, and the bidi and invisible formatting characters: an agent's stderr is
# quoted in messages printed on terminals
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]")


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def _wait(future: asyncio.Future[None], timeout_s: float) -> None:
    """Wait for ``future`` at most ``timeout_s``, leaving it pending (it may be awaited again)."""
    try:
        await asyncio.wait_for(asyncio.shield(future), timeout_s)
    except TimeoutError:
        return


def _signal(group: int, sig: signal.Signals) -> bool:
    """Send ``sig`` to the process group; False when nothing is left in it."""
    try:
        os.killpg(group, sig)
    except ProcessLookupError:
        return False
    except PermissionError:  # a member changed its user (setuid): it is no longer ours to end
        return False
    return True


async def _end_group(group: int, exchange: _Exchange) -> None:
    """SIGTERM the program's group, SIGKILL it after a short grace, and wait until the program
    is reaped. Cancelled meanwhile, it still sends the SIGKILL."""
    if not _signal(group, signal.SIGTERM):
        return
    try:
        await _wait(exchange.exited, TERM_GRACE_S)
    finally:
        _signal(group, signal.SIGKILL)  # the grandchildren too, even when the program obeyed
    await _wait(exchange.exited, REAP_WAIT_S)


def _status_text(status: int | None) -> str:
    """``exited with status 3``, ``was killed by SIGSEGV``."""
    if status is None:
        return "did not report an exit status"
    if status >= 0:
        return f"exited with status {status}"
    try:
        name = signal.Signals(-status).name
    except ValueError:
        name = f"signal {-status}"
    return f"was killed by {name}"


def _quoted(data: bytes) -> str:
    return repr(_CONTROL.sub("?", data.decode("utf-8", "replace")))
