"""tests/python/test_launch_model.py — the reference's launch model: SPMD launches,
dependency-only tasks and dispatch predicates, through its orchestration API
(include/pto_abi/pto_orchestration_api.h), on both runtimes.

A dependency-only task (rt_submit_dummy_task) is ordered by its arguments and dependencies like
any task, runs no kernel and takes no core; a chain of them orders the kernels around it. A
dispatch predicate (CoreTaskArgs::set_predicate) is read when its task is ready: false retires
the task without running it, and its consumers run as if it had. RunStats.tasks_retired_inline
counts both; tasks_run counts kernels only.
"""

from __future__ import annotations

import contextlib
import functools

import numpy as np
import pto_runtime as pto
import pytest
from orch_snippets import SET_BLOCKS

TMR = "tensormap_and_ringbuffer"
HBG = "host_build_graph"
RUNTIMES = [TMR, HBG]
CONFIG = pto.ChipCallConfig(block_dim=2, aicpu_thread_num=3)

# Descriptor-ABI kernels (no PTO-ISA). 0: every element of args[0] = the float in scalar 0's
# low 32 bits. 1: args[1][0] = args[0][0].
SET_KERNEL = r"""
#include <string.h>
#include "tensor.h"
#include "pto/kernel.h"
extern "C" PTO_EXPORT void kernel_entry(__gm__ int64_t *args) {
  const ChipTensor *o = reinterpret_cast<const ChipTensor *>(args[0]);
  const uint32_t bits = static_cast<uint32_t>(args[1]);
  float v;
  memcpy(&v, &bits, sizeof v);
  float *z = reinterpret_cast<float *>(o->buffer.addr) + o->start_offset;
  for (uint64_t i = 0; i < o->numel(); ++i) z[i] = v;
}
"""
COPY_KERNEL = r"""
#include "tensor.h"
#include "pto/kernel.h"
extern "C" PTO_EXPORT void kernel_entry(__gm__ int64_t *args) {
  const ChipTensor *x = reinterpret_cast<const ChipTensor *>(args[0]);
  const ChipTensor *y = reinterpret_cast<const ChipTensor *>(args[1]);
  reinterpret_cast<float *>(y->buffer.addr)[y->start_offset] =
      reinterpret_cast<const float *>(x->buffer.addr)[x->start_offset];
}
"""

# Run tensors: X (float, 64), Y (float, 1), gate (int32, 4). Scalars: dummies, predicate op
# (0 = none), predicate target, gate index, mode.
#   mode 0: set X = 7; `dummies` dependency-only tasks on X (inout); set X = 99 predicated on
#           gate[index] op target; Y[0] = X[0].
#   mode 1: two writers of X's halves, a dependency-only barrier on both (explicit
#           dependencies, no tensors), then Y[0] = X[0] ordered only by the barrier.
#   mode 2: a dependency-only task whose create-info output the orchestration reads back with
#           get_tensor_data (it must not wait for a kernel that never comes); Y[0] = X[0].
#   mode 3: a predicate whose operand names no element (index past the gate's extent).
ORCH = r"""
#include <string.h>
#include "pto_orchestration_api.h"
static uint64_t f32(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }
extern "C" __attribute__((visibility("default")))
void aicpu_orchestration_entry(const ChipTaskArgs &a) {
  const ChipTensor &X = a.tensor(0).ref(), &Y = a.tensor(1).ref(), &gate = a.tensor(2).ref();
  const int64_t dummies = (int64_t)a.scalar(0), op = (int64_t)a.scalar(1);
  const int64_t target = (int64_t)a.scalar(2);
  const uint32_t index = (uint32_t)a.scalar(3);
  const int64_t mode = (int64_t)a.scalar(4);
  if (mode == 0 || mode == 3) {
    { CoreTaskArgs t; t.add_inout(X); t.add_scalar(f32(7.0f)); rt_submit_aiv_task(0, t); }
    for (int64_t i = 0; i < dummies; ++i) {
      CoreTaskArgs t;
      t.add_inout(X);
      rt_submit_dummy_task(t);
    }
    {
      CoreTaskArgs t;
      t.add_inout(X);
      t.add_scalar(f32(99.0f));
      if (op != 0) {
        CoreTaskPredicate p;
        p.operand.tensor = &gate;
        p.operand.ndims = 1;
        p.operand.indices[0] = index;
        p.op = static_cast<PredicateOp>(op);
        p.target = target;
        t.set_predicate(p);
      }
      rt_submit_aiv_task(0, t);
    }
  } else if (mode == 1) {
    uint32_t off[1] = {0}, half[1] = {32}, off2[1] = {32};
    ChipTensor lo = X.view(half, off), hi = X.view(half, off2);
    PTO2TaskId ids[2];
    for (int k = 0; k < 2; ++k) {
      CoreTaskArgs t;
      t.add_inout(k == 0 ? lo : hi);
      t.add_scalar(f32(k == 0 ? 5.0f : 6.0f));
      ids[k] = rt_submit_aiv_task(0, t).task_id();
    }
    PTO2TaskId barrier;
    { CoreTaskArgs t; t.set_dependencies(ids, 2); barrier = rt_submit_dummy_task(t).task_id(); }
    CoreTaskArgs t;
    ChipTensor Xn = X;
    Xn.manual_dep = true;  // ordered by the barrier alone
    t.add_input(Xn);
    t.add_inout(Y);
    t.set_dependencies(&barrier, 1);
    rt_submit_aiv_task(1, t);
    return;
  } else if (mode == 2) {
    uint32_t shape[1] = {1};
    TensorCreateInfo ci(shape, 1, DataType::INT32);
    CoreTaskArgs t;
    t.add_output(ci);
    TaskOutputTensors out = rt_submit_dummy_task(t);
    uint32_t idx[1] = {0};
    (void)get_tensor_data<int32_t>(out.get_ref(0), 1, idx);
  }
  CoreTaskArgs t;
  t.add_input(X);
  t.add_inout(Y);
  rt_submit_aiv_task(1, t);
}
"""

# PredicateOp: NONE 0, EQ 1, NE 2, GT 3, LT 4, GE 5, LE 6.
OPS = {"EQ": 1, "NE": 2, "GT": 3, "LT": 4, "GE": 5, "LE": 6}


@functools.cache
def launch_callable(platform: str, runtime: str) -> pto.ChipCallable:
    kc = pto.KernelCompiler(platform)
    callable_ = pto.ChipCallable(
        kc.compile_orchestration_source(runtime, ORCH, "launch_model_orch")
    )
    for func_id, source, name in ((0, SET_KERNEL, "launch_set"), (1, COPY_KERNEL, "launch_copy")):
        callable_.add_kernel(
            func_id, pto.CoreType.AIV, kc.compile_incore_source(source, name, pto.CoreType.AIV)
        )
    return callable_


@pytest.fixture(scope="module")
def workers():
    """workers(platform, runtime): one worker per platform and runtime for the module."""
    made = {}
    with contextlib.ExitStack() as stack:

        def get(platform: str, runtime: str) -> pto.Worker:
            if (platform, runtime) not in made:
                made[platform, runtime] = stack.enter_context(  # one worker per device
                    pto.Worker(
                        level=2,
                        platform=platform,
                        runtime=runtime,
                        device_id=RUNTIMES.index(runtime),
                    )
                )
            return made[platform, runtime]

        yield get


def run(
    workers, platform, runtime, *, dummies=0, op=0, target=0, index=0, mode=0, gate=(0, 0, 0, 0)
):
    """Runs ORCH; returns (X, Y, stats)."""
    worker = workers(platform, runtime)
    x = np.zeros(64, dtype=np.float32)
    y = np.full(1, -1.0, dtype=np.float32)
    g = np.array(gate, dtype=np.int32)
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(x, "inout")
    args.add_tensor(y, "inout")
    args.add_tensor(g, "in")
    for s in (dummies, op, target, index, mode):
        args.add_scalar_i64(s)
    stats = worker.run(launch_callable(platform, runtime), args, CONFIG)
    return x, y, stats


PLATFORMS = ["a2a3sim", "a5sim"]


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("dummies", [1, 3, 2000])
def test_a_chain_of_dependency_only_tasks_orders_the_kernels_around_it(
    workers, platform, runtime, dummies
):
    x, y, stats = run(workers, platform, runtime, dummies=dummies)
    assert y[0] == 99.0 and (x == 99.0).all()
    assert stats.tasks_run == 3
    assert stats.tasks_retired_inline == dummies


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_dependency_only_barrier_orders_its_consumer_after_both_producers(
    workers, platform, runtime
):
    for _ in range(20):  # the consumer must never see a half not yet written
        x, y, stats = run(workers, platform, runtime, mode=1)
        np.testing.assert_array_equal(
            x, np.r_[np.full(32, 5.0), np.full(32, 6.0)].astype(np.float32)
        )
        assert y[0] == 5.0
        assert stats.tasks_retired_inline == 1 and stats.tasks_run == 3


@pytest.mark.parametrize("platform", PLATFORMS)
def test_reading_a_dependency_only_tasks_output_does_not_wait_forever(workers, platform):
    # tensormap only: host_build_graph reads no task's output while it builds the graph.
    x, y, stats = run(workers, platform, TMR, mode=2)
    assert y[0] == 0.0
    assert stats.tasks_retired_inline == 1 and stats.tasks_run == 1


# (op, target, gate value, runs): sign extension included (-1 < 0).
CASES = [
    ("GT", 0, 0, False),
    ("GT", 0, 1, True),
    ("EQ", 3, 3, True),
    ("EQ", 3, 4, False),
    ("NE", 3, 3, False),
    ("LT", 0, -1, True),
    ("GE", -1, -1, True),
    ("LE", -2, -1, False),
]


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("op, target, value, runs", CASES)
def test_a_false_predicate_retires_its_task_and_releases_its_consumer(
    workers, platform, runtime, op, target, value, runs
):
    x, y, stats = run(
        workers,
        platform,
        runtime,
        dummies=0,
        op=OPS[op],
        target=target,
        index=2,
        gate=(0, 0, value, 0),
    )
    expect = 99.0 if runs else 7.0
    assert y[0] == expect and (x == expect).all()
    assert stats.tasks_run == (3 if runs else 2)
    assert stats.tasks_retired_inline == (0 if runs else 1)


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_predicate_naming_no_element_is_refused_and_the_worker_goes_on(
    workers, platform, runtime
):
    with pytest.raises(
        pto.InvalidArgumentError, match="set_predicate: the operand names no element"
    ):
        run(workers, platform, runtime, op=OPS["GT"], index=4, mode=3)
    x, y, _ = run(workers, platform, runtime, dummies=2)
    assert y[0] == 99.0


# ----- SPMD launches -----

# Block kernel (descriptor ABI): out[(block * 3 + lane) * 16] = block * 1000 + block_num, where
# lane is 0 on an AIC core, 1 + sub_block_id on an AIV core; the block given by scalar 0 fails
# with status 77 instead. One cache line per (block, lane).
BLOCK_KERNEL = r"""
#include "tensor.h"
#include "intrinsic.h"
#include "pto/kernel.h"
extern "C" PTO_EXPORT void kernel_entry(__gm__ int64_t *args) {
  const ChipTensor *o = reinterpret_cast<const ChipTensor *>(args[0]);
  float *z = reinterpret_cast<float *>(o->buffer.addr) + o->start_offset;
  const int32_t idx = get_block_idx(args), num = get_block_num(args);
  const int32_t lane = AIV_LANE ? 1 + get_sub_block_id(args) : 0;
  if (static_cast<int64_t>(args[1]) == idx) {
    pto::fail(args, 77);
    return;
  }
  z[(idx * 3 + lane) * 16] = static_cast<float>(idx * 1000 + num);
}
"""
# Sum kernel: y[0] = the sum of x (a consumer of every block).
SUM_KERNEL = r"""
#include "tensor.h"
#include "pto/kernel.h"
extern "C" PTO_EXPORT void kernel_entry(__gm__ int64_t *args) {
  const ChipTensor *x = reinterpret_cast<const ChipTensor *>(args[0]);
  const ChipTensor *y = reinterpret_cast<const ChipTensor *>(args[1]);
  const float *p = reinterpret_cast<const float *>(x->buffer.addr) + x->start_offset;
  double s = 0;
  for (uint64_t i = 0; i < x->numel(); ++i) s += p[i];
  reinterpret_cast<float *>(y->buffer.addr)[y->start_offset] = static_cast<float>(s);
}
"""
# Scalars: shape (0 AIV, 1 AIC, 2 MIX), blocks, failing block (-1: none), sync_start.
# Kernels: 0 the AIV block kernel, 1 the AIC one, 2 the sum (AIV), 3 a PTO_KERNEL (AIV).
SPMD_ORCH = (
    r"""
#include "pto_orchestration_api.h"
"""
    + SET_BLOCKS
    + r"""extern "C" __attribute__((visibility("default")))
void aicpu_orchestration_entry(const ChipTaskArgs &a) {
  const ChipTensor &X = a.tensor(0).ref(), &Y = a.tensor(1).ref();
  const int64_t shape = (int64_t)a.scalar(0), blocks = (int64_t)a.scalar(1);
  const int64_t fail_block = (int64_t)a.scalar(2);
  const bool sync = a.scalar(3) != 0;
  {
    CoreTaskArgs t;
    t.add_inout(X);
    t.add_scalar(static_cast<uint64_t>(fail_block));
    set_blocks(t.launch_spec, static_cast<int16_t>(blocks));
    t.launch_spec.set_require_sync_start(sync);
    if (shape == 0) rt_submit_aiv_task(0, t);
    if (shape == 1) rt_submit_aic_task(1, t);
    if (shape == 2) {
      MixedKernels mk;
      mk.aic_kernel_id = 1;
      mk.aiv0_kernel_id = 0;
      mk.aiv1_kernel_id = 0;
      rt_submit_task(mk, t);
    }
    if (shape == 3) rt_submit_aiv_task(3, t);
  }
  CoreTaskArgs t;
  t.add_input(X);
  t.add_inout(Y);
  rt_submit_aiv_task(2, t);
}
"""
)
PTO_KERNEL_SRC = r"""
#include "pto/kernel.h"
PTO_KERNEL(args) { (void)args; }
"""


@functools.cache
def spmd_callable(platform: str, runtime: str) -> pto.ChipCallable:
    kc = pto.KernelCompiler(platform)
    c = pto.ChipCallable(kc.compile_orchestration_source(runtime, SPMD_ORCH, "launch_model_spmd"))
    aiv, aic = pto.CoreType.AIV, pto.CoreType.AIC
    c.add_kernel(
        0,
        aiv,
        kc.compile_incore_source("#define AIV_LANE 1\n" + BLOCK_KERNEL, "spmd_block_aiv", aiv),
    )
    c.add_kernel(
        1,
        aic,
        kc.compile_incore_source("#define AIV_LANE 0\n" + BLOCK_KERNEL, "spmd_block_aic", aic),
    )
    c.add_kernel(2, aiv, kc.compile_incore_source(SUM_KERNEL, "spmd_sum", aiv))
    c.add_kernel(3, aiv, kc.compile_incore_source(PTO_KERNEL_SRC, "spmd_plain", aiv))
    return c


def run_spmd(workers, platform, runtime, shape, blocks, fail_block=-1, sync=0):
    """Runs SPMD_ORCH; returns (out as [block, lane], y, stats)."""
    worker = workers(platform, runtime)
    x = np.zeros(blocks * 3 * 16, dtype=np.float32)
    y = np.full(1, -1.0, dtype=np.float32)
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(x, "inout")
    args.add_tensor(y, "inout")
    for s in (shape, blocks, fail_block, sync):
        args.add_scalar_i64(s)
    stats = worker.run(spmd_callable(platform, runtime), args, CONFIG)
    return x.reshape(blocks, 3, 16)[:, :, 0], y, stats


def assert_every_block_ran_once(out, y, stats, lanes) -> None:
    """Block b wrote b * 1000 + blocks in each of its lanes; the consumer summed them all."""
    blocks = out.shape[0]
    expect = np.zeros((blocks, 3), dtype=np.float32)
    for b in range(blocks):
        expect[b, lanes] = b * 1000 + blocks
    np.testing.assert_array_equal(out, expect)
    assert y[0] == expect.sum()
    assert stats.tasks_run == 2


# (runtime, shape, lanes)
SHAPES = [
    (TMR, 0, [1]),
    (TMR, 1, [0]),
    (TMR, 2, [0, 1, 2]),
    (HBG, 0, [1]),
    (HBG, 1, [0]),
    (HBG, 2, [0, 1, 2]),
]


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize(
    "runtime, shape, lanes",
    SHAPES,
    ids=["tmr-aiv", "tmr-aic", "tmr-mix", "hbg-aiv", "hbg-aic", "hbg-mix"],
)
@pytest.mark.parametrize("blocks", [2, 7, 40])
def test_every_block_of_an_spmd_task_runs_once_with_its_index_and_the_consumer_waits_for_all(
    workers, platform, runtime, shape, lanes, blocks
):
    # 40 blocks: more than the run's cores of any type (block_dim 2), so cores run several.
    assert_every_block_ran_once(*run_spmd(workers, platform, runtime, shape, blocks), lanes)


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize(
    "runtime, shape",
    [(TMR, 0), (TMR, 2), (HBG, 0), (HBG, 2)],
    ids=["tmr-aiv", "tmr-mix", "hbg-aiv", "hbg-mix"],
)
def test_a_failing_block_fails_its_task_and_the_worker_goes_on(workers, platform, runtime, shape):
    with pytest.raises(pto.Error, match="status 77"):
        run_spmd(workers, platform, runtime, shape, 6, fail_block=3)
    out, _, _ = run_spmd(workers, platform, runtime, shape, 3)
    assert out[2, 1] == 2003


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("platform", PLATFORMS)
def test_spmd_of_a_pto_kernel_is_not_supported_and_the_worker_goes_on(workers, platform, runtime):
    with pytest.raises(pto.NotSupportedError, match="PTO_KERNEL kernel"):
        run_spmd(workers, platform, runtime, 3, 4)
    out, _, _ = run_spmd(workers, platform, runtime, 0, 2)
    assert out[1, 1] == 1002


# ----- sync-start SPMD launches (set_require_sync_start) -----

# (runtime, shape, lanes, places): block_dim 2 has 4 AIV cores, 2 AIC cores, 2 clusters.
SHAPE_IDS = {0: "aiv", 1: "aic", 2: "mix"}
GANGS = [
    (TMR, 0, [1], 4),
    (TMR, 1, [0], 2),
    (TMR, 2, [0, 1, 2], 2),
    (HBG, 0, [1], 4),
    (HBG, 1, [0], 2),
    (HBG, 2, [0, 1, 2], 2),
]


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize(
    "runtime, shape, lanes, places", GANGS, ids=[f"{r[:3]}-{SHAPE_IDS[sh]}" for r, sh, *_ in GANGS]
)
def test_a_sync_start_task_runs_every_block_once_up_to_every_place_of_its_shape(
    workers, platform, runtime, shape, lanes, places
):
    for blocks in sorted({1, 2, places}):
        run = run_spmd(workers, platform, runtime, shape, blocks, sync=1)
        assert_every_block_ran_once(*run, lanes)


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize(
    "runtime, shape, lanes, places", GANGS, ids=[f"{r[:3]}-{SHAPE_IDS[sh]}" for r, sh, *_ in GANGS]
)
def test_a_sync_start_task_wider_than_the_run_is_refused_at_submit_and_the_worker_goes_on(
    workers, platform, runtime, shape, lanes, places
):
    noun = {0: "AIV cores", 1: "AIC cores", 2: "clusters"}[shape]
    with pytest.raises(
        pto.InvalidArgumentError,
        match=f"sync-start launch of block_num {places + 1}: .* {places} {noun} \\(block_dim 2\\)",
    ):
        run_spmd(workers, platform, runtime, shape, places + 1, sync=1)
    out, _, _ = run_spmd(workers, platform, runtime, shape, places, sync=1)
    assert out[places - 1, lanes[0]] == (places - 1) * 1000 + places


# A long task holds one place of the gang's shape while the gang becomes ready; a sync-start
# gang as wide as the run cannot start any block before the long task ends. Tensors: flag
# (int32: the long task has started), end (int64: its end, CLOCK_MONOTONIC ns), starts (int64
# per block), go (int32: the trigger's output).
# Kernels (descriptor ABI): 0 long (flag = 1, spin scalar ms, end = now), 1 trigger (waits for
# flag, go = 1), 2 block (starts[idx] = now). The flag is an input of both, so neither orders the
# other; the gang reads `go`, so it becomes ready only once the long task runs.
TIMING = r"""
#include <time.h>
#include "tensor.h"
#include "intrinsic.h"
#include "pto/kernel.h"
static int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
template <typename T> static T *at(__gm__ int64_t *args, int i) {
  const ChipTensor *t = reinterpret_cast<const ChipTensor *>(args[i]);
  return reinterpret_cast<T *>(t->buffer.addr) + t->start_offset;
}
extern "C" PTO_EXPORT void kernel_entry(__gm__ int64_t *args) {
#if KIND == 0
  __atomic_store_n(at<int32_t>(args, 0), 1, __ATOMIC_RELEASE);
  const int64_t until = now_ns() + static_cast<int64_t>(args[2]) * 1000000;
  while (now_ns() < until) {
  }
  *at<int64_t>(args, 1) = now_ns();
#elif KIND == 1
  while (__atomic_load_n(at<int32_t>(args, 0), __ATOMIC_ACQUIRE) == 0) {
  }
  *at<int32_t>(args, 1) = 1;
#else
  at<int64_t>(args, 1)[get_block_idx(args)] = now_ns();
#endif
}
"""
# Scalars: gang shape (0 AIV, 1 AIC, 2 MIX), blocks, sync_start, spin ms. The long task runs
# on the gang's core type (AIV for a MIX gang), the trigger on the other.
TIMING_ORCH = (
    r"""
#include "pto_orchestration_api.h"
"""
    + SET_BLOCKS
    + r"""extern "C" __attribute__((visibility("default")))
void aicpu_orchestration_entry(const ChipTaskArgs &a) {
  const ChipTensor &flag = a.tensor(0).ref(), &end = a.tensor(1).ref();
  const ChipTensor &starts = a.tensor(2).ref(), &go = a.tensor(3).ref();
  const int64_t shape = (int64_t)a.scalar(0), blocks = (int64_t)a.scalar(1);
  const bool long_on_aic = shape == 1;
  {
    CoreTaskArgs t;
    t.add_input(flag);
    t.add_inout(end);
    t.add_scalar(a.scalar(3));
    if (long_on_aic) rt_submit_aic_task(3, t); else rt_submit_aiv_task(0, t);
  }
  {
    CoreTaskArgs t;
    t.add_input(flag);
    t.add_inout(go);
    if (long_on_aic) rt_submit_aiv_task(1, t); else rt_submit_aic_task(4, t);
  }
  CoreTaskArgs t;
  t.add_input(go);
  t.add_inout(starts);
  set_blocks(t.launch_spec, static_cast<int16_t>(blocks));
  t.launch_spec.set_require_sync_start(a.scalar(2) != 0);
  if (shape == 0) rt_submit_aiv_task(2, t);
  if (shape == 1) rt_submit_aic_task(5, t);
  if (shape == 2) {
    MixedKernels mk;
    mk.aic_kernel_id = 5;
    mk.aiv0_kernel_id = 2;
    mk.aiv1_kernel_id = 2;
    rt_submit_task(mk, t);
  }
}
"""
)


@functools.cache
def timing_callable(platform: str, runtime: str) -> pto.ChipCallable:
    kc = pto.KernelCompiler(platform)
    c = pto.ChipCallable(kc.compile_orchestration_source(runtime, TIMING_ORCH, "launch_model_gang"))
    aiv, aic = pto.CoreType.AIV, pto.CoreType.AIC
    for func_id in range(6):  # kinds 0, 1, 2 on AIV cores, then on AIC cores
        kind, core = func_id % 3, aiv if func_id < 3 else aic
        source = f"#define KIND {kind}\n" + TIMING
        name = f"gang_timing_{kind}_{'aic' if core == aic else 'aiv'}"
        c.add_kernel(func_id, core, kc.compile_incore_source(source, name, core))
    return c


@pytest.mark.parametrize(
    "runtime, shape, places",
    [(TMR, 0, 4), (TMR, 1, 2), (TMR, 2, 2), (HBG, 0, 4), (HBG, 1, 2), (HBG, 2, 2)],
    ids=["tmr-aiv", "tmr-aic", "tmr-mix", "hbg-aiv", "hbg-aic", "hbg-mix"],
)
def test_no_block_of_a_sync_start_task_starts_before_all_its_places_are_free(
    workers, runtime, shape, places
):
    def starts_and_end() -> tuple[np.ndarray, int]:
        flag = np.zeros(1, dtype=np.int32)
        end = np.zeros(1, dtype=np.int64)
        starts = np.zeros(places, dtype=np.int64)
        go = np.zeros(1, dtype=np.int32)
        args = pto.ChipStorageTaskArgs()
        for arr in (flag, end, starts, go):
            args.add_tensor(arr, "inout")
        for s in (shape, places, 1, 60):  # sync-start; the long task spins 60 ms
            args.add_scalar_i64(s)
        workers("a2a3sim", runtime).run(timing_callable("a2a3sim", runtime), args, CONFIG)
        assert go[0] == 1 and end[0] > 0 and (starts > 0).all()
        return starts, int(end[0])

    # (Without sync-start, whether a block starts on a free place while the long task runs is
    # the dispatch policy's choice: the sim's short-task cap may keep the place idle.)
    starts, end = starts_and_end()
    early = end - starts.min()
    assert early <= 0, f"a block started {early} ns before the long task ended"


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_the_trace_shows_tasks_finished_without_a_core_as_retired(workers, runtime):
    from pto_runtime.trace import Trace

    w = workers("a2a3sim", runtime)
    x = np.zeros(64, dtype=np.float32)
    y = np.full(1, -1.0, dtype=np.float32)
    g = np.zeros(4, dtype=np.int32)  # gate[2] = 0: the predicated task (GT 0) is retired
    args = pto.ChipStorageTaskArgs()
    for arr, direction in ((x, "inout"), (y, "inout"), (g, "in")):
        args.add_tensor(arr, direction)
    for s in (3, OPS["GT"], 0, 2, 0):  # 3 dependency-only tasks, the predicate, mode 0
        args.add_scalar_i64(s)
    cfg = pto.ChipCallConfig(block_dim=2, aicpu_thread_num=3, enable_profiling=True)
    w.run(launch_callable("a2a3sim", runtime), args, cfg)
    trace = Trace.from_dict(w.last_trace())
    by_status = {}
    for t in trace.tasks:
        by_status.setdefault(t.status, []).append(t)
    assert len(by_status["done"]) == 2 and len(by_status["retired"]) == 4
    assert sorted(t.shape for t in by_status["retired"]) == ["AIV", "DUMMY", "DUMMY", "DUMMY"]
    assert not any(t.ran for t in by_status["retired"])
