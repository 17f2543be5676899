#!/usr/bin/env python3
"""bench/profile_run.py — where a whole PTO run's CPU time goes, by component (Linux perf).

Runs one bench binary per workload under `perf record -e cpu-clock` (a software clock: it works
in VMs without hardware counters) and sorts the samples of every thread into components by the
function they hit: the orchestrator's submit path, the orchestration function itself, the
schedulers, the simulated cores and kernels, the fiber pool and doorbells, the OS kernel. The
shares are of all CPUs' samples over the whole process (set-up included, a few percent), so
they say which side of the hand-off a run spends its CPUs on; ns per task and the
orchestrator's busy ns per task come from the binary's own JSON line
(docs/design/tensormap_runtime.md, "Where a run's time goes").

    python3 bench/profile_run.py build/release                  # tensormap runtime, bd24
    python3 bench/profile_run.py build/release --runtime pto_hbg --block-dim 1

Needs `perf` (Debian: linux-perf) with perf_event_paranoid <= 2 or root. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

WORKLOADS = {
    "chain": ["--steps", "20000"],
    "independent": ["--width", "4", "--steps", "5000"],
    "fanout_fanin": ["--width", "8", "--steps", "2000"],
    "stencil_1d": ["--width", "4", "--steps", "5000"],
    "nearest": ["--width", "4", "--steps", "5000", "--radix", "5"],
}

# (component, pattern on "dso symbol"), first match wins.
COMPONENTS = [
    ("OS kernel", r"^\[kernel|\[k\]"),
    ("orchestration function", r"^pto_(tmr|hbg)-"),
    (
        "orchestrator",
        r"DeviceOrchestrator|TensorMap|HeapRing|make_region|regions_overlap|DepBatch|"
        r"hbg::.*Graph|build_graph",
    ),
    (
        "schedulers",
        r"SchedulerLoop|CorePool|TmrPolicy|HbgPolicy|ReadyQueue|MpmcQueue|PeerWaker|"
        r"Scheduler::",
    ),
    (
        "cores and kernels",
        r"aicore_loop|kernel_entry|platform_kernel|cell_task|pto_kernels|bench_kernels",
    ),
    (
        "fiber pool and doorbells",
        r"FiberPool|fiber|Fiber|fcontext|hook_|doorbell|find_work|unpark|park|start_worker|this_worker|"
        r"libboost_context",
    ),
    ("libc", r"^libc"),
]


def component(dso: str, sym: str) -> str:
    key = f"{dso} {sym}"
    for name, pattern in COMPONENTS:
        if re.search(pattern, key):
            return name
    return "other"


def profile(binary: Path, args: list[str], freq: int) -> tuple[dict, dict[str, float]]:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "perf.data"
        record = ["perf", "record", "-q", "-e", "cpu-clock", "-F", str(freq), "-o", str(data)]
        run = subprocess.run(
            [*record, str(binary), *args],
            capture_output=True,
            text=True,
            check=False,
        )
        if run.returncode != 0:
            sys.exit(f"{binary.name} failed:\n{run.stderr}")
        line = [x for x in run.stdout.splitlines() if x.startswith("{")][-1]
        report = subprocess.run(
            ["perf", "report", "-i", str(data), "--no-children", "--sort", "dso,sym", "--stdio"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    shares: dict[str, float] = {}
    for row in report.splitlines():
        m = re.match(r"\s+([\d.]+)%\s+(\S+)\s+(\[.\])\s+(.*)", row)
        if m:
            dso = m.group(2) if m.group(3) != "[k]" else "[kernel]"
            name = component(dso, m.group(4))
            shares[name] = shares.get(name, 0.0) + float(m.group(1))
    return json.loads(line), shares


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build_dir", type=Path)
    ap.add_argument("--runtime", default="pto_tmr", help="pto_tmr (default) or pto_hbg")
    ap.add_argument("--block-dim", default="24")
    ap.add_argument("--reps", default="10")
    ap.add_argument("--freq", type=int, default=20000, help="samples per second per CPU")
    ap.add_argument("--only", default=",".join(WORKLOADS), help="workloads, comma-separated")
    a = ap.parse_args()
    if shutil.which("perf") is None:
        sys.exit("perf is not installed (Debian: apt-get install linux-perf)")
    names = [c for c, _ in COMPONENTS] + ["other"]
    print("| workload | ns/task | orchestrator busy ns/task | " + " | ".join(names) + " |")
    print("|---" * (3 + len(names)) + "|")
    for wl in a.only.split(","):
        binary = a.build_dir / "bench" / f"bench_{wl}_{a.runtime}"
        args = [*WORKLOADS[wl], "--reps", a.reps, "--block-dim", a.block_dim]
        info, shares = profile(binary, args, a.freq)
        busy = info.get("orch_busy_ns_per_task")
        cells = [f"{shares.get(n, 0.0):.0f} %" for n in names]
        print(f"| {wl} | {info['ns_per_task']:.0f} | {busy:.0f} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
