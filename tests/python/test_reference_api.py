"""tests/python/test_reference_api.py — the reference API: entry names, arg count, TPUSH/TPOP, and
the same orchestrations on host_build_graph.

Orchestrations written against the reference implementation's orchestration API
(include/pto_abi/pto_orchestration_api.h) name their entry and config functions as the reference's
scene tests do (``function_name``, ``config_name``: here -DPTO_ORCHESTRATION_ENTRY / _CONFIG when
compiling); a run is refused only when it has fewer arguments than the config expects; the
reference's a5 bgemm, whose MIX parts trade tiles through PTO-ISA's TPUSH/TPOP pipes, gives
NumPy's result, and a TPOP in a task that is not MIX fails its run at once instead of hanging
the worker. host_build_graph runs the same orchestrations through its host
orchestrator (section 5; tests/cpp/test_hbg_orchestrator.cpp has the dependency cases).

The reference's scene-test suite (../shared/third_party/simpler, or PTO_REFERENCE_SUITE) is used
by path; its tests skip without it. Tile kernels need PTO-ISA (PTO_ISA_ROOT) and clang++-19;
their tests skip without them, unless PTO_REQUIRE_TILE=1 makes that a failure.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pto_runtime as pto
import pytest
from orch_snippets import ADD_KERNEL, SET_BLOCKS

REPO_ROOT = Path(__file__).resolve().parents[2]
SUITE = Path(
    os.environ.get("PTO_REFERENCE_SUITE", REPO_ROOT.parent / "shared" / "third_party" / "simpler")
)
TMR = "tensormap_and_ringbuffer"
CONFIG = pto.ChipCallConfig(block_dim=2, aicpu_thread_num=3)

# A reference-API orchestration whose entry and config have names of their own; the config
# expects EXPECTED_ARGS arguments. The entry submits out = a + b when it has three tensors.
NAMED_ORCH = r"""
#include "pto_orchestration_api.h"
#ifndef EXPECTED_ARGS
#define EXPECTED_ARGS 3
#endif
extern "C" {
__attribute__((visibility("default")))
PTO2OrchestrationConfig sum_graph_config(const ChipTaskArgs &args) {
  (void)args;
  return PTO2OrchestrationConfig{EXPECTED_ARGS};
}
__attribute__((visibility("default"))) void build_sum_graph(const ChipTaskArgs &args) {
  if (args.tensor_count() < 3) return;
  CoreTaskArgs t;
  t.add_input(args.tensor(0).ref(), args.tensor(1).ref());
  t.add_output(args.tensor(2).ref());
  rt_submit_aiv_task(0, t);
}
}
"""

NAMES = ["PTO_ORCHESTRATION_ENTRY=build_sum_graph", "PTO_ORCHESTRATION_CONFIG=sum_graph_config"]

# The same program written for host_build_graph's own API (PTO_ORCHESTRATION).
HBG_SUM_ORCH = r"""
#include "pto/host_graph.h"
PTO_ORCHESTRATION(g, args) {
  using pto::TaskArg;
  const pto::Tensor &a = args.tensor(0), &b = args.tensor(1), &out = args.tensor(2);
  g.add_task(0, PTO_CORE_AIV, {TaskArg::of(a), TaskArg::of(b), TaskArg::of(out)});
}
"""


@pytest.fixture(scope="module")
def tile(tile_toolchain: None) -> None:
    """Skips (or with PTO_REQUIRE_TILE=1 fails) a test that needs tile kernels (conftest.py)."""


def suite_dir(*parts: str) -> Path:
    """A folder of the reference suite; skips the test when the suite is absent."""
    path = SUITE.joinpath(*parts)
    if not path.is_dir():
        pytest.skip(f"no reference suite at {SUITE} (set PTO_REFERENCE_SUITE): {path} is missing")
    return path


@functools.cache
def vector_callable(
    platform: str, defines: tuple[str, ...] = tuple(NAMES), runtime: str = TMR
) -> pto.ChipCallable:
    """NAMED_ORCH (HBG_SUM_ORCH for host_build_graph) with ADD_KERNEL as func 0, the
    orchestration built with ``defines``."""
    kc = pto.KernelCompiler(platform, defines=list(defines))
    name = "ref_api_named_" + "_".join(d.split("=")[-1] for d in defines)
    source = NAMED_ORCH if runtime == TMR else HBG_SUM_ORCH
    callable_ = pto.ChipCallable(kc.compile_orchestration_source(runtime, source, name))
    add = pto.KernelCompiler(platform).compile_incore_source(
        ADD_KERNEL, "ref_api_add", pto.CoreType.AIV
    )
    callable_.add_kernel(0, pto.CoreType.AIV, add)
    return callable_


def run_vector(
    worker: pto.Worker, callable_: pto.ChipCallable, extra_scalars: int = 0
) -> np.ndarray:
    """Runs a program over (a, b, out) and ``extra_scalars`` scalars; returns out."""
    a = np.arange(1024, dtype=np.float32)
    b = np.full(1024, 0.5, dtype=np.float32)
    out = np.full(1024, -1.0, dtype=np.float32)
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(a)
    args.add_tensor(b)
    args.add_tensor(out, "out")
    for i in range(extra_scalars):
        args.add_scalar_i64(i)
    worker.run(callable_, args, CONFIG)
    return out


def assert_vector_ok(out: np.ndarray) -> None:
    np.testing.assert_array_equal(out, np.arange(1024, dtype=np.float32) + 0.5)


@pytest.fixture(scope="module")
def workers():
    """workers(platform): this module's one tensormap worker of that platform (a device may
    have one worker per process), made on first use and closed at the module's end."""
    made = {}
    with contextlib.ExitStack() as stack:

        def get(platform: str):
            if platform not in made:
                made[platform] = stack.enter_context(
                    pto.Worker(level=2, platform=platform, runtime=TMR)
                )
            return made[platform]

        yield get


@pytest.fixture(scope="module")
def a2a3_worker(workers):
    return workers("a2a3sim")


# ----- 0. Reference-internal headers kernels and orchestrations include -----

# A kernel that reads the reference's common/platform_config.h and writes what it says, and an
# orchestration that includes aicpu/cache_maintenance.h (a no-op on the coherent sim).
PLATFORM_CONFIG_KERNEL = r"""
#include "common/platform_config.h"
#include "tensor.h"
#include "pto/kernel.h"
extern "C" PTO_EXPORT void kernel_entry(__gm__ int64_t *args) {
  const ChipTensor *o = reinterpret_cast<const ChipTensor *>(args[0]);
  int64_t *z = reinterpret_cast<int64_t *>(o->buffer.addr) + o->start_offset;
  z[0] = PLATFORM_MAX_BLOCKDIM;
  z[1] = PLATFORM_AIC_CORES_PER_BLOCKDIM;
  z[2] = PLATFORM_AIV_CORES_PER_BLOCKDIM;
  z[3] = PLATFORM_MAX_CORES;
  z[4] = static_cast<int64_t>(PLATFORM_PROF_SYS_CNT_FREQ);
}
"""
PLATFORM_CONFIG_ORCH = r"""
#include "aicpu/cache_maintenance.h"
#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default")))
void aicpu_orchestration_entry(const ChipTaskArgs &a) {
  const ChipTensor &out = a.tensor(0).ref();
  CoreTaskArgs t;
  t.add_inout(out);
  rt_submit_aiv_task(0, t);
}
"""


@pytest.mark.parametrize(
    "platform, clusters, freq", [("a2a3sim", 24, 50_000_000), ("a5sim", 36, 1_000_000_000)]
)
def test_the_reference_platform_config_header_describes_the_platform_compiled_for(
    workers, platform, clusters, freq
):
    kc = pto.KernelCompiler(platform)
    c = pto.ChipCallable(kc.compile_orchestration_source(TMR, PLATFORM_CONFIG_ORCH, "plat_cfg"))
    aiv = pto.CoreType.AIV
    c.add_kernel(0, aiv, kc.compile_incore_source(PLATFORM_CONFIG_KERNEL, "plat_cfg_k", aiv))
    out = np.zeros(5, dtype=np.int64)
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(out, "inout")
    workers(platform).run(c, args, pto.ChipCallConfig(block_dim=2, aicpu_thread_num=3))
    assert out.tolist() == [clusters, 1, 2, clusters * 3, freq]


# An orchestration that waits for its own kernel by polling the memory it writes, as the
# reference's sync-start tests do: the poll (SPIN_WAIT_HINT, or cache_invalidate_range) hands
# the submitted task to the schedulers, which the runtime otherwise holds for a batch until the
# next submit. Scalar 0: 1 polls with cache_invalidate_range, 0 with SPIN_WAIT_HINT alone.
POLL_KERNEL = r"""
#include "tensor.h"
#include "pto/kernel.h"
extern "C" PTO_EXPORT void kernel_entry(__gm__ int64_t *args) {
  const ChipTensor *o = reinterpret_cast<const ChipTensor *>(args[0]);
  int32_t *flag = reinterpret_cast<int32_t *>(o->buffer.addr) + o->start_offset;
  __atomic_store_n(flag, 7, __ATOMIC_RELEASE);
}
"""
POLL_ORCH = r"""
#include "aicpu/cache_maintenance.h"
#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default")))
void aicpu_orchestration_entry(const ChipTaskArgs &a) {
  const ChipTensor &flag = a.tensor(0).ref(), &seen = a.tensor(1).ref();
  CoreTaskArgs t;
  t.add_inout(flag);
  rt_submit_aiv_task(0, t);
  volatile int32_t *f = flag.data_as<int32_t>() + flag.start_offset;
  while (*f == 0 && !rt_is_fatal()) {
    if (a.scalar(0) != 0) cache_invalidate_range(const_cast<int32_t *>(f), 4);
    else SPIN_WAIT_HINT();
  }
  uint32_t idx[1] = {0};
  set_tensor_data<int32_t>(seen, 1, idx, *f);
}
"""


@pytest.mark.parametrize("threads", [3, 1])
@pytest.mark.parametrize("invalidate", [0, 1], ids=["spin_wait_hint", "cache_invalidate_range"])
def test_an_orchestration_polling_what_its_kernel_writes_sees_it(workers, threads, invalidate):
    kc = pto.KernelCompiler("a2a3sim")
    c = pto.ChipCallable(kc.compile_orchestration_source(TMR, POLL_ORCH, "poll_own_kernel"))
    aiv = pto.CoreType.AIV
    c.add_kernel(0, aiv, kc.compile_incore_source(POLL_KERNEL, "poll_own_kernel_k", aiv))
    flag = np.zeros(1, dtype=np.int32)
    seen = np.zeros(1, dtype=np.int32)
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(flag, "inout")
    args.add_tensor(seen, "inout")
    args.add_scalar_i64(invalidate)
    cfg = pto.ChipCallConfig(block_dim=2, aicpu_thread_num=threads, timeout_ms=20000)
    workers("a2a3sim").run(c, args, cfg)
    assert seen[0] == 7


# Kernels that spin until other cores have written, pausing with std::this_thread::yield() as
# the reference's kernels do on the CPU simulation (its sync_start_early_local_owner pending-only
# case), while the orchestration polls with SPIN_WAIT_HINT. Every block of a sync-start task on
# all 48 AIV cores counts itself in v[0], then waits until all have: only when the sim runs
# them at once. On a pool of 2 workers that needs the kernel's sched_yield to suspend its fiber
# (pto/sim_kernel_yield.h; before, two blocks spun on the two workers until the run's time-out),
# and in a seeded run, where one OS thread runs every fiber, the orchestration's poll too.
BARRIER_KERNEL = r"""
#include <thread>
#include "intrinsic.h"
#include "tensor.h"
#include "pto/kernel.h"
extern "C" PTO_EXPORT void kernel_entry(__gm__ int64_t *args) {
  const ChipTensor *o = reinterpret_cast<const ChipTensor *>(args[0]);
  int32_t *v = reinterpret_cast<int32_t *>(o->buffer.addr) + o->start_offset;
  const int32_t n = get_block_num(args);
  __atomic_fetch_add(&v[0], 1, __ATOMIC_ACQ_REL);
  while (__atomic_load_n(&v[0], __ATOMIC_ACQUIRE) < n) std::this_thread::yield();
  v[1 + get_block_idx(args)] = 1 + get_block_idx(args);
}
"""
BARRIER_ORCH = (
    r"""
#include "aicpu/cache_maintenance.h"
#include "pto_orchestration_api.h"
"""
    + SET_BLOCKS
    + r"""extern "C" __attribute__((visibility("default")))
void aicpu_orchestration_entry(const ChipTaskArgs &a) {
  const ChipTensor &v = a.tensor(0).ref(), &seen = a.tensor(1).ref();
  const int32_t n = rt_available_aiv_count();
  CoreTaskArgs t;
  t.add_inout(v);
  set_blocks(t.launch_spec, static_cast<int16_t>(n));
  t.launch_spec.set_require_sync_start(true);
  rt_submit_aiv_task(0, t);
  volatile int32_t *count = v.data_as<int32_t>() + v.start_offset;
  while (*count < n && !rt_is_fatal()) SPIN_WAIT_HINT();
  uint32_t idx[1] = {0};
  set_tensor_data<int32_t>(seen, 1, idx, *count);
}
"""
)


@pytest.mark.parametrize("seed", [-1, 1], ids=["parallel", "seeded"])
@pytest.mark.parametrize("kind", ["scalar", "tile"])
def test_kernels_spinning_with_thread_yield_for_each_other_all_run_at_once(request, kind, seed):
    if kind == "tile":
        request.getfixturevalue("tile_toolchain")
    kc = pto.KernelCompiler("a2a3sim")
    c = pto.ChipCallable(kc.compile_orchestration_source(TMR, BARRIER_ORCH, "yield_barrier"))
    aiv = pto.CoreType.AIV
    tile_headers = "#include <cstdint>\n#include <pto/pto-inst.hpp>\n"
    source = (tile_headers if kind == "tile" else "") + BARRIER_KERNEL
    c.add_kernel(0, aiv, kc.compile_incore_source(source, f"yield_barrier_{kind}", aiv))
    blocks = 48  # a2a3: 24 clusters of 2 AIV cores
    v = np.zeros(1 + blocks, dtype=np.int32)
    seen = np.zeros(1, dtype=np.int32)
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(v, "inout")
    args.add_tensor(seen, "inout")
    cfg = pto.ChipCallConfig(block_dim=24, aicpu_thread_num=2, timeout_ms=20000, sim_seed=seed)
    # A worker of its own: a run that times out leaves its device unusable.
    with pto.Worker(level=2, platform="a2a3sim", runtime=TMR, device_id=4) as w:
        w.run(c, args, cfg)
    assert seen[0] == blocks
    assert v.tolist() == [blocks, *range(1, blocks + 1)]


# ----- 1. The entry's and the config's names -----


def test_an_entry_and_config_named_by_defines_are_the_ones_called(a2a3_worker):
    assert_vector_ok(run_vector(a2a3_worker, vector_callable("a2a3sim")))
    # The config is found by its name too: expecting 4 arguments, it refuses a run of 3.
    strict = vector_callable("a2a3sim", (*NAMES, "EXPECTED_ARGS=4"))
    with pytest.raises(
        pto.InvalidArgumentError, match=r"expects 4 arguments \(sum_graph_config\(\)"
    ):
        run_vector(a2a3_worker, strict)


@pytest.mark.parametrize(
    "defines, expected_symbol",
    [
        ((), "aicpu_orchestration_entry"),  # the default name, which the source does not define
        (("PTO_ORCHESTRATION_ENTRY=build_other_graph",), "build_other_graph"),
    ],
)
def test_a_missing_entry_is_refused_naming_the_symbol_expected(
    a2a3_worker, defines, expected_symbol
):
    with pytest.raises(pto.InvalidArgumentError) as e:
        run_vector(a2a3_worker, vector_callable("a2a3sim", defines))
    assert f'defines no entry extern "C" void {expected_symbol}(' in str(e.value)
    assert "PTO_ORCHESTRATION_ENTRY" in str(e.value)  # how to name another
    assert_vector_ok(run_vector(a2a3_worker, vector_callable("a2a3sim")))  # the worker goes on


# ----- 2. expected_arg_count, as the reference checks it -----


@pytest.mark.parametrize(
    "expected, tensors, scalars, refused",
    [
        (3, 3, 0, False),  # exactly
        (3, 3, 2, False),  # more: the reference runs it, the extra ones are the entry's to ignore
        (4, 3, 0, True),  # fewer: refused
        (0, 3, 0, False),  # 0 or less: no check
        (-1, 3, 0, False),
    ],
)
def test_a_run_is_refused_only_with_fewer_arguments_than_expected(
    a2a3_worker, expected, tensors, scalars, refused
):
    callable_ = vector_callable("a2a3sim", (*NAMES, f"EXPECTED_ARGS={expected}"))
    if not refused:
        assert_vector_ok(run_vector(a2a3_worker, callable_, extra_scalars=scalars))
        return
    with pytest.raises(pto.InvalidArgumentError) as e:
        run_vector(a2a3_worker, callable_, extra_scalars=scalars)
    message = str(e.value)
    assert f"expects {expected} arguments" in message
    assert f"the run has {tensors + scalars} ({tensors} tensors, {scalars} scalars)" in message


# ----- The reference's paged attention, its entry named build_paged_attention_graph on a5 -----

# (chip folder, example, kernels folder relative to the example, platform). func ids and core
# types as the examples' test_*.py declare them; the a5 orchestrations' function_name is
# build_paged_attention_graph, the a2a3 ones' aicpu_orchestration_entry.
PAGED_ATTENTION = {
    "a2a3-paged_attention": ("a2a3", "paged_attention", "kernels", "a2a3sim"),
    "a5-paged_attention": ("a5", "paged_attention", "kernels", "a5sim"),
    "a5-paged_attention_manual_scope": (
        "a5",
        "paged_attention_manual_scope",
        "../paged_attention/kernels",
        "a5sim",
    ),
}
PA_KERNELS = [
    (0, pto.CoreType.AIC, "aic/aic_qk_matmul.cpp"),
    (1, pto.CoreType.AIV, "aiv/aiv_softmax_prepare.cpp"),
    (2, pto.CoreType.AIC, "aic/aic_pv_matmul.cpp"),
    (3, pto.CoreType.AIV, "aiv/aiv_online_update.cpp"),
]
PA_PARAMS = {  # the examples' small sim case (SmallCase1 / CaseSmall1)
    "batch": 1,
    "num_heads": 16,
    "kv_head_num": 1,
    "head_dim": 16,
    "block_size": 16,
    "context_len": 33,
    "max_model_len": 256,
    "dtype": "bfloat16",
}


def reference_golden_module():
    """The reference's shared paged-attention golden (simpler_setup/goldens), loaded by path."""
    path = SUITE / "simpler_setup" / "goldens" / "paged_attention.py"
    if not path.is_file():
        pytest.skip(f"no reference golden at {path}")
    pytest.importorskip("torch")
    pytest.importorskip("ml_dtypes")
    spec = importlib.util.spec_from_file_location("reference_paged_attention_golden", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def to_numpy(t):
    import ml_dtypes
    import torch

    if t.dtype == torch.bfloat16:
        return t.contiguous().view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.contiguous().numpy()


@pytest.mark.parametrize("case", list(PAGED_ATTENTION))
def test_reference_paged_attention_matches_its_golden(tile, workers, case):
    chip, example, kernels, platform = PAGED_ATTENTION[case]
    folder = suite_dir("examples", chip, TMR, example)
    golden = reference_golden_module()
    defines = ["PTO_ORCHESTRATION_ENTRY=build_paged_attention_graph"] if chip == "a5" else []
    kc = pto.KernelCompiler(platform, defines=defines)
    orch = folder / "kernels" / "orchestration" / "paged_attention_orch.cpp"
    callable_ = pto.ChipCallable(kc.compile_orchestration(TMR, str(orch)))
    for func_id, core_type, source in PA_KERNELS:
        path = (folder / kernels / source).resolve()
        callable_.add_kernel(func_id, core_type, kc.compile_incore(str(path), core_type))

    import torch

    torch.manual_seed(0)
    inputs = golden.generate_inputs(PA_PARAMS)
    tensors = {name: value for name, value in inputs if isinstance(value, torch.Tensor)}
    arrays = {name: to_numpy(t) for name, t in tensors.items()}
    args = pto.ChipStorageTaskArgs()
    for name, value in inputs:
        if isinstance(value, ctypes.c_float):
            args.add_scalar_f32(value.value)
        else:
            args.add_tensor(arrays[name], "out" if name == "out" else "in")
    expected = {name: t.clone() for name, t in tensors.items()}
    golden.compute_golden(expected, PA_PARAMS)
    workers(platform).run(callable_, args, pto.ChipCallConfig(block_dim=4, aicpu_thread_num=3))
    np.testing.assert_allclose(arrays["out"], expected["out"].numpy(), rtol=1e-3, atol=1e-3)


# ----- 3. TPUSH/TPOP: pipes between MIX parts; a pop outside a MIX task fails at once -----

# A PTO_KERNEL tile kernel that pops a tile from a cube-to-vector pipe, in an AIV task: nothing
# could ever push to it (PTO-ISA's CPU implementation would wait for ever).
TPOP_KERNEL = r"""
#include <cstdint>
#include <pto/pto-inst.hpp>
#include <pto/common/fifo.hpp>
#include "pto/kernel.h"
using Pipe = pto::TPipe<0, pto::Direction::DIR_C2V, 16 * 16 * 4, 2>;
using Half = pto::Tile<pto::TileType::Vec, float, 16, 16, pto::BLayout::RowMajor, 16, 16>;
PTO_KERNEL(args) {
  (void)args;
  Half tile;
  pto::TASSIGN(tile, 0x0);
  Pipe pipe(nullptr, 0U, 0U);
  pto::TPOP<Pipe, Half, pto::TileSplitAxis::TILE_NO_SPLIT>(pipe, tile);
}
"""
TPOP_ORCH = {  # three such tasks, no arguments
    TMR: r"""
#include "pto/orchestration.h"
PTO_DEVICE_ORCHESTRATION(o) {
  for (int i = 0; i < 3; ++i) o.submit_task(0, PTO_CORE_AIV, nullptr, 0, nullptr, 0);
}
""",
    "host_build_graph": r"""
#include "pto/host_graph.h"
PTO_ORCHESTRATION(g, args) {
  (void)args;
  for (int i = 0; i < 3; ++i) g.add_task(0, PTO_CORE_AIV, nullptr, 0);
}
""",
}

# The reference's a5 bgemm (test_bgemm.py): float32, BATCH x 4x4x4 grid of 64 x 64 tiles.
TILE, GRID, BATCH = 64, 4, 2
# Every cluster and the reference's default AICPU threads, as its test runs it.
BGEMM_CONFIG = pto.ChipCallConfig(block_dim=36, aicpu_thread_num=5, timeout_ms=60000)
PROMPT_S = 15  # far below the run's time limit: the run did not wait for it


def assert_stopped_at_the_pipe(error: pto.TaskFailedError, started: float) -> None:
    elapsed = time.monotonic() - started
    assert elapsed < PROMPT_S, f"the run took {elapsed:.1f} s to fail"
    message = str(error)
    assert "TPOP or TFREE on PTO-ISA pipe FlagID 0" in message, message
    assert "not a MIX task" in message, message
    assert "task " in message and "(kernel 0" in message, message


@pytest.mark.parametrize("runtime", [TMR, "host_build_graph"])
def test_a_tpop_nobody_pushes_to_fails_the_run_not_the_worker(tile, workers, runtime):
    kc = pto.KernelCompiler("a2a3sim")
    orch = kc.compile_orchestration_source(runtime, TPOP_ORCH[runtime], f"ref_api_tpop_{runtime}")
    callable_ = pto.ChipCallable(orch)
    kernel = kc.compile_incore_source(TPOP_KERNEL, "ref_api_tpop", pto.CoreType.AIV)
    callable_.add_kernel(0, pto.CoreType.AIV, kernel)
    config = pto.ChipCallConfig(block_dim=2, aicpu_thread_num=3, timeout_ms=60000)
    # device 1 for host_build_graph: device 0 of a2a3sim is this module's tensormap worker's
    with contextlib.ExitStack() as stack:
        if runtime == TMR:
            w = workers("a2a3sim")
        else:
            w = stack.enter_context(
                pto.Worker(level=2, platform="a2a3sim", runtime=runtime, device_id=1)
            )
        for _ in range(2):  # the stopped cores take the next run's tasks as usual
            started = time.monotonic()
            with pytest.raises(pto.TaskFailedError) as e:
                w.run(callable_, pto.ChipStorageTaskArgs(), config)
            assert_stopped_at_the_pipe(e.value, started)
        names = tuple(NAMES) if runtime == TMR else ()
        assert_vector_ok(run_vector(w, vector_callable("a2a3sim", names, runtime)))


@pytest.fixture(scope="module")
def bgemm_callable(tile) -> pto.ChipCallable:
    """The reference's a5 bgemm: one MIX source compiled for AIC (func 0) and AIV (func 1)."""
    folder = suite_dir("examples", "a5", TMR, "bgemm", "kernels")
    kc = pto.KernelCompiler("a5sim")
    callable_ = pto.ChipCallable(
        kc.compile_orchestration(TMR, str(folder / "orchestration" / "bgemm_orch.cpp"))
    )
    kernel = str(folder / "mix" / "kernel_bgemm.cpp")
    for func_id, core_type in ((0, pto.CoreType.AIC), (1, pto.CoreType.AIV)):
        callable_.add_kernel(func_id, core_type, kc.compile_incore(kernel, core_type))
    return callable_


@pytest.mark.parametrize("runtime", [TMR, "host_build_graph"])
def test_reference_bgemm_trades_tiles_through_tpush_tpop_and_gives_numpys_result(
    workers, bgemm_callable, runtime
):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(BATCH * GRID * GRID * TILE * TILE) * 0.01).astype(np.float32)
    b = (rng.standard_normal(a.size) * 0.01).astype(np.float32)
    c = np.zeros(a.size, dtype=np.float32)
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(a)
    args.add_tensor(b)
    args.add_tensor(c, "inout")
    kc = pto.KernelCompiler("a5sim")
    folder = suite_dir("examples", "a5", TMR, "bgemm", "kernels")
    callable_ = bgemm_callable
    if runtime != TMR:  # the same orchestration source, compiled for host_build_graph
        callable_ = pto.ChipCallable(
            kc.compile_orchestration(runtime, str(folder / "orchestration" / "bgemm_orch.cpp"))
        )
        kernel = str(folder / "mix" / "kernel_bgemm.cpp")
        for func_id, core_type in ((0, pto.CoreType.AIC), (1, pto.CoreType.AIV)):
            callable_.add_kernel(func_id, core_type, kc.compile_incore(kernel, core_type))
    with contextlib.ExitStack() as stack:
        if runtime == TMR:
            w = workers("a5sim")
        else:
            w = stack.enter_context(
                pto.Worker(level=2, platform="a5sim", runtime=runtime, device_id=1)
            )
        w.run(callable_, args, BGEMM_CONFIG)
    shape = (BATCH, GRID, GRID, TILE, TILE)
    want = np.einsum("bmkij,bknjl->bmnil", a.reshape(shape), b.reshape(shape))
    np.testing.assert_allclose(c, want.ravel(), rtol=1e-4, atol=1e-6)


# ----- 5. The reference API on host_build_graph -----

# Reads out[OUT_INDEX] in the orchestration after the task writing out was submitted: the host
# builds the whole graph before any task runs, so that read is refused. a[0] (no task writes a)
# can be read: it is the staged data the kernels will see.
HBG_READ_ORCH = r"""
#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default")))
void aicpu_orchestration_entry(const ChipTaskArgs &args) {
  const ChipTensor &a = args.tensor(0).ref(), &b = args.tensor(1).ref();
  const ChipTensor &out = args.tensor(2).ref();
  uint32_t first[1] = {0};
  if (get_tensor_data<float>(a, 1, first) != 0.0f) return;  // a = 0, 1, 2, ...: a[0] is 0
  CoreTaskArgs t;
  t.add_input(a, b);
  t.add_output(out);
  rt_submit_aiv_task(0, t);
#ifdef READ_OUT
  (void)get_tensor_data<float>(out, 1, first);
#endif
}
"""


@pytest.fixture(scope="module")
def hbg_worker():
    """A host_build_graph worker for this section (device 2: 0 and 1 are the sections' above)."""
    with pto.Worker(level=2, platform="a2a3sim", runtime="host_build_graph", device_id=2) as w:
        yield w


def hbg_callable(source: str, name: str, defines: tuple[str, ...] = ()) -> pto.ChipCallable:
    """A reference-API source compiled for host_build_graph, ADD_KERNEL as func 0."""
    kc = pto.KernelCompiler("a2a3sim", defines=list(defines))
    callable_ = pto.ChipCallable(kc.compile_orchestration_source("host_build_graph", source, name))
    add = pto.KernelCompiler("a2a3sim").compile_incore_source(
        ADD_KERNEL, "ref_api_add", pto.CoreType.AIV
    )
    callable_.add_kernel(0, pto.CoreType.AIV, add)
    return callable_


def test_a_named_reference_entry_and_its_config_run_on_host_build_graph(hbg_worker):
    assert_vector_ok(run_vector(hbg_worker, hbg_callable(NAMED_ORCH, "ref_api_hbg", tuple(NAMES))))
    strict = hbg_callable(NAMED_ORCH, "ref_api_hbg_strict", (*NAMES, "EXPECTED_ARGS=4"))
    with pytest.raises(pto.InvalidArgumentError, match=r"expects 4 arguments"):
        run_vector(hbg_worker, strict)


def test_reading_a_task_written_tensor_on_host_build_graph_is_refused_naming_it(hbg_worker):
    assert_vector_ok(run_vector(hbg_worker, hbg_callable(HBG_READ_ORCH, "ref_api_hbg_read")))
    reads_out = hbg_callable(HBG_READ_ORCH, "ref_api_hbg_read_out", ("READ_OUT",))
    with pytest.raises(pto.NotSupportedError) as e:
        run_vector(hbg_worker, reads_out)
    assert "reading run tensor 2" in str(e.value)
    assert "task 0 (kernel 0) writes it" in str(e.value)
    assert_vector_ok(run_vector(hbg_worker, hbg_callable(HBG_READ_ORCH, "ref_api_hbg_read")))


def test_reference_host_build_graph_vector_example_passes_as_a_scene_test(tmp_path):
    """The reference suite's own host_build_graph case, run unchanged by the scene runner."""
    folder = suite_dir("tests", "st", "a2a3", "host_build_graph", "vector_example")
    out = tmp_path / "scene.json"
    result = subprocess.run(
        [sys.executable, "-m", "pto_runtime.scene", str(folder), "--manual", "include"]
        + ["--json", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    cases = json.loads(out.read_text())["cases"]
    assert cases and all(c["result"] == "PASSED" for c in cases), result.stdout[-3000:]
