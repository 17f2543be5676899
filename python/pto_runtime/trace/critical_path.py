"""python/pto_runtime/trace/critical_path.py — the longest dependency chain of a run, and its share.

The chain is weighed by the tasks' own durations, not by wall time between them: it answers
"if scheduling were free and cores unlimited, how long would this graph take", so its share
of the makespan says how much of the run the graph itself forces. The rest is scheduling
latency, waiting for cores, or orchestration.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .display import format_ns
from .records import Edge, Task

__all__ = ["CriticalPath", "critical_path", "makespan"]


@dataclass(frozen=True)
class CriticalPath:
    """The longest chain: ``tasks`` in dependency order, ``length`` (ns, the sum of their
    durations), the run's ``makespan`` (ns) and ``share`` = length / makespan (0 if empty).

    ``from_edges`` is False when the trace has no edges among tasks that ran, in which case
    the "chain" is the single longest task.
    """

    tasks: tuple[int, ...]
    length: float
    makespan: float
    from_edges: bool

    @property
    def share(self) -> float:
        return self.length / self.makespan if self.makespan > 0 else 0.0

    def chain_text(self, max_shown: int = 16) -> str:
        """``"0 -> 1 -> 3"``, eliding the middle of chains longer than ``max_shown``."""
        if not self.tasks:
            return "(no task ran)"
        ids = [str(t) for t in self.tasks]
        if len(ids) > max_shown:
            head = max_shown * 2 // 3
            ids = [*ids[:head], f"... ({len(ids) - max_shown} more)", *ids[head - max_shown :]]
        return " -> ".join(ids)

    def __str__(self) -> str:
        chain = self.chain_text()
        note = "" if self.from_edges else " (no edges recorded: longest single task)"
        share = f"{100 * self.share:.1f}% of the {format_ns(self.makespan)} makespan"
        return f"{format_ns(self.length)} = {share}, {len(self.tasks)} task(s): {chain}{note}"


def makespan(tasks: Sequence[Task]) -> float:
    """Max end minus min start over the tasks that ran; 0 if none did."""
    starts = [t.start for t in tasks if t.start is not None and t.end is not None]
    ends = [t.end for t in tasks if t.start is not None and t.end is not None]
    if not starts:
        return 0
    return max(ends) - min(starts)


def critical_path(tasks: Sequence[Task], edges: Sequence[Edge]) -> CriticalPath:
    """The chain of tasks that ran, linked by edges, with the largest sum of durations.

    Ties are broken toward smaller task ids: among equally long chains ending in different
    tasks the end with the smallest id wins, and each step back takes the predecessor with the
    smallest id among the equally long ones. Tasks that did not run, and edges touching them,
    are left out (only skipped tasks follow a skipped task, so nothing that ran is cut off).
    """
    ran = {t.id: t for t in tasks if t.ran}
    preds: dict[int, list[int]] = {t: [] for t in ran}
    succs: dict[int, list[int]] = {t: [] for t in ran}
    linked = False
    for e in edges:
        if e.src in ran and e.dst in ran:
            preds[e.dst].append(e.src)
            succs[e.src].append(e.dst)
            linked = True

    # Longest path in a DAG: visit in topological order (the schema rejected cycles), so every
    # predecessor's best chain is final before its successors read it.
    indegree = {t: len(p) for t, p in preds.items()}
    order = [t for t, d in indegree.items() if d == 0]
    best: dict[int, float] = {}
    back: dict[int, int | None] = {}
    i = 0
    while i < len(order):
        t = order[i]
        i += 1
        choice = None
        for p in preds[t]:
            if choice is None or (best[p], -p) > (best[choice], -choice):
                choice = p
        back[t] = choice
        best[t] = ran[t].duration + (best[choice] if choice is not None else 0)
        for s in succs[t]:
            indegree[s] -= 1
            if indegree[s] == 0:
                order.append(s)

    span = makespan(list(ran.values()))
    if not best:
        return CriticalPath((), 0, span, linked)
    end = min(best, key=lambda t: (-best[t], t))
    chain = []
    node: int | None = end
    while node is not None:
        chain.append(node)
        node = back[node]
    chain.reverse()
    return CriticalPath(tuple(chain), best[end], span, linked)
