"""bench/l4/compare.py — our L4 runtime against StarPU-MPI: same run, same ranks, same tasks.

Usage:
    python3 bench/l4/compare.py [--build DIR] [--ranks 4 16] [--gemm-ranks 1 2 4] [--rounds 3]
                                [--tasks 200] [--reps 5] [--gemm 8 128 3] [--pto-gemm CMD]
                                [--starpu-env VAR=VALUE ...]

For each rank count R of --ranks, runs `mpirun -n R --oversubscribe --bind-to none` of our
`l4_overhead_cpp` and of `l4_starpu` (bench/l4/starpu_l4.cpp) alternately, --rounds times (the
first of the two alternates from round to round), and for each R of --gemm-ranks the `gemm T ts
reps` workload of `l4_starpu` and, with --pto-gemm, of our GEMM program (a command taking `gemm
T ts reps` and printing the same JSON line). Every run gets `-x STARPU_NCPU=2` (2 StarPU CPU
workers per rank, as our Worker's 2 SUB workers; change it with --starpu-env STARPU_NCPU=n) and,
as root, `--allow-run-as-root`. Binaries: DIR/bench/l4/{l4_overhead_cpp,l4_starpu}, DIR
defaulting to build/release, else build/dev.

Prints one markdown table: a row per runtime and R; per workload the median over the rounds of
each run's median (µs per task; gemm: ms per multiplication) and [min-max] over the rounds.
Progress and the commands go to stderr. The machine is shared: look at the spread.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
OVERHEAD = ("chain_cross", "chain_local", "ring")
RUNTIMES = ("pto", "starpu")


def find_build(arg: str | None) -> Path:
    if arg:
        return Path(arg).resolve()
    for name in ("release", "dev"):
        d = REPO / "build" / name
        if (d / "bench" / "l4" / "l4_overhead_cpp").exists():
            return d
    sys.exit("compare.py: no build/release or build/dev with bench/l4/l4_overhead_cpp; use --build")


def run(cmd: list[str], timeout: float) -> dict[str, dict[str, Any]]:
    """Runs one mpirun; returns rank 0's JSON objects by "bench" (empty dict on failure)."""
    print("$ " + shlex.join(cmd), file=sys.stderr, flush=True)
    # A session of its own, so a timeout can end mpirun and its ranks (and nothing else).
    p = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGTERM)
        try:
            out, err = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, err = p.communicate()
        print(f"  timed out after {timeout:.0f} s", file=sys.stderr)
        return {}
    found: dict[str, dict[str, Any]] = {}
    for line in out.splitlines():
        if line.startswith("{"):
            obj = json.loads(line)
            found[obj["bench"]] = obj
    if p.returncode != 0:
        print(f"  exit status {p.returncode}; stderr:\n{err.strip()}", file=sys.stderr)
        return {}
    return found


def cell(xs: list[float], fmt: str) -> str:
    if not xs:
        return "-"
    return f"{statistics.median(xs):{fmt}} [{min(xs):{fmt}}-{max(xs):{fmt}}]"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", help="build directory (default build/release, else build/dev)")
    ap.add_argument("--ranks", type=int, nargs="*", default=[4, 16], help="R for chain/ring")
    ap.add_argument("--gemm-ranks", type=int, nargs="*", default=[1, 2, 4], help="R for gemm")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tasks", type=int, default=200)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--gemm", type=int, nargs=3, default=[8, 128, 3], metavar=("T", "TS", "REPS"))
    ap.add_argument("--pto-gemm", help="our GEMM program: CMD gemm T ts reps (default: none)")
    ap.add_argument(
        "--starpu-env",
        action="append",
        default=[],
        metavar="VAR=VALUE",
        help="more environment for every run (mpirun -x), e.g. STARPU_SCHED=eager",
    )
    ap.add_argument("--mpirun", default=shutil.which("mpirun") or "mpirun")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per mpirun")
    a = ap.parse_args()

    build = find_build(a.build)
    l4 = build / "bench" / "l4"
    ours, peer = l4 / "l4_overhead_cpp", l4 / "l4_starpu"
    for exe in (ours, peer):
        if not exe.exists():
            sys.exit(f"compare.py: {exe} is missing (build the targets l4_overhead_cpp l4_starpu)")
    env = {"STARPU_NCPU": "2"}
    for kv in a.starpu_env:
        var, sep, value = kv.partition("=")
        if not sep or not var:
            sys.exit(f"compare.py: --starpu-env wants VAR=VALUE, got {kv!r}")
        env[var] = value
    # --bind-to none: with 1 or 2 ranks Open MPI binds each rank to one core by default, which
    # would put our SUB workers on one CPU while StarPU rebinds its workers itself.
    mpirun = [a.mpirun, "--oversubscribe", "--bind-to", "none"]
    if os.geteuid() == 0:
        mpirun.append("--allow-run-as-root")
    for var, value in env.items():
        mpirun += ["-x", f"{var}={value}"]
    T, ts, gemm_reps = a.gemm
    gemm_args = ["gemm", str(T), str(ts), str(gemm_reps)]

    # results[(runtime, R)][workload] = the median of each round's run
    results: dict[tuple[str, int], dict[str, list[float]]] = {}
    failed: list[str] = []

    def record(runtime: str, ranks: int, cmd: list[str], want: tuple[str, ...], key: str) -> None:
        found = run(mpirun + ["-n", str(ranks)] + cmd, a.timeout)
        row = results.setdefault((runtime, ranks), {})
        for bench in want:
            if bench in found:
                row.setdefault(bench, []).append(float(found[bench][key]))
            else:
                failed.append(f"{runtime} R={ranks} {bench}")

    overhead_cmds = {
        "pto": [str(ours), str(a.tasks), str(a.reps)],
        "starpu": [str(peer), str(a.tasks), str(a.reps)],
    }
    gemm_cmds = {"starpu": [str(peer), *gemm_args]}
    if a.pto_gemm:
        gemm_cmds["pto"] = shlex.split(a.pto_gemm) + gemm_args
    load = os.getloadavg()[0]
    for rnd in range(a.rounds):
        order = RUNTIMES if rnd % 2 == 0 else RUNTIMES[::-1]
        print(f"== round {rnd + 1}/{a.rounds}", file=sys.stderr, flush=True)
        for ranks in a.ranks:
            for runtime in order:
                record(runtime, ranks, overhead_cmds[runtime], OVERHEAD, "us_per_task_median")
        for ranks in a.gemm_ranks:
            for runtime in order:
                if runtime in gemm_cmds:
                    record(runtime, ranks, gemm_cmds[runtime], ("gemm",), "wall_ms_median")
    load = max(load, os.getloadavg()[0])

    names = {"pto": "pto::l4", "starpu": "StarPU-MPI"}
    print(
        f"{a.tasks} tasks, {a.reps} reps per run, {a.rounds} rounds; gemm T={T} ts={ts} "
        f"(n={T * ts}), {gemm_reps} reps; {' '.join(f'{k}={v}' for k, v in env.items())}; "
        f"1-min load average up to {load:.1f} (sampled before and after)\n"
    )
    print(
        "| runtime | R | chain_cross µs/task | chain_local µs/task | ring µs/task "
        f"| gemm ms (T={T}, ts={ts}) |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for ranks in sorted(set(a.ranks) | set(a.gemm_ranks)):
        for runtime in RUNTIMES:
            row = results.get((runtime, ranks))
            if row is None:
                continue
            cells = [cell(row.get(b, []), ".1f") for b in OVERHEAD]
            cells.append(cell(row.get("gemm", []), ".1f"))
            print(f"| {names[runtime]} | {ranks} | " + " | ".join(cells) + " |")
    if failed:
        print("\nfailed runs: " + ", ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
