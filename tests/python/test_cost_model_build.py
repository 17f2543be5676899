"""tests/python/test_cost_model_build.py — KernelCompiler's cost-model twins from Python.

compile_incore_cost_model returns a twin exporting what the runtime calls (kernel_entry,
pto_costmodel_begin, pto_costmodel_end) or raises the typed error; compile_cost_models_many
returns a CostModelBuild per kernel with a path or a one-line reason. One twin is compiled
(bgemm's add kernel, cached afterwards); the error paths compile nothing.
"""

from __future__ import annotations

import ctypes
from pathlib import Path

import pto_runtime as pto
import pytest
from test_tile_kernels import SCALAR, tile_root, write  # noqa: F401 (tile_root is a fixture)

REPO = Path(__file__).resolve().parents[2]
ADD = REPO / "examples" / "bgemm" / "kernels" / "kernel_add.cpp"


def test_a_tile_kernel_has_a_twin_and_a_scalar_kernel_has_none(
    tile_root: Path,  # noqa: F811 (the fixture)
    tmp_path: Path,
    capfd: pytest.CaptureFixture,
) -> None:
    kc = pto.KernelCompiler("a2a3sim", pto_isa_root=tile_root)
    twin = kc.compile_incore_cost_model(ADD, pto.CoreType.AIV)
    assert Path(twin).is_file() and "-costmodel-" in Path(twin).name
    lib = ctypes.CDLL(twin)
    for symbol in ("kernel_entry", "pto_costmodel_begin", "pto_costmodel_end"):
        assert hasattr(lib, symbol), symbol

    scalar = write(tmp_path / "scalar.cpp", SCALAR)
    builds = kc.compile_cost_models_many(
        [(ADD, pto.CoreType.AIV), (scalar, pto.CoreType.AIV)], progress=True
    )
    progress = capfd.readouterr().err
    assert all(isinstance(b, pto.CostModelBuild) for b in builds)
    assert builds[0].path == twin and builds[0].unavailable is None
    assert builds[1].path is None
    assert builds[1].unavailable is not None and "not a tile kernel" in builds[1].unavailable
    assert "\n" not in builds[1].unavailable
    assert "compiling 2 cost models for a2a3sim" in progress
    assert "(AIV cost model, " in progress and "(AIV cost model) unavailable" in progress


def test_a_scalar_kernel_raises_invalid_argument(tmp_path: Path) -> None:
    scalar = write(tmp_path / "scalar.cpp", SCALAR)
    with pytest.raises(pto.InvalidArgumentError, match="not a tile kernel"):
        pto.KernelCompiler("a2a3sim").compile_incore_cost_model(scalar, pto.CoreType.AIV)


def test_a5sim_raises_not_supported() -> None:
    with pytest.raises(pto.NotSupportedError, match="no cost model for a5"):
        pto.KernelCompiler("a5sim").compile_incore_cost_model(ADD, pto.CoreType.AIV)
    assert pto.KernelCompiler("a5sim").compile_cost_models_many([]) == []
