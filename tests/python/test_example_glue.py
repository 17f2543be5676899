"""tests/python/test_example_glue.py — examples/glue/main.py: KERNEL_LIST program, TaskBuilder."""

from __future__ import annotations

import subprocess
import sys

import pto_runtime as pto
import pytest


def run_glue(repo_root, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(repo_root / "examples" / "glue" / "main.py"), *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
    )


@pytest.mark.parametrize("args", [[], ["-p", "a5sim", "--tiles", "32", "--aicpu-threads", "4"]])
def test_glue_example_matches_numpy(repo_root, args: list[str]) -> None:
    p = run_glue(repo_root, *args)
    assert p.returncode == 0, p.stdout + p.stderr
    assert any(line.startswith("✓ SUCCESS: ") for line in p.stdout.splitlines()), p.stdout
    assert "3 kernels in one binary: vadd, vscale, vmul" in p.stdout


def test_glue_example_trace_names_tasks_by_the_kernel_list(repo_root) -> None:
    p = run_glue(repo_root, "--profile", "--tiles", "4")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "trace: 12 tasks, kernels vadd, vmul, vscale" in p.stdout


def test_read_kernel_table_and_add_kernels(repo_root) -> None:
    kc = pto.CompileOptions().kernel_compiler()
    program = kc.compile_incore(repo_root / "examples" / "glue" / "kernels.cpp", pto.CoreType.AIV)
    rows = pto.read_kernel_table(program)
    assert [(r.func_id, r.name, r.core_type) for r in rows] == [
        (0, "vadd", pto.CoreType.AIV),
        (1, "vscale", pto.CoreType.AIV),
        (2, "vmul", pto.CoreType.AIV),
    ]
    c = pto.ChipCallable()
    assert c.add_kernels(program) == 3
    with pytest.raises(pto.InvalidArgumentError, match="already defined"):
        c.add_kernels(program)
    single = kc.compile_incore_source(
        '#include "pto/kernel.h"\nPTO_KERNEL(a) { (void)a; }\n', "one", pto.CoreType.AIV
    )
    with pytest.raises(pto.InvalidArgumentError, match="not a kernel program"):
        pto.read_kernel_table(single)
