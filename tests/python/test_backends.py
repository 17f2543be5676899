"""tests/python/test_backends.py — pto.backends(), get_backend() and CompileOptions from Python."""

from __future__ import annotations

import pto_runtime as pto
import pytest


def by_name() -> dict[str, pto.BackendInfo]:
    return {b.name: b for b in pto.backends()}


def test_backends_lists_cpu_sim_available_and_the_others_with_a_reason() -> None:
    rows = by_name()
    assert rows["cpu_sim"].available and rows["cpu_sim"].reason == ""
    assert rows["cpu_sim"].platforms == ["a2a3sim", "a5sim"]
    assert not rows["ascend_npu"].available
    assert (
        "CANN toolkit (ASCEND_HOME_PATH / libascendcl) not found at build time"
        in rows["ascend_npu"].reason
    )
    assert rows["ascend_npu"].platforms == ["a2a3", "a5"]
    assert not rows["amd_aie"].available and "amd_aie" in rows["amd_aie"].reason
    assert [b.name for b in pto.backends()] == sorted(rows)


@pytest.mark.parametrize("name", ["ascend_npu", "amd_aie"])
def test_an_unavailable_backend_raises_not_supported(name: str) -> None:
    with pytest.raises(pto.NotSupportedError, match=name):
        pto.get_backend(name)


def test_an_unknown_backend_is_invalid_argument_listing_the_registered_ones() -> None:
    with pytest.raises(pto.InvalidArgumentError, match="cpu_sim"):
        pto.get_backend("tpu")


def test_cpu_sim_backend_and_platform_mapping() -> None:
    sim = pto.get_backend("cpu_sim")
    assert (sim.name, sim.program_dir, sim.host_compiled_kernels) == ("cpu_sim", "sim", True)
    assert pto.backend_for_platform("a5sim").name == "cpu_sim"
    with pytest.raises(pto.NotSupportedError, match="CANN"):
        pto.backend_for_platform("a2a3")


def test_compile_options_defaults_and_repr() -> None:
    o = pto.CompileOptions()
    assert (o.target, o.platform, o.opt_level, o.debug, o.profiling) == (
        "cpu_sim",
        "",
        2,
        False,
        False,
    )
    assert o.resolved_platform == "a2a3sim"
    assert "target='cpu_sim'" in repr(o)
    assert o == pto.CompileOptions(target="cpu_sim")
    assert o != pto.CompileOptions(opt_level=3)
    assert o != "cpu_sim"  # another type compares unequal, no TypeError


@pytest.mark.parametrize(
    ("kwargs", "error", "field"),
    [
        ({"opt_level": 7}, pto.InvalidArgumentError, "opt_level"),
        ({"aicpu_threads": 9}, pto.InvalidArgumentError, "aicpu_threads"),
        ({"host_threads": -1}, pto.InvalidArgumentError, "host_threads"),
        ({"host_threads": 2}, pto.NotSupportedError, "host_threads"),
        ({"platform": "a2a3"}, pto.InvalidArgumentError, "platform"),
        ({"target": "ascend_npu"}, pto.NotSupportedError, "ascend_npu"),
        ({"target": "nope"}, pto.InvalidArgumentError, "nope"),
    ],
)
def test_compile_options_reject_bad_fields_naming_them(kwargs, error, field) -> None:
    with pytest.raises(error, match=field):
        pto.CompileOptions(**kwargs)


def test_compile_options_drive_the_kernel_compiler_and_the_run_config() -> None:
    o = pto.CompileOptions(platform="a5sim", opt_level=1, profiling=True, aicpu_threads=3)
    kc = o.kernel_compiler(defines=["X=1"])
    assert kc.platform == "a5sim"
    cfg = o.call_config(pto.ChipCallConfig(block_dim=4))
    assert (cfg.block_dim, cfg.aicpu_thread_num, cfg.enable_profiling) == (4, 3, True)
    o.opt_level = 9  # fields are writable; every method checks again
    with pytest.raises(pto.InvalidArgumentError, match="opt_level"):
        o.kernel_compiler()


def test_debug_and_opt_level_reach_the_compiler() -> None:
    # Different flags, different cached binaries: the options are part of the compile.
    source = '#include "pto/kernel.h"\nPTO_KERNEL(args) { (void)args; }\n'
    plain = (
        pto.CompileOptions(opt_level=2)
        .kernel_compiler()
        .compile_incore_source(source, "k", pto.CoreType.AIV)
    )
    debug = (
        pto.CompileOptions(opt_level=0, debug=True)
        .kernel_compiler()
        .compile_incore_source(source, "k", pto.CoreType.AIV)
    )
    assert plain != debug
    assert b".debug_info" in open(debug, "rb").read()
    assert b".debug_info" not in open(plain, "rb").read()
