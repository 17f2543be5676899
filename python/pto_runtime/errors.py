"""python/pto_runtime/errors.py — the typed exceptions, and the one table from error code to class.

Every failure of the runtime carries a code from include/pto/error_codes.def. Python raises
``pto_runtime.Error`` (a ``RuntimeError``) or the subclass the code belongs to; each carries
``code``, ``name``, ``description`` and ``hint``, and ``str(e)`` is the runtime's message. The
native module calls :func:`error_from_code` for every ``pto::Error`` thrown in C++, and the
package calls it for the errors it finds itself, so both raise the same classes.
"""

from __future__ import annotations

import sys
from typing import ClassVar

from ._native import Status as ErrorCode
from ._native import status_description, status_hint, status_name

__all__ = [
    "DeviceError",
    "Error",
    "ErrorCode",
    "InvalidArgumentError",
    "KernelCompileError",
    "LoadError",
    "MissingDependencyError",
    "NotSupportedError",
    "OrchestrationError",
    "RingCapacityError",
    "RunTimeoutError",
    "TaskFailedError",
    "error_from_code",
]


class Error(RuntimeError):
    """A runtime failure: ``code`` with its ``name``, ``description`` and ``hint``; str() = message.

    ``Error(message)`` uses the class's ``default_code``; ``Error(message, code)`` any code.
    """

    default_code: ClassVar[ErrorCode] = ErrorCode.INTERNAL

    def __init__(self, message: str = "", code: int | None = None) -> None:
        super().__init__(message)
        raw = int(self.default_code if code is None else code)
        try:
            # The ErrorCode member (an IntEnum, so it still compares equal to the number).
            self.code: ErrorCode | int = ErrorCode(raw)
        except ValueError:
            self.code = raw  # a code this package does not know (a newer native module)
        hint = self.hint
        if hint and sys.version_info >= (3, 11):
            # Shown under the message in tracebacks; str(e) stays the runtime's message.
            self.add_note(f"hint: {hint}")

    @property
    def name(self) -> str:
        """Name of the code, e.g. ``"BAD_TENSOR"``."""
        return status_name(self.code)

    @property
    def description(self) -> str:
        """One-line description of the code."""
        return status_description(self.code)

    @property
    def hint(self) -> str:
        """What to do about it."""
        return status_hint(self.code)

    def __reduce__(self) -> tuple[type[Error], tuple[str, int]]:
        # Keeps the code across pickling (errors sent between processes at L3+).
        return (type(self), (str(self), self.code))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name}: {str(self)!r})"


class KernelCompileError(Error):
    """A kernel or orchestration source failed to compile; the message has the compiler output."""

    default_code = ErrorCode.KERNEL_COMPILE


class InvalidArgumentError(Error, ValueError):
    """An argument, tensor, kernel id, geometry or graph the runtime cannot accept."""

    default_code = ErrorCode.INVALID_ARGUMENT


class RunTimeoutError(Error):
    """The run did not finish within ``ChipCallConfig.timeout_ms``."""

    default_code = ErrorCode.RUN_TIMEOUT


class TaskFailedError(Error):
    """A kernel reported failure; its dependents were not run."""

    default_code = ErrorCode.TASK_FAILED


class LoadError(Error):
    """A program or kernel binary could not be loaded."""

    default_code = ErrorCode.LOAD_FAILED


class NotSupportedError(Error, NotImplementedError):
    """The feature is not supported by this build or platform."""

    default_code = ErrorCode.NOT_SUPPORTED


class DeviceError(Error):
    """The device context is not ready, out of memory, or broken by an earlier run."""

    default_code = ErrorCode.DEVICE_BROKEN


class OrchestrationError(Error):
    """The orchestration function reported an error; its message is passed through."""

    default_code = ErrorCode.ORCHESTRATION_FAILED


class RingCapacityError(Error):
    """A scope can never fit a ring of the tensormap_and_ringbuffer runtime (heap, task
    window, dependency pool or TensorMap); the message names the ring, its size and the need.
    """

    default_code = ErrorCode.RING_CAPACITY


class MissingDependencyError(Error):
    """A tool or library the request needs is missing, e.g. the C++23 compiler or the PTO-ISA
    checkout a tile kernel needs; the message names it and how to install it.
    """

    default_code = ErrorCode.MISSING_DEPENDENCY


# The one table from code to class. A code not listed here (OK, INTERNAL, or a code newer than
# this file) raises the base class Error, which still carries the code, name and hint.
_CLASS_BY_CODE: dict[int, type[Error]] = {
    ErrorCode.KERNEL_COMPILE: KernelCompileError,
    ErrorCode.INVALID_ARGUMENT: InvalidArgumentError,
    ErrorCode.UNKNOWN_KERNEL: InvalidArgumentError,
    ErrorCode.TOO_MANY_ARGS: InvalidArgumentError,
    ErrorCode.BAD_TENSOR: InvalidArgumentError,
    ErrorCode.DEVICE_OUT_OF_RANGE: InvalidArgumentError,
    ErrorCode.GEOMETRY_EXCEEDED: InvalidArgumentError,
    ErrorCode.DEPENDENCY_CYCLE: InvalidArgumentError,
    ErrorCode.CAPACITY_EXCEEDED: InvalidArgumentError,
    ErrorCode.RUN_TIMEOUT: RunTimeoutError,
    ErrorCode.TASK_FAILED: TaskFailedError,
    ErrorCode.LOAD_FAILED: LoadError,
    ErrorCode.NOT_SUPPORTED: NotSupportedError,
    ErrorCode.DEVICE_BROKEN: DeviceError,
    ErrorCode.NOT_INITIALIZED: DeviceError,
    ErrorCode.OUT_OF_MEMORY: DeviceError,
    ErrorCode.ORCHESTRATION_FAILED: OrchestrationError,
    ErrorCode.RING_CAPACITY: RingCapacityError,
    ErrorCode.MISSING_DEPENDENCY: MissingDependencyError,
}


def error_class(code: int) -> type[Error]:
    """The exception class raised for ``code``."""
    return _CLASS_BY_CODE.get(int(code), Error)


def error_from_code(code: int, message: str) -> Error:
    """The exception to raise for ``code`` with ``message`` (not raised here)."""
    return error_class(code)(message, code)
