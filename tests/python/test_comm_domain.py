"""tests/python/test_comm_domain.py — claims about L3 communication domains (comm_domains.md).

Contract under test: allocate_domain checks everything before it allocates (a too-small window is
a ValueError naming the sizes); every chip of a domain reads and writes every rank's window
through its CommContext, so the all-reduce example gives NumPy's result bit for bit on 2, 4 and 8
chips in both chip modes; a TWAIT that is never satisfied fails the run at the chip's time limit,
naming the TWAIT and its signal, and the worker runs the next run; a rank that fails stops the
other parts of its group, which would otherwise wait for it until the time limit.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pto_runtime as pto
import pytest

MODES = ["thread", "process"]

# flags[0] is never notified: each rank waits for it, except the rank args[2] names, which fails.
WAIT_OR_FAIL_KERNEL = """
#include <cstdint>
#include <pto/pto-inst.hpp>
#include "pto/comm/pto_comm_inst.hpp"
#include "platform_comm/comm_context.h"
#include "pto/kernel.h"
PTO_KERNEL(args) {
  const auto *ctx = reinterpret_cast<const CommContext *>(args[1]);
  if (static_cast<int64_t>(ctx->rankId) == args[2]) {
    pto::fail(args, 7);
    return;
  }
  pto::comm::Signal s(pto::tensor<int32_t>(args, 0));
  pto::comm::TWAIT(s, 1, pto::comm::WaitCmp::GE);
}
"""


@pytest.fixture(scope="module")
def example(repo_root, tile_toolchain):
    spec = importlib.util.spec_from_file_location(
        "allreduce_example", repo_root / "examples/allreduce/main.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def allreduce_callables(example):
    return example.build_callables("a2a3sim")


@pytest.fixture(scope="module")
def wait_or_fail(repo_root, kernel_compiler, tile_toolchain, tmp_path_factory):
    src = tmp_path_factory.mktemp("comm") / "wait_or_fail.cpp"
    src.write_text(WAIT_OR_FAIL_KERNEL)
    # The one-task orchestration the communication examples share.
    orch = repo_root / "examples/allreduce/orchestration.cpp"
    c = pto.ChipCallable(kernel_compiler.compile_orchestration("host_build_graph", orch))
    c.add_kernel(0, pto.CoreType.AIV, kernel_compiler.compile_incore(src, pto.CoreType.AIV))
    return c


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("algorithm", ["mesh", "ring", "twophase"])
@pytest.mark.parametrize("chips", [2, 4, 8])
def test_allreduce_example_gives_numpys_sum_on_every_chip(
    example, allreduce_callables, mode, algorithm, chips
):
    # Two epochs in one domain: the second reuses windows whose flags the first left non-zero.
    diff = example.run(allreduce_callables, "a2a3sim", chips, mode, algorithm, 4096)
    assert diff == 0.0


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("chips", [2, 4, 8])
def test_tensor_parallel_ffn_example_matches_numpy(repo_root, example, mode, chips):
    # examples/ffn_tp: per chip relu(x @ w1_r) @ w2_r, then the ring all-reduce of the partials.
    spec = importlib.util.spec_from_file_location(
        "ffn_tp_example", repo_root / "examples/ffn_tp/main.py"
    )
    ffn = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ffn)
    ring = example.build_callables("a2a3sim")["ring"]
    assert ffn.run(ffn.build_ffn("a2a3sim"), ring, example, "a2a3sim", chips, mode) < 1e-5


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("chips", [2, 4, 8])
def test_moe_dispatch_and_combine_example_returns_every_token_through_its_expert(
    repo_root, tile_toolchain, mode, chips
):
    spec = importlib.util.spec_from_file_location(
        "moe_ep_example", repo_root / "examples/moe_ep/main.py"
    )
    moe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(moe)
    assert moe.run(moe.build("a2a3sim"), "a2a3sim", chips, mode) == 0


def test_a_window_too_small_is_a_value_error_before_anything_is_allocated():
    with pto.Worker(level=3, device_ids=[0, 1], num_sub_workers=0) as w:
        seen = {}

        def orch(o):
            before = w.heap_bytes_in_use
            with pytest.raises(
                ValueError, match=r"need 4104 bytes; window_size = 4096 is too small"
            ):
                o.allocate_domain(
                    "d",
                    [0, 1],
                    4096,
                    [pto.CommBufferSpec("a", "float32", 1024), pto.CommBufferSpec("b", "int32", 2)],
                )
            seen["allocated"] = w.heap_bytes_in_use - before

        w.run(orch)
        assert seen["allocated"] == 0


@pytest.mark.parametrize(
    ("workers", "message"),
    [
        ([0, 2], r"workers\[1\] = 2 is not a chip index of this worker \(0..1\)"),
        ([1, 1], r"chip 1 is in workers twice"),
        ([], r"workers has 0 chips; allowed 1..64"),
    ],
)
def test_bad_workers_are_named(workers, message):
    with pto.Worker(level=3, device_ids=[0, 1], num_sub_workers=0) as w:

        def orch(o):
            with pytest.raises(pto.InvalidArgumentError, match=message):
                o.allocate_domain("d", workers, 64)

        w.run(orch)


def test_contexts_name_ranks_windows_and_buffers_and_a_released_domain_refuses_new_tasks():
    with pto.Worker(level=3, device_ids=[0, 1, 2], num_sub_workers=0) as w:

        def orch(o):
            specs = [pto.CommBufferSpec("x", "float32", 10), pto.CommBufferSpec("f", "int32", 4)]
            with o.allocate_domain("tp", [2, 0], 100, specs) as d:
                a, b = d[2], d[0]
                assert (a.domain_rank, b.domain_rank, a.domain_size) == (0, 1, 2)
                assert a.actual_window_size == 128  # rounded up to 64 bytes
                assert b.local_window_base - a.local_window_base == 128
                assert a.buffers["f"].offset == 40 and a.buffers["f"].nbytes == 16
                assert a.buffers["f"].base == a.local_window_base + 40
                with pytest.raises(
                    pto.InvalidArgumentError, match="chip 1 is not one of its workers"
                ):
                    d[1]
                with pytest.raises(
                    pto.InvalidArgumentError, match="needs 44 bytes; the buffer has 40"
                ):
                    a.buffers["x"].tensor((11,))
            assert d.released
            with pytest.raises(pto.InvalidArgumentError, match="'tp' was released"):
                d[0]

        w.run(orch)


@pytest.mark.parametrize("mode", MODES)
def test_a_twait_never_notified_fails_at_the_time_limit_naming_it_and_the_worker_goes_on(
    wait_or_fail, example, allreduce_callables, mode
):
    with pto.Worker(level=3, device_ids=[0, 1], num_sub_workers=0, mode=mode) as w:
        config = pto.ChipCallConfig(block_dim=1, timeout_ms=1500)

        def orch(o):
            d = o.allocate_domain("d", [0, 1], 64, [pto.CommBufferSpec("flag", "int32", 16)])
            parts = []
            for chip in (0, 1):
                args = pto.ChipStorageTaskArgs()
                args.add_tensor(d[chip].buffers["flag"].tensor(), "inout")
                args.add_scalar(d[chip].device_ctx)
                args.add_scalar(-1)  # no rank fails
                parts.append(args)
            o.submit_chip_group(wait_or_fail, parts, config, chips=[0, 1])

        t0 = time.monotonic()
        with pytest.raises(pto.RunTimeoutError) as e:
            w.run(orch)
        assert time.monotonic() - t0 < 20
        assert "time limit of 1500 ms" in str(e.value)
        assert "TWAIT on the signal at 0x" in str(e.value)
        assert "for >= 1" in str(e.value)
        # The signal's address is named: its domain, rank, chip, buffer and offset.
        assert re.search(
            r"\n0x[0-9a-f]+ is domain 'd', rank \d \(chip \d\), buffer 'flag' \+ \d+", str(e.value)
        ), str(e.value)
        # The same worker, the same chips: a good run.
        inputs = [w.alloc(64) for _ in range(2)]
        for i, x in enumerate(inputs):
            x[:] = np.arange(64, dtype=np.float32) * (i + 1)
        outs = [[w.alloc(64) for _ in range(2)]]
        w.run(example.allreduce_orch(allreduce_callables["mesh"], "mesh", inputs, outs, [0, 1]))
        np.testing.assert_array_equal(outs[0][1], np.arange(64, dtype=np.float32) * 3)


@pytest.mark.parametrize("mode", MODES)
def test_a_failed_rank_stops_the_peers_waiting_for_it(wait_or_fail, mode):
    with pto.Worker(level=3, device_ids=[0, 1, 2, 3], num_sub_workers=0, mode=mode) as w:
        config = pto.ChipCallConfig(block_dim=1, timeout_ms=60000)

        def orch(o):
            d = o.allocate_domain("d", [0, 1, 2, 3], 64, [pto.CommBufferSpec("flag", "int32", 16)])
            parts = []
            for chip in range(4):
                args = pto.ChipStorageTaskArgs()
                args.add_tensor(d[chip].buffers["flag"].tensor(), "inout")
                args.add_scalar(d[chip].device_ctx)
                args.add_scalar(2)  # rank 2 fails; the others wait for a flag nobody sets
                parts.append(args)
            o.submit_chip_group(wait_or_fail, parts, config, chips=[0, 1, 2, 3])

        t0 = time.monotonic()
        with pytest.raises(
            pto.TaskFailedError,
            match=r"failed on chip 2 .*task 0 \(kernel 0, AIV\) failed with status 7",
        ):
            w.run(orch)
        assert time.monotonic() - t0 < 20  # not the 60 s limit: the peers were stopped
        w.run(lambda o: None)


SUITE = Path(
    os.environ.get(
        "PTO_REFERENCE_SUITE", Path(__file__).resolve().parents[3] / "shared/third_party/simpler"
    )
)


@pytest.mark.parametrize("mode", MODES)
def test_the_references_comm_scene_tests_pass_unchanged(tile_toolchain, mode):
    # Its tests/st/worker: the collectives (all-reduce in five algorithms, all-gather,
    # reduce-scatter, broadcast, all-to-all, group reservation) and the comm_domain deferred
    # notify, on 2 and 4 chips, both platforms, manual cases included.
    worker_tests = SUITE / "tests" / "st" / "worker"
    if not worker_tests.is_dir():
        pytest.skip(f"no reference suite at {SUITE} (set PTO_REFERENCE_SUITE)")
    result = subprocess.run(
        [sys.executable, "-m", "pto_runtime.scene", str(worker_tests), "--manual", "include",
         "--l3-mode", mode, "-j", "2", "--run-timeout", "120"],
        capture_output=True, text=True, encoding="utf-8", timeout=900,
    )  # fmt: skip
    assert result.stdout.splitlines()[-1] == "passed 40 / attempted 40 / total 40", (
        result.stdout[-4000:] + result.stderr[-2000:]
    )
