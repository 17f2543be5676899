"""tests/python/test_bad_input.py — bad input at L2 gets a typed error naming the argument, the
value and what is allowed, and the worker still runs the basic example afterwards."""

from __future__ import annotations

import re
from typing import Any

import pto_runtime as pto
import pytest
from basic_graph import basic_callable, run_basic

PLATFORM = "a2a3sim"


@pytest.fixture(scope="module")
def tmr_worker():
    with pto.Worker(
        level=2, platform=PLATFORM, runtime="tensormap_and_ringbuffer", device_id=1
    ) as w:
        yield w


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        ({"timeout_ms": -5}, "ChipCallConfig.timeout_ms=-5 is outside 0..4294967295"),
        ({"heap_bytes": -5}, "ChipCallConfig.heap_bytes=-5 is outside 64..18446744073709551615"),
        ({"task_window": 2**33}, "ChipCallConfig.task_window=8589934592 is outside 1..16777216"),
        ({"log_level": -5}, "ChipCallConfig.log_level=-5 is outside 0..4"),
        ({"log_level": 5}, "ChipCallConfig.log_level=5 is outside 0..4"),
        ({"dump_kernel": -2}, "ChipCallConfig.dump_kernel=-2 is outside -1.."),
        ({"max_tasks": 2**26 + 1}, "ChipCallConfig.max_tasks=67108865 is outside 1..67108864"),
        ({"heap_bytes": 2**70}, "ChipCallConfig.heap_bytes=1180591620717411303424 is outside"),
        ({"enable_pmu": 2}, "ChipCallConfig.enable_pmu=2 is outside 0..1"),
        ({"block_dim": 0}, "ChipCallConfig.block_dim=0 is outside 1.."),
    ],
)
def test_config_field_out_of_range(worker, fields: dict[str, Any], fragment: str) -> None:
    with pytest.raises(pto.InvalidArgumentError) as info:
        pto.ChipCallConfig(**fields)
    assert fragment in str(info.value)
    assert info.value.code is pto.ErrorCode.INVALID_ARGUMENT
    # The same check on assignment, and the config keeps its old value.
    ((name, value),) = fields.items()
    config = pto.ChipCallConfig()
    before = getattr(config, name)
    with pytest.raises(pto.InvalidArgumentError, match=name):
        setattr(config, name, value)
    assert getattr(config, name) == before
    assert run_basic(worker)


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        ({"timeout_ms": 1.5}, "ChipCallConfig.timeout_ms=1.5 is not an int"),
        ({"timeout_ms": True}, "ChipCallConfig.timeout_ms=True is not an int"),
        ({"enable_pmu": "yes"}, "ChipCallConfig.enable_pmu='yes' is not a bool"),
    ],
)
def test_config_field_of_the_wrong_type_is_a_type_error(
    worker, fields: dict[str, Any], fragment: str
) -> None:
    with pytest.raises(TypeError) as info:
        pto.ChipCallConfig(**fields)
    assert fragment in str(info.value)
    assert run_basic(worker)


def test_config_positional_fields_are_checked_too(worker) -> None:
    with pytest.raises(pto.InvalidArgumentError, match="aicpu_thread_num=-1"):
        pto.ChipCallConfig(2, -1)
    assert pto.ChipCallConfig(4, 3) == pto.ChipCallConfig(block_dim=4, aicpu_thread_num=3)
    assert run_basic(worker)


def test_config_block_dim_beyond_the_platform_is_named_at_run(worker) -> None:
    args = pto.ChipStorageTaskArgs()
    with pytest.raises(pto.InvalidArgumentError, match="block_dim 99 is outside 1..24"):
        worker.run(basic_callable("host_build_graph"), args, pto.ChipCallConfig(block_dim=99))
    assert run_basic(worker)


# a5 as the reference has it (simpler at 6ebaf7715, src/a5/platform/include/common/
# platform_config.h): 2 dies x 18 = 36 clusters and at most 5 AICPU threads; its AICPU init
# refuses a sixth thread, and so does our check, before anything runs.
@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        ({"block_dim": 37}, "block_dim 37 is outside 1..36 (the clusters of a5sim)"),
        (
            {"aicpu_thread_num": 6},
            "aicpu_thread_num 6 is outside 1..5 (the AICPU threads of a5sim)",
        ),
    ],
)
def test_config_beyond_a5sims_36_clusters_and_5_aicpu_threads_is_refused(
    fields: dict[str, Any], fragment: str
) -> None:
    with pto.Worker(level=2, platform="a5sim", device_id=2) as w:
        info = w.platform_info
        assert (info.num_clusters, info.max_aicpu_threads) == (36, 5)
        cfg = pto.ChipCallConfig(**fields)
        with pytest.raises(pto.InvalidArgumentError, match=re.escape(fragment)):
            w.run(basic_callable("host_build_graph"), pto.ChipStorageTaskArgs(), cfg)


def test_config_equality_with_another_type_is_false_not_an_error() -> None:
    assert pto.ChipCallConfig() != 3
    assert pto.ChipCallConfig() != "ChipCallConfig()"
    with pytest.raises(TypeError):
        hash(pto.ChipCallConfig())


def test_second_worker_on_the_same_device_is_refused(worker) -> None:
    with pytest.raises(pto.InvalidArgumentError, match="device_id 0 of a2a3sim is already used"):
        pto.Worker(level=2, platform=PLATFORM, device_id=0)
    assert run_basic(worker)


def test_a_closed_workers_device_can_be_used_again() -> None:
    with pto.Worker(level=2, platform=PLATFORM, device_id=5) as w:
        assert run_basic(w)
    with pto.Worker(level=2, platform=PLATFORM, device_id=5) as w:
        assert run_basic(w)


ALLOC_NEGATIVE_TMR = """
#include "pto/orchestration.h"
PTO_DEVICE_ORCHESTRATION(orch) { pto::Scope s(orch); orch.alloc_tensor(PTO_DTYPE_F32, -1); }
"""


def test_alloc_tensor_with_a_negative_extent_is_named(tmr_worker) -> None:
    kc = pto.KernelCompiler(PLATFORM)
    c = pto.ChipCallable(
        kc.compile_orchestration_source("tensormap_and_ringbuffer", ALLOC_NEGATIVE_TMR, "alloc_neg")
    )
    with pytest.raises(pto.Error, match=r"alloc_tensor: shape\[0\] is -1"):
        tmr_worker.run(c, pto.ChipStorageTaskArgs())
    assert run_basic(tmr_worker, "tensormap_and_ringbuffer")


def test_orchestration_for_the_other_runtime_says_which_it_is(worker) -> None:
    kc = pto.KernelCompiler(PLATFORM)
    # host_build_graph runs device orchestrations too (its host orchestrator)...
    assert run_basic(worker, "tensormap_and_ringbuffer")
    kc.compile_orchestration_source(
        "host_build_graph",
        '#include "pto/orchestration.h"\nPTO_DEVICE_ORCHESTRATION(o) { (void)o; }\n',
        "tmr_as_hbg",
    )
    # ...but tensormap_and_ringbuffer takes no PTO_ORCHESTRATION program.
    with pytest.raises(pto.InvalidArgumentError, match="PTO_DEVICE_ORCHESTRATION"):
        kc.compile_orchestration_source(
            "tensormap_and_ringbuffer",
            '#include "pto/host_graph.h"\nPTO_ORCHESTRATION(g, a) { (void)g; (void)a; }\n',
            "hbg_as_tmr",
        )
    assert run_basic(worker)
