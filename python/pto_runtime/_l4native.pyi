# python/pto_runtime/_l4native.pyi — types of the native L4 module (bind_l4.cpp), by hand.
#
# Not generated: nanobind's stubgen imports a module alone, and this one's signatures name
# classes of _native. Keep it in step with bind_l4.cpp (mypy checks pto_runtime.l4 against it).
from collections.abc import Callable, Sequence
from typing import Any

from ._native import ChipCallable, ChipCallConfig, ChipMode, ChipStorageTaskArgs, L3RunHandle

VERSION: str
ANY_RANK: int
ALL_RANKS: int
MIN_PEER_TIMEOUT_MS: int
MAX_PEER_TIMEOUT_MS: int
MIN_POLL_MAX_US: int
MAX_POLL_MAX_US: int
MAX_SPIN_US: int
MIN_LANDING_BYTES: int
MAX_LANDING_BYTES: int

def mpi_available() -> bool: ...
def _runtime_identity() -> tuple[str, int]: ...

class L4CommDomain:
    @property
    def name(self) -> str: ...
    @property
    def members(self) -> list[tuple[int, int]]: ...
    def release(self) -> None: ...
    @property
    def released(self) -> bool: ...
    def is_local(self, rank: int, chip: int) -> bool: ...
    def context(self, rank: int, chip: int) -> tuple[Any, ...]: ...

class L4Orchestrator:
    def submit_chip(
        self,
        callable: ChipCallable,
        args: ChipStorageTaskArgs,
        config: ChipCallConfig | None,
        rank: int,
        chip: int,
        name: str,
        after: Sequence[int] | None = None,
    ) -> int: ...
    def submit_sub(
        self,
        fn: Callable[..., Any],
        args: ChipStorageTaskArgs,
        rank: int,
        name: str,
        after: Sequence[int] | None = None,
    ) -> int: ...
    def fetch(self, array: int, rank: int) -> None: ...
    def allocate_domain(
        self,
        name: str,
        members: Sequence[tuple[int, int]],
        window_size: int,
        buffers: Sequence[tuple[str, Any, int, int]],
    ) -> L4CommDomain: ...
    @property
    def rank(self) -> int: ...
    @property
    def size(self) -> int: ...

class L4Worker:
    def __init__(
        self,
        device_ids: Sequence[int],
        num_sub_workers: int,
        platform: str,
        runtime: str,
        mode: ChipMode,
        heap_bytes: int,
        spawn_timeout_ms: int,
        heap_wait_ms: int,
        close_timeout_ms: int,
        peer_timeout_ms: int,
        poll_max_us: int,
        spin_us: int,
        landing_bytes: int,
        comm: int,
    ) -> None: ...
    def submit(self, runner: Callable[[L4Orchestrator], None]) -> L3RunHandle: ...
    def alloc_bytes(self, nbytes: int, name: str, valid: int) -> Any: ...
    def alloc_distributed_bytes(
        self, nbytes: int, name: str, kind: str, tile_bytes: int
    ) -> Any: ...
    def valid_ranks(self, array: int) -> list[int]: ...
    def transfers(self) -> dict[str, int]: ...
    def close(self, timeout_ms: int = -1) -> None: ...
    @property
    def closed(self) -> bool: ...
    @property
    def rank(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def mpi_thread_level(self) -> int: ...
    @property
    def num_chips(self) -> int: ...
    @property
    def num_sub_workers(self) -> int: ...
