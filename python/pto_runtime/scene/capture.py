"""python/pto_runtime/scene/capture.py — pytest's ``capsys`` and ``capfd`` for the scene runner.

A case's test function may name either fixture; :func:`captures` gives it the ones it names,
active while it runs. ``capsys`` (:class:`Capture`) sees what Python prints (``sys.stdout``,
``sys.stderr``); ``capfd`` (:class:`FdCapture`) sees file descriptors 1 and 2 themselves, so
it also sees what native code writes there (the runtime's ``[STRACE]`` markers, device log
lines with ``PTO_LOG_STDERR=1``). Unlike pytest's, both pass what they capture on to the
streams they replaced (the case's log), so nothing a case prints is lost; ``readouterr()``
returns what was written since the last call, as pytest's does. Each case runs in a process of
its own (scene/runner.py), so swapping the process's descriptors touches no other case.
"""

from __future__ import annotations

import ctypes
import inspect
import io
import os
import sys
import tempfile
from collections import namedtuple
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

__all__ = ["Capture", "CaptureResult", "FdCapture", "captures"]

CaptureResult = namedtuple("CaptureResult", ["out", "err"])


class _Tee(io.TextIOBase):
    """Writes through to ``stream`` and keeps a copy."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.kept = io.StringIO()

    def write(self, s: str) -> int:
        self.kept.write(s)
        return int(self.stream.write(s))

    def flush(self) -> None:
        self.stream.flush()

    def fileno(self) -> int:
        return int(self.stream.fileno())

    def isatty(self) -> bool:
        return False

    def take(self) -> str:
        text = self.kept.getvalue()
        self.kept = io.StringIO()
        return text


class Capture:
    """pytest's ``capsys``: what the test printed from Python (sys.stdout and sys.stderr) since
    the last :meth:`readouterr`, while it still reaches the case's log."""

    def __init__(self) -> None:
        self._out: _Tee | None = None
        self._err: _Tee | None = None

    @contextmanager
    def active(self) -> Iterator[Capture]:
        saved = sys.stdout, sys.stderr
        self._out, self._err = _Tee(sys.stdout), _Tee(sys.stderr)
        sys.stdout, sys.stderr = self._out, self._err
        try:
            yield self
        finally:
            sys.stdout, sys.stderr = saved

    def readouterr(self) -> CaptureResult:
        return CaptureResult(
            self._out.take() if self._out else "", self._err.take() if self._err else ""
        )

    @contextmanager
    def disabled(self) -> Iterator[None]:
        yield


def _flush_all() -> None:
    """Python's and C's buffered output, out to the descriptors."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        if stream is not None:
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
    ctypes.CDLL(None).fflush(None)


class _FdTarget:
    """One descriptor (1 or 2) redirected into an unlinked temporary file opened for appending
    (so a write from another thread lands at the end while a read is under way); ``saved`` is
    the original."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        handle, path = tempfile.mkstemp(prefix="pto-capfd-")
        os.close(handle)
        self.write_fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        self.read_fd = os.open(path, os.O_RDONLY)
        os.unlink(path)
        self.saved = os.dup(fd)
        self.read_at = 0

    def redirect(self) -> None:
        os.dup2(self.write_fd, self.fd)

    def restore(self) -> None:
        os.dup2(self.saved, self.fd)

    def take(self) -> str:
        """What was written since the last take, also passed on to the original stream."""
        chunks = []
        while chunk := os.pread(self.read_fd, 1 << 20, self.read_at):
            chunks.append(chunk)
            self.read_at += len(chunk)
        data = b"".join(chunks)
        view = memoryview(data)
        while view:
            view = view[os.write(self.saved, view) :]
        return data.decode(errors="replace")

    def close(self) -> None:
        self.take()
        self.restore()
        for fd in (self.saved, self.write_fd, self.read_fd):
            os.close(fd)


class FdCapture:
    """pytest's ``capfd``: what was written to file descriptors 1 and 2 (by Python or native
    code) since the last :meth:`readouterr`."""

    def __init__(self) -> None:
        self._targets: tuple[_FdTarget, _FdTarget] | None = None

    @contextmanager
    def active(self) -> Iterator[FdCapture]:
        _flush_all()
        self._targets = (_FdTarget(1), _FdTarget(2))
        for t in self._targets:
            t.redirect()
        # Python's own prints go to the descriptors too, whatever sys.stdout was (a harness
        # may have put an in-memory stream there), as pytest's capfd does.
        saved = sys.stdout, sys.stderr
        sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
        try:
            yield self
        finally:
            _flush_all()
            mine = sys.stdout, sys.stderr
            sys.stdout, sys.stderr = saved
            for stream in mine:
                stream.close()  # closefd=False: the descriptor stays
            for t in self._targets:
                t.close()
            self._targets = None

    def readouterr(self) -> CaptureResult:
        if self._targets is None:
            return CaptureResult("", "")
        _flush_all()
        return CaptureResult(self._targets[0].take(), self._targets[1].take())

    @contextmanager
    def disabled(self) -> Iterator[None]:
        """Output inside goes straight to the original streams."""
        if self._targets is None:
            yield
            return
        _flush_all()
        for t in self._targets:
            t.restore()
        try:
            yield
        finally:
            _flush_all()
            for t in self._targets:
                t.redirect()


@contextmanager
def captures(fn: Callable[..., Any]) -> Iterator[dict[str, Any]]:
    """The capture fixtures ``fn`` names (``capsys``, ``capfd``), active until the block ends."""
    names = inspect.signature(fn).parameters
    with ExitStack() as stack:
        out: dict[str, Any] = {}
        if "capfd" in names:
            out["capfd"] = stack.enter_context(FdCapture().active())
        if "capsys" in names:
            out["capsys"] = stack.enter_context(Capture().active())
        yield out
