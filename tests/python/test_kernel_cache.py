"""tests/python/test_kernel_cache.py — the kernel cache never serves a stale binary, can be
bypassed and cleared, and a source compiled as the wrong kind of binary is named."""

from __future__ import annotations

from pathlib import Path

import pto_runtime as pto
import pytest
from basic_graph import basic_callable, run_basic

ONE_TASK_ORCH = """
#include "pto/host_graph.h"
PTO_ORCHESTRATION(graph, args) {
  (void)args;
  graph.add_task(0, PTO_CORE_AIV, {pto::TaskArg::of_i64(0)});
}
"""

# Fails with the code its header defines, so the run's error tells which binary ran.
KERNEL = """
#include "pto/kernel.h"
#include "code.h"
PTO_KERNEL(args) { pto::fail(args, KERNEL_CODE); }
"""


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv("PTO_CACHE_DIR", str(d))
    return d


def failure_code(worker: pto.ChipWorker, kc: pto.KernelCompiler, kernel: Path) -> str:
    c = pto.ChipCallable(kc.compile_orchestration_source("host_build_graph", ONE_TASK_ORCH, "one"))
    c.add_kernel(0, pto.CoreType.AIV, kc.compile_incore(kernel, pto.CoreType.AIV))
    with pytest.raises(pto.TaskFailedError) as info:
        worker.run(c, pto.ChipStorageTaskArgs())
    return str(info.value)


def test_changed_header_gives_a_new_binary_and_the_new_result(
    cache_dir: Path, tmp_path: Path, worker: pto.ChipWorker
) -> None:
    (tmp_path / "code.h").write_text("#define KERNEL_CODE 5\n")
    kernel = tmp_path / "k.cpp"
    kernel.write_text(KERNEL)
    kc = pto.KernelCompiler("a2a3sim", opt_level="-O0")
    first = kc.compile_incore(kernel, pto.CoreType.AIV)
    assert "status 5;" in failure_code(worker, kc, kernel)

    (tmp_path / "code.h").write_text("#define KERNEL_CODE 7\n")
    assert kc.compile_incore(kernel, pto.CoreType.AIV) != first
    assert "status 7;" in failure_code(worker, kc, kernel)


def test_cache_false_and_the_environment_variable_bypass_reuse(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert pto.KernelCompiler("a2a3sim").cache is True
    assert pto.KernelCompiler("a2a3sim", cache=False).cache is False
    monkeypatch.setenv("PTO_KERNEL_CACHE", "0")
    assert pto.KernelCompiler("a2a3sim").cache is False
    monkeypatch.setenv("PTO_KERNEL_CACHE", "maybe")
    with pytest.raises(pto.InvalidArgumentError, match="PTO_KERNEL_CACHE=maybe"):
        _ = pto.KernelCompiler("a2a3sim").cache


def test_clear_cache_empties_it_and_compiles_still_work(
    cache_dir: Path, worker: pto.ChipWorker
) -> None:
    kc = pto.KernelCompiler("a2a3sim")
    basic_callable("host_build_graph")
    assert kc.cache_dir == str(cache_dir)
    assert kc.clear_cache() > 0
    assert not any(p.suffix == ".so" for p in cache_dir.iterdir())
    assert kc.clear_cache() == 0
    assert run_basic(worker, "host_build_graph")


def test_kernel_compiled_as_orchestration_is_invalid_argument(worker: pto.ChipWorker) -> None:
    kernel = (
        Path(__file__).resolve().parents[2] / "examples" / "basic" / "kernels" / "kernel_add.cpp"
    )
    with pytest.raises(pto.InvalidArgumentError, match="compute kernel.*compile_incore"):
        pto.KernelCompiler("a2a3sim").compile_orchestration("host_build_graph", kernel)
    assert run_basic(worker, "host_build_graph")
