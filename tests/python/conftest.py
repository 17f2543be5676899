"""tests/python/conftest.py — shared fixtures for the Python API tests: paths, compiler, worker."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pto_runtime as pto
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
# Scene files are programs that test_scene.py runs through the scene front ends, not tests.
collect_ignore = ["scene_files"]
PLATFORM = "a2a3sim"

# Device logs of the tests (failing kernels write DEV_ERROR lines) stay out of ~/ascend.
os.environ.setdefault("PTO_LOG_DIR", str(Path(tempfile.gettempdir()) / "pto_test_device_logs"))


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def run_example():
    """run_example(example, *args, timeout=600): examples/<example>/main.py with ``args`` in a
    process of its own, the way a user runs it; its CompletedProcess (stdout, stderr as text)."""

    def run(example: str, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, str(REPO_ROOT / "examples" / example / "main.py"), *args],
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=timeout,
        )

    return run


def missing_tile_toolchain() -> str | None:
    """Why the tile-kernel examples cannot run here, or None."""
    root = os.environ.get("PTO_ISA_ROOT")
    if not root:
        return "PTO_ISA_ROOT is not set (a PTO-ISA checkout whose include/ holds pto/pto-inst.hpp)"
    if not (Path(root) / "include" / "pto" / "pto-inst.hpp").is_file():
        return f"PTO_ISA_ROOT={root} has no include/pto/pto-inst.hpp"
    if shutil.which("clang++-19") is None:
        return "clang++-19 is not on PATH (tile kernels need C++23 and __bf16)"
    if importlib.util.find_spec("ml_dtypes") is None:
        return "the Python package ml_dtypes is not installed (bfloat16 arrays)"
    return None


@pytest.fixture(scope="session")
def tile_toolchain() -> None:
    """Skips the test unless the tile-kernel examples can run here (PTO-ISA, clang++-19,
    ml_dtypes); PTO_REQUIRE_TILE=1 (scripts/test_all.sh sets it) makes their absence a failure."""
    reason = missing_tile_toolchain()
    if reason is not None:
        if os.environ.get("PTO_REQUIRE_TILE") == "1":
            pytest.fail(f"PTO_REQUIRE_TILE=1 but {reason}")
        pytest.skip(reason)


@pytest.fixture(scope="session")
def kernel_compiler() -> pto.KernelCompiler:
    return pto.KernelCompiler(PLATFORM)


@pytest.fixture(scope="module")
def worker():
    """One initialized worker per test module; finalized at the end."""
    with pto.Worker(level=2, platform=PLATFORM) as w:
        yield w


@pytest.fixture(scope="session")
def build_callable(kernel_compiler: pto.KernelCompiler):
    """build_callable(orchestration_source, {func_id: kernel_source}) -> ChipCallable (AIV)."""

    def build(orchestration: str, kernels: dict[int, str]) -> pto.ChipCallable:
        kc = kernel_compiler
        callable_ = pto.ChipCallable(
            kc.compile_orchestration_source("host_build_graph", orchestration, "test_orch")
        )
        for func_id, source in kernels.items():
            binary = kc.compile_incore_source(source, f"test_kernel_{func_id}", pto.CoreType.AIV)
            callable_.add_kernel(func_id, pto.CoreType.AIV, binary)
        return callable_

    return build
