"""bench/tile/run.py — the PTO-ISA tile examples as benchmarks: overhead floor and compile time.

For each workload (the bgemm example at the reference benchmark's Case0 shape, paged attention
at a mid-size decode step) it reports, over --reps warm runs (median [min-max]):

  device   the run's device time (RunStats.device_us: launch to the last task's completion)
  wall     the time worker.run took (inputs copied in, run, outputs copied back)
  kernels  the tasks' kernel time summed over every core (RunStats.cores[*].busy_us), measured
           in a second process with the simulator held to one OS thread per CPU, so that each
           kernel's time is its CPU time (see kernel_seconds_uncontended)
  floor    kernels / the CPUs the simulator runs on: perfect use of the cores
  ratio    device / floor and wall / floor: runtime and sim overhead over that floor

and the kernels' compile time: cold (an empty kernel cache, in parallel on every CPU) and
cached (a second compile in the same process). Kernels are built as the examples build them
(tile kernels for this CPU), or with --portable for any x86-64. Every run's output is checked
against NumPy. With --timing it measures the sim's timing mode instead
(docs/design/sim_execution.md): each rep runs the workload in the default parallel mode and then
timed, its kernels priced by their PTO-ISA cost-model twins, on one worker, and reports per pair

  parallel  the parallel run's wall time (worker.run)
  timed     the timed run's wall time, and timed / parallel (its cost)
  predicted the timed run's predicted makespan, against the parallel run's device time

Usage:

  PTO_ISA_ROOT=../shared/third_party/pto-isa .venv/bin/python bench/tile/run.py [--reps 5]
      [--only bgemm|paged_attention] [--platform a2a3sim] [--runtime tensormap_and_ringbuffer]
      [--timing]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import numpy as np
import pto_runtime as pto
from pto_runtime.scene.execute import build_chip_args

ROOT = Path(__file__).resolve().parents[2]


def load_scene_test(name: str) -> ModuleType:
    """examples/<name>/test_<name>.py, the example's scene test: its classes hold the kernels,
    the orchestrations, the data and the golden. Its folder goes on sys.path first, as when it
    runs as a script."""
    folder = ROOT / "examples" / name
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    spec = importlib.util.spec_from_file_location(f"test_{name}", folder / f"test_{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def sim_cpus() -> int:
    """The OS threads the simulator's fiber pool runs on (docs/design/sim_execution.md)."""
    forced = os.environ.get("PTO_SIM_WORKERS")
    return int(forced) if forced else len(os.sched_getaffinity(0))


class Workload:
    """One example at one shape: how to build it, its arguments, and its check."""

    def __init__(
        self,
        name: str,
        build: Callable[[bool, bool], pto.ChipCallable],  # (portable, cost models)
        make_args: Callable[[], tuple[pto.ChipStorageTaskArgs, Callable[[], bool]]],
    ) -> None:
        self.name, self.build, self.make_args = name, build, make_args


def scene_workload(
    name: str, cls: Any, params: dict[str, Any], platform: str, runtime: str
) -> Workload:
    """A workload from an example's scene-test class: its kernels and orchestration compiled as
    the scene layer compiles them (for this CPU unless portable; with their cost-model twins
    when asked), its generate_args and compute_golden for the data, compare_outputs to check."""
    folder = Path(sys.modules[cls.__module__].__file__ or ".").resolve().parent
    orch, incores = cls.CALLABLE["orchestration"], cls.CALLABLE["incores"]
    kernels = [
        (k["func_id"], pto.CoreType[k["core_type"].upper()], folder / k["source"]) for k in incores
    ]

    def build(portable: bool, twins: bool) -> pto.ChipCallable:
        kc = pto.KernelCompiler(
            platform,
            pto_isa_root=os.environ.get("PTO_ISA_ROOT"),
            native=False if portable else None,
        )
        callable_ = pto.ChipCallable(kc.compile_orchestration(runtime, folder / orch["source"]))
        paths = kc.compile_incore_many([(src, core) for _, core, src in kernels], progress=True)
        for (func_id, core, _), path in zip(kernels, paths):
            callable_.add_kernel(func_id, core, path)
        if twins:
            pto.add_cost_models(kc, callable_, kernels, True)
        return callable_

    def make_args() -> tuple[pto.ChipStorageTaskArgs, Callable[[], bool]]:
        test = cls()
        test_args = test.generate_args(params)
        golden = test_args.clone()
        test.compute_golden(golden, params)
        args, outputs = build_chip_args(test_args, orch["signature"])
        initial = {n: np.array(getattr(test_args, n), copy=True) for n in test_args.tensor_names()}

        def check() -> bool:
            try:
                test.compare_outputs(test_args, golden, outputs, params)
                ok = True
            except AssertionError:
                ok = False
            for n, value in initial.items():  # the next run starts from the same inputs
                np.copyto(getattr(test_args, n), value)
            return ok

        return args, check

    return Workload(name, build, make_args)


def bgemm_case0(platform: str, runtime: str) -> Workload:
    mod = load_scene_test("bgemm")
    cls = mod.TestBgemmTmr if runtime == "tensormap_and_ringbuffer" else mod.TestBgemmHbg
    params = next(c["params"] for c in cls.CASES if c["name"] == "case0")
    return scene_workload(
        "bgemm Case0 (500 GEMM + 500 ADD, 4 x 128^3 per GEMM)", cls, params, platform, runtime
    )


def paged_attention_mid(platform: str, runtime: str) -> Workload:
    mod = load_scene_test("paged_attention")
    cls = (
        mod.TestPagedAttentionTmr
        if runtime == "tensormap_and_ringbuffer"
        else mod.TestPagedAttentionHbg
    )
    if PA_CASE == "mid":
        params = mod.case_params("mid")
    else:  # the reference benchmark's Case1 shape: 65,536 tasks, about 2 GB of KV cache
        params = {**mod.case_params("mid"), "context_lens": [8192] * 256, "max_model_len": 8192}
    lens = params["context_lens"]
    return scene_workload(
        f"paged attention bf16 ({PA_CASE}: {len(lens)} requests of context {min(lens)}-"
        f"{max(lens)}, {params['heads']} heads, head_dim {params['head_dim']}, blocks of "
        f"{params['block_size']})",
        cls,
        params,
        platform,
        runtime,
    )


# Paged attention shapes: the example's "mid" case, or the reference benchmark's Case1.
PA_CASES = ("mid", "case1")
PA_CASE = "mid"

WORKLOADS = {"bgemm": bgemm_case0, "paged_attention": paged_attention_mid}


def summary(values: list[float]) -> str:
    return f"{statistics.median(values):.3g} [{min(values):.3g}-{max(values):.3g}]"


def measure_compile(w: Workload, portable: bool) -> tuple[float, float]:
    """Cold (an empty cache directory) and cached compile seconds of the whole callable."""
    old = os.environ.get("PTO_CACHE_DIR")
    with tempfile.TemporaryDirectory(prefix="pto-bench-cache-") as cache:
        os.environ["PTO_CACHE_DIR"] = cache
        try:
            t0 = time.perf_counter()
            w.build(portable, False)
            cold = time.perf_counter() - t0
            t0 = time.perf_counter()
            w.build(portable, False)
            cached = time.perf_counter() - t0
        finally:
            if old is None:
                os.environ.pop("PTO_CACHE_DIR", None)
            else:
                os.environ["PTO_CACHE_DIR"] = old
    return cold, cached


def kernel_seconds_uncontended(key: str, opts: argparse.Namespace) -> list[float]:
    """The tasks' summed kernel time, measured with the simulator held to one OS thread per CPU.

    By default the simulator's pool adds a thread when every thread has been held by one kernel
    for a while (docs/design/sim_execution.md), so several kernels can share a CPU and each one's
    wall time overstates its CPU time. Held to the CPU count, a kernel's wall time is its CPU
    time."""
    cmd = [
        sys.executable,
        __file__,
        "--kernels-only",
        key,
        "--reps",
        str(opts.reps),
        "--platform",
        opts.platform,
        "--runtime",
        opts.runtime,
        "--pa-case",
        opts.pa_case,
    ] + (["--portable"] if opts.portable else [])
    env = dict(os.environ, PTO_SIM_MAX_WORKERS=str(sim_cpus()))
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return [float(x) for x in out.split()]


def full_geometry(worker: pto.ChipWorker, **fields: Any) -> pto.ChipCallConfig:
    """A run on every cluster and AICPU thread of the worker's platform."""
    info = worker.platform_info
    return pto.ChipCallConfig(
        block_dim=info.num_clusters, aicpu_thread_num=info.max_aicpu_threads, **fields
    )


def measure_runs(w: Workload, opts: argparse.Namespace) -> dict[str, Any]:
    callable_ = w.build(opts.portable, False)
    args, check = w.make_args()
    cpus = sim_cpus()
    rows: dict[str, list[float]] = {"device_s": [], "wall_s": [], "kernels_s": [], "floor_s": []}
    with pto.Worker(level=2, platform=opts.platform, runtime=opts.runtime) as worker:
        config = full_geometry(worker)
        for rep in range(
            opts.reps + 1
        ):  # the first run is a warm-up (kernels loaded, pool started)
            t0 = time.perf_counter()
            stats = worker.run(callable_, args, config)
            wall = time.perf_counter() - t0
            if not check():
                raise SystemExit(f"{w.name}: run {rep} does not match NumPy")
            if rep == 0:
                continue
            rows["kernels_s"].append(sum(core.busy_us for core in stats.cores) / 1e6)
            rows["device_s"].append(stats.device_us / 1e6)
            rows["wall_s"].append(wall)
    return {"cpus": cpus, **rows}


def measure_timing(w: Workload, opts: argparse.Namespace) -> dict[str, list[float]]:
    """Pairs of runs on one worker: parallel, then timed (kernels priced by their twins)."""
    callable_ = w.build(opts.portable, True)
    args, check = w.make_args()
    rows: dict[str, list[float]] = {
        k: [] for k in ("parallel_s", "timed_s", "device_us", "predicted_us")
    }
    with pto.Worker(level=2, platform=opts.platform, runtime=opts.runtime) as worker:
        parallel = full_geometry(worker)
        timed = full_geometry(worker, sim_seed=0, sim_timing=True)
        for rep in range(opts.reps + 1):  # the first pair warms up (kernels and twins loaded)
            for mode, config in (("parallel", parallel), ("timed", timed)):
                t0 = time.perf_counter()
                stats = worker.run(callable_, args, config)
                wall = time.perf_counter() - t0
                if not check():
                    raise SystemExit(f"{w.name}: {mode} run {rep} does not match NumPy")
                if mode == "timed" and stats.priced_host_time:
                    raise SystemExit(f"{w.name}: kernels priced by host time: {stats.price_note}")
                if rep == 0:
                    continue
                rows[f"{mode}_s"].append(wall)
                if mode == "parallel":
                    rows["device_us"].append(stats.device_us)
                else:
                    rows["predicted_us"].append(stats.predicted_makespan_us)
    rows["cost"] = [t / p for t, p in zip(rows["timed_s"], rows["parallel_s"])]
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--reps", type=int, default=5, help="warm runs per workload (default 5)")
    p.add_argument("--only", choices=list(WORKLOADS), action="append", help="run only these")
    p.add_argument("--platform", default="a2a3sim", choices=["a2a3sim", "a5sim"])
    p.add_argument(
        "--runtime",
        default="tensormap_and_ringbuffer",
        choices=["tensormap_and_ringbuffer", "host_build_graph"],
    )
    p.add_argument("--portable", action="store_true", help="tile kernels for any x86-64 (slower)")
    p.add_argument("--no-compile", action="store_true", help="skip the cold/cached compile timing")
    p.add_argument("--pa-case", choices=list(PA_CASES), default="mid", help="paged attention shape")
    p.add_argument(
        "--timing",
        action="store_true",
        help="measure timing mode (kernels priced by their cost model) against the parallel run",
    )
    p.add_argument("--kernels-only", choices=list(WORKLOADS), help=argparse.SUPPRESS)
    opts = p.parse_args(argv)
    global PA_CASE
    PA_CASE = opts.pa_case
    if opts.kernels_only:  # the child of kernel_seconds_uncontended: print the sums, nothing else
        r = measure_runs(WORKLOADS[opts.kernels_only](opts.platform, opts.runtime), opts)
        print(" ".join(f"{k:.6f}" for k in r["kernels_s"]))
        return 0
    if not os.environ.get("PTO_ISA_ROOT"):
        p.error("set PTO_ISA_ROOT to a PTO-ISA checkout (e.g. ../shared/third_party/pto-isa)")
    print(
        f"platform {opts.platform}, runtime {opts.runtime}, full geometry, simulator on "
        f"{sim_cpus()} CPUs, kernels {'portable' if opts.portable else 'native'}; "
        f"{opts.reps} warm runs each: median [min-max]"
    )
    for key in opts.only or list(WORKLOADS):
        w = WORKLOADS[key](opts.platform, opts.runtime)
        print(f"\n== {w.name}")
        if opts.timing:
            t = measure_timing(w, opts)
            print(
                "| parallel wall s | timed wall s | timed / parallel | parallel device us "
                "| predicted makespan us |"
            )
            print("|---|---|---|---|---|")
            keys = ("parallel_s", "timed_s", "cost", "device_us", "predicted_us")
            print("| " + " | ".join(summary(t[k]) for k in keys) + " |")
            continue
        if not opts.no_compile:
            cold, cached = measure_compile(w, opts.portable)
            print(
                f"compile (orchestration + kernels): cold {cold:.2f} s, "
                f"cached {cached * 1e3:.2f} ms"
            )
        r = measure_runs(w, opts)
        kernels = statistics.median(kernel_seconds_uncontended(key, opts))
        floor = kernels / r["cpus"]
        r["device_ratio"] = [d / floor for d in r["device_s"]]
        r["wall_ratio"] = [d / floor for d in r["wall_s"]]
        print(
            f"kernels: {kernels:.3g} s summed (median of {opts.reps} runs, one simulator thread "
            f"per CPU), floor {floor:.3g} s on {r['cpus']} CPUs; the default run's cores were busy "
            f"{summary(r['kernels_s'])} s (threads added by the simulator share the CPUs)"
        )
        print("| device s | wall s | device / floor | wall / floor |")
        print("|---|---|---|---|")
        print(
            "| "
            + " | ".join(
                summary(r[k]) for k in ("device_s", "wall_s", "device_ratio", "wall_ratio")
            )
            + " |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
