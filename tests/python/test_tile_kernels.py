"""tests/python/test_tile_kernels.py — KernelCompiler's tile toolchain from Python: detection, typed
errors, a real bfloat16 through pto.Worker, and compile_incore_many with progress.

Tests that need clang++-19 (or PTO_TILE_CXX) and a pto-isa checkout (PTO_ISA_ROOT, else the
pinned copy in ../shared/third_party/pto-isa) skip saying what is missing; with
PTO_REQUIRE_TILE=1 (scripts/test_all.sh sets it) they fail instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pto_runtime as pto
import pytest

REPO = Path(__file__).resolve().parents[2]
TILE_KERNELS = REPO / "tests" / "common" / "tile_kernels"
SHARED_ISA = REPO.parent / "shared" / "third_party" / "pto-isa"

SCALAR = '#include "pto/kernel.h"\nPTO_KERNEL(args) { (void)args; }\n'
TILE = "#include <cstdint>\n#include <pto/pto-inst.hpp>\n" + SCALAR

ONE_TASK_ORCH = """
#include "pto/host_graph.h"
PTO_ORCHESTRATION(g, args) {
  g.add_task(0, PTO_CORE_AIV,
             {pto::TaskArg::of(args.tensor(0)), pto::TaskArg::of_i64(args.scalar(0))});
}
"""


def isa_root() -> Path | None:
    env = os.environ.get("PTO_ISA_ROOT")
    if env:
        return Path(env)
    return SHARED_ISA if (SHARED_ISA / "include/pto/pto-inst.hpp").is_file() else None


@pytest.fixture
def tile_root() -> Path:
    """The pto-isa root, once the whole tile toolchain is known to be here (else skip or fail)."""
    root = isa_root()
    why = ""
    if root is None or not (root / "include/pto/pto-inst.hpp").is_file():
        why = "no pto-isa checkout (set PTO_ISA_ROOT; scripts/fetch_pto_isa.sh gets it)"
    else:
        try:
            pto.KernelCompiler("a2a3sim").tile_compiler  # noqa: B018 (the probe is the point)
        except pto.MissingDependencyError as e:
            why = f"no C++23 compiler for tile kernels: {e}"
    if why:
        if os.environ.get("PTO_REQUIRE_TILE") == "1":
            pytest.fail(f"PTO_REQUIRE_TILE=1, but {why}")
        pytest.skip(f"tile toolchain unavailable: {why}")
    assert root is not None
    return root


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_tile_kernels_are_told_apart_by_their_includes_and_tile_overrides(tmp_path: Path):
    write(tmp_path / "inc" / "tiles.h", "#include <pto/common/pto_tile.hpp>\n")
    tile = write(tmp_path / "tile.cpp", TILE)
    nested = write(tmp_path / "nested.cpp", '#include "tiles.h"\n')
    scalar = write(tmp_path / "scalar.cpp", SCALAR)
    kc = pto.KernelCompiler("a2a3sim", include_dirs=[tmp_path / "inc"])
    assert kc.is_tile_kernel(tile) and kc.is_tile_kernel(nested)
    assert not kc.is_tile_kernel(scalar)
    assert not pto.KernelCompiler("a2a3sim", tile=False).is_tile_kernel(tile)
    assert pto.KernelCompiler("a2a3sim", tile=True).is_tile_kernel(scalar)


def test_tile_kernel_without_pto_isa_raises_missing_dependency(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.delenv("PTO_ISA_ROOT", raising=False)
    src = write(tmp_path / "needs_isa.cpp", TILE)
    with pytest.raises(pto.MissingDependencyError) as info:
        pto.KernelCompiler("a2a3sim").compile_incore(src, pto.CoreType.AIV)
    e = info.value
    assert e.code == pto.ErrorCode.MISSING_DEPENDENCY and e.name == "MISSING_DEPENDENCY"
    for needle in ("needs_isa.cpp", "PTO_ISA_ROOT", "pto_isa_root", "fetch_pto_isa.sh"):
        assert needle in str(e)
    assert e.hint and e.description


def test_pto_isa_root_that_is_no_checkout_is_invalid_argument(tmp_path: Path):
    (tmp_path / "include").mkdir()
    with pytest.raises(pto.InvalidArgumentError, match="include/pto/pto-inst.hpp") as info:
        pto.KernelCompiler("a2a3sim", pto_isa_root=tmp_path)
    assert str(tmp_path) in str(info.value)


def test_no_cxx23_compiler_raises_missing_dependency_naming_clang19(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    write(tmp_path / "isa" / "include" / "pto" / "pto-inst.hpp", "#error stand-in\n")
    monkeypatch.setenv("PTO_ISA_ROOT", str(tmp_path / "isa"))
    monkeypatch.setenv("PTO_TILE_CXX", "/nonexistent/clang++")
    src = write(tmp_path / "tile_x.cpp", TILE)
    with pytest.raises(pto.MissingDependencyError) as info:
        pto.KernelCompiler("a2a3sim").compile_incore(src, pto.CoreType.AIV)
    for needle in ("tile_x.cpp", "C++23", "clang++-19", "clang-19", "/nonexistent/clang++"):
        assert needle in str(info.value)
    with pytest.raises(pto.MissingDependencyError):
        pto.KernelCompiler("a2a3sim").tile_compiler  # noqa: B018


def test_bfloat16_is_real_bfloat16_in_a_tile_kernel_run_by_the_worker(tile_root: Path):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    kc = pto.KernelCompiler("a2a3sim", pto_isa_root=tile_root)
    c = pto.ChipCallable(kc.compile_orchestration_source("host_build_graph", ONE_TASK_ORCH, "one"))
    c.add_kernel(
        0, pto.CoreType.AIV, kc.compile_incore(TILE_KERNELS / "bf16_bits.cpp", pto.CoreType.AIV)
    )
    out = np.zeros(3, dtype=ml_dtypes.bfloat16)
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(out, pto.Direction.OUTPUT)
    args.add_scalar(-2.5)
    with pto.Worker(level=2, platform="a2a3sim") as w:
        w.run(c, args)
    # 0x3c00 for 1.0 would mean bfloat16_t is IEEE half (src/worker/tile_toolchain.h).
    assert [hex(b) for b in out.view(np.uint16)] == ["0x3f80", "0x4049", "0xc020"]
    assert out.astype(np.float32).tolist() == [1.0, 3.140625, -2.5]


def test_a_chip_kernels_column_major_tmuls_and_pipe_entry_offset_compile_and_run(tile_root: Path):
    # Both refused by the pinned PTO-ISA's CPU simulation, accepted by the chips
    # (include/pto_sim_isa/pto/cpu/TBinSOps.hpp, TPush.hpp); the reference suite's
    # spmd_paged_attention needs both.
    kc = pto.KernelCompiler("a2a3sim", pto_isa_root=tile_root)
    c = pto.ChipCallable(kc.compile_orchestration_source("host_build_graph", ONE_TASK_ORCH, "one"))
    kernel = TILE_KERNELS / "colmajor_muls.cpp"
    c.add_kernel(0, pto.CoreType.AIV, kc.compile_incore(kernel, pto.CoreType.AIV))
    data = np.arange(1, 17, dtype=np.float32)
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(data, pto.Direction.INOUT)
    args.add_scalar(-0.5)
    with pto.Worker(level=2, platform="a2a3sim") as w:
        w.run(c, args)
    assert data.tolist() == [-0.5 * v for v in range(1, 17)]


def test_a_scalar_op_the_chips_keep_row_major_is_still_refused_on_a_column_major_tile(
    tmp_path: Path, tile_root: Path
):
    src = write(
        tmp_path / "sels.cpp",
        TILE.replace(
            "PTO_KERNEL(args) { (void)args; }",
            "using namespace pto;\n"
            "PTO_KERNEL(args) {\n"
            "  (void)args;\n"
            "  using ColTile = Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, 16, 1>;\n"
            "  ColTile a, b;\n"
            "  TASSIGN(a, 0x0);\n"
            "  TASSIGN(b, 0x100);\n"
            "  TMAXS(a, b, 1.0f);\n"
            "  TDIVS(a, 2.0f, b);\n"
            "}\n",
        ),
    )
    kc = pto.KernelCompiler("a2a3sim", pto_isa_root=tile_root)
    with pytest.raises(pto.KernelCompileError) as info:
        kc.compile_incore(src, pto.CoreType.AIV)
    # TMAXS is accepted (any layout, as on the chips); TDIVS of a scalar by a tile (OP_RDIVS),
    # which nobody has checked on the chips, keeps PTO-ISA's row-major rule.
    assert "Row Major" in str(info.value) and "OP_RDIVS" in str(info.value)
    assert "OP_MAXS" not in str(info.value)


def test_compile_incore_many_keeps_order_prints_progress_and_reuses_the_cache(
    tile_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture
):
    monkeypatch.setenv("PTO_CACHE_DIR", str(tmp_path / "cache"))
    kc = pto.KernelCompiler("a2a3sim", pto_isa_root=tile_root)
    kernels = [
        (write(tmp_path / "a.cpp", SCALAR), pto.CoreType.AIV),
        (write(tmp_path / "t.cpp", TILE), pto.CoreType.AIC),
        (str(write(tmp_path / "b.cpp", SCALAR + "// b\n")), pto.CoreType.AIV),
    ]
    paths = kc.compile_incore_many(kernels, progress=True)
    cold = capfd.readouterr().err
    assert paths == [kc.compile_incore(p, t) for p, t in kernels]
    assert f"(AIC, {kc.tile_compiler})" in cold and f"(AIV, {kc.compiler})" in cold
    assert "3 compiled, 0 cached" in cold
    assert kc.compile_incore_many(kernels, progress=True) == paths
    assert "0 compiled, 3 cached" in capfd.readouterr().err


def test_a_second_process_takes_the_compiler_probe_from_the_cache(
    tile_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The probe (three clang runs, about half a second) happens once per cache, not once per
    process: a scene runner starts a process per case. A memo naming a library that is gone is
    not trusted."""
    log = tmp_path / "cxx.log"
    cxx = write(tmp_path / "cxx", f'#!/bin/sh\necho "$*" >> {log}\nexec clang++-19 "$@"\n')
    cxx.chmod(0o755)
    src = write(tmp_path / "t.cpp", TILE)
    cache = tmp_path / "cache"
    env = {**os.environ, "PTO_TILE_CXX": str(cxx), "PTO_CACHE_DIR": str(cache)}
    env["PTO_ISA_ROOT"] = str(tile_root)
    code = (
        "import sys, pto_runtime as pto\n"
        "pto.KernelCompiler('a2a3sim').compile_incore(sys.argv[1], pto.CoreType.AIV)\n"
    )

    def calls() -> list[str]:
        log.unlink(missing_ok=True)
        subprocess.run([sys.executable, "-c", code, str(src)], env=env, check=True)
        return log.read_text().splitlines()

    first = calls()
    assert any("probe" in c for c in first), first  # probed, then compiled the kernel
    (memo,) = cache.glob("tile-probe-*")
    assert calls() == ["--version"]  # the probe remembered, the kernel cached
    memo.write_text("shim\n/nonexistent/libclang_rt.builtins.a\n")
    assert any("probe" in c for c in calls())  # probed again
    assert "/nonexistent" not in memo.read_text()
    monkeypatch.setenv("PTO_CACHE_DIR", str(cache))
    pto.KernelCompiler("a2a3sim").clear_cache()
    assert not memo.exists()


def test_compile_incore_many_names_every_failing_kernel(tmp_path: Path):
    good = write(tmp_path / "good.cpp", SCALAR)
    bad1 = write(tmp_path / "bad1.cpp", "not C++\n")
    bad2 = write(tmp_path / "bad2.cpp", "also not C++\n")
    kc = pto.KernelCompiler("a2a3sim")
    with pytest.raises(pto.KernelCompileError) as info:
        kc.compile_incore_many(
            [(good, pto.CoreType.AIV), (bad1, pto.CoreType.AIV), (bad2, pto.CoreType.AIC)]
        )
    assert "2 of 3" in str(info.value)
    assert str(bad1) in str(info.value) and str(bad2) in str(info.value)
    assert kc.compile_incore_many([]) == []
