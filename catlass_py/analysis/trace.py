"""Timeline export of a costed launch: a Chrome / Perfetto trace (JSON) and a compact PNG picture.

There is no CATLASS counterpart; ``msprof op simulator`` draws the same kind of pipeline timeline from a
device-less instruction simulation, but needs the CANN toolkit. The trace follows the Chrome trace event
format (``traceEvents`` with ``X`` complete events, ``M`` metadata and ``s``/``f`` flow events), which
https://ui.perfetto.dev and chrome://tracing open directly:

=================  ========================================================================================
trace element      content
=================  ========================================================================================
process (pid)      one per AI core: "AI core N"
thread (tid)       one per core and pipe: "AIC0 MTE2", "AIV0.1 V", ... plus "AIC0 flags" holding the
                   cross-core sets and waits (zero-length slices when they take effect) and the stalls
                   (instruction issue waiting for a flag)
X events           one per instruction (cat "instruction"): name = op, ts/dur in microseconds of predicted
                   device time (whole nanoseconds), args = event seq and bytes
flow s -> f        one arrow per cross-core set consumed by a wait, from the set slice to the wait slice
                   (same pid, tid, ts and cat "cross-core" as the slices they bind to)
instant events     the kernel's ``ctx.mark`` annotations (block, epilogue_block) on the flags track
=================  ========================================================================================
"""

from __future__ import annotations

import json
import os
from typing import Any

from catlass_py import JSON_SCHEMA_VERSION
from catlass_py.analysis.cost import AIC_PIPES, AIV_PIPES, CostModel
from catlass_py.errors import ArgumentError

XCAT = "cross-core"
_PIPE_SLOT = {"flags": 0, "S": 1, "MTE2": 2, "MTE1": 3, "M": 4, "FIX": 5, "V": 6, "MTE3": 7}


def _tid(core, pipe: str) -> int:
    slot = 0 if core.type.value == "AIC" else 1 + core.sub
    return slot * 16 + _PIPE_SLOT.get(pipe, 8 + (sum(map(ord, pipe)) % 8))


def chrome_trace(cost: CostModel, *, markers: bool = True) -> dict[str, Any]:
    """The Chrome trace (a JSON-able dict) of a launch timed by ``cost`` (a ``CostModel(record=True)``)."""
    if cost.report is None or not cost.record:
        raise ArgumentError("cost: expected a CostModel(record=True) that observed a finished launch")
    us_per_cycle = 1.0 / (cost.params.clock_ghz * 1e3)
    cores = cost.cores
    events: list[dict] = []
    named: set[tuple[int, int]] = set()

    def track(core, pipe: str) -> tuple[int, int]:
        pid, tid = core.ai_core, _tid(core, pipe)
        if (pid, tid) not in named:
            named.add((pid, tid))
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": f"{core.short} {pipe}"}})
            events.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid, "args": {"sort_index": tid}})
        return pid, tid

    for ai_core in sorted({c.ai_core for c in cores}):
        events.append({"ph": "M", "name": "process_name", "pid": ai_core, "args": {"name": f"AI core {ai_core}"}})
        events.append({"ph": "M", "name": "process_sort_index", "pid": ai_core, "args": {"sort_index": ai_core}})
    for core in cores:  # every pipe gets its track, even if idle, so that the layout is the same for every core
        for pipe in (AIC_PIPES if core.type.value == "AIC" else AIV_PIPES):
            track(core, pipe)
        track(core, "flags")

    ns_per_cycle = us_per_cycle * 1e3

    def ns(x: float) -> int:  # whole nanoseconds: back-to-back slices stay back to back after rounding
        return round(x * ns_per_cycle)

    def r(x: float) -> float:
        return ns(x) / 1e3

    def span(start: float, end: float) -> tuple[float, float]:
        a = ns(start)
        return a / 1e3, (ns(end) - a) / 1e3

    for core, pipe, op, start, dur, seq, nbytes in cost.intervals:
        pid, tid = track(core, pipe)
        ts, d = span(start, start + dur)
        events.append({"ph": "X", "cat": "instruction", "name": op, "pid": pid, "tid": tid, "ts": ts, "dur": d,
                       "args": {"seq": seq, "bytes": nbytes}})
    set_ts: dict[int, tuple[int, int, float]] = {}
    for seq, (core, pipe, flag, fire) in cost.flag_sets.items():
        pid, tid = track(core, "flags")
        ts = r(fire)
        set_ts[seq] = (pid, tid, ts)
        events.append({"ph": "X", "cat": XCAT, "name": f"set flag {flag}", "pid": pid, "tid": tid, "ts": ts, "dur": 0,
                       "args": {"seq": seq, "pipe": pipe}})
    flow = 0
    for core, flag, issued, ready, sources in cost.flag_waits:
        pid, tid = track(core, "flags")
        ts0, d = span(issued, ready)
        ts1 = r(ready)
        if d > 0:  # the core's instruction issue stood still waiting for the flag
            events.append({"ph": "X", "cat": XCAT, "name": f"stall on flag {flag}", "pid": pid, "tid": tid,
                           "ts": ts0, "dur": d})
        events.append({"ph": "X", "cat": XCAT, "name": f"wait flag {flag}", "pid": pid, "tid": tid, "ts": ts1, "dur": 0,
                       "args": {"sources": list(sources)}})
        for s in sources:
            src = set_ts.get(s)
            if src is None:
                continue
            flow += 1
            # Flow ends carry the pid, tid, ts and cat of the slices they bind to (the set and the wait).
            events.append({"ph": "s", "id": flow, "name": f"flag {flag}", "cat": XCAT, "pid": src[0],
                           "tid": src[1], "ts": src[2]})
            events.append({"ph": "f", "bp": "e", "id": flow, "name": f"flag {flag}", "cat": XCAT, "pid": pid,
                           "tid": tid, "ts": ts1})
    if markers:
        for core, t, kind, data in cost.markers:
            pid, tid = track(core, "flags")
            events.append({"ph": "i", "s": "t", "name": kind, "pid": pid, "tid": tid, "ts": r(t),
                           "args": {k: v for k, v in data.items() if isinstance(v, (int, float, str, bool))}})
    rep = cost.report
    return {
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {"generator": "catlass_py", "schema_version": JSON_SCHEMA_VERSION, "arch": rep.arch, "clock_ghz": rep.clock_ghz,
                      "block_dim": rep.block_dim, **{k: v for k, v in rep.summary().items() if k != "pipe_busy"}},
    }


def write_chrome_trace(cost: CostModel, path: "str | os.PathLike[str]", **kw) -> int:
    """Write :func:`chrome_trace` to ``path`` (compact JSON); return the number of trace events."""
    trace = chrome_trace(cost, **kw)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(trace, fh, separators=(",", ":"))
    return len(trace["traceEvents"])


_COLOURS = {"MTE2": "#4e79a7", "MTE1": "#76b7b2", "M": "#e15759", "FIX": "#f28e2b", "V": "#59a14f",
            "MTE3": "#edc948", "S": "#b07aa1"}


def draw_timeline(cost: CostModel, path: "str | os.PathLike[str]", *, cores=None, max_ai_cores: int = 4, dpi: int = 120) -> None:
    """Draw a compact pipeline timeline (one row per core and pipe of the first ``max_ai_cores`` AI cores,
    plus cross-core stalls in grey) to a PNG. Needs matplotlib: ``pip install 'catlass-py[plot]'``."""
    if cost.report is None or not cost.record:
        raise ArgumentError("cost: expected a CostModel(record=True) that observed a finished launch")
    try:
        from matplotlib.figure import Figure  # no pyplot: leaves the caller's backend alone
    except ImportError:  # pragma: no cover - depends on the environment
        raise ArgumentError("drawing a timeline needs matplotlib: pip install 'catlass-py[plot]'") from None
    us = 1.0 / (cost.params.clock_ghz * 1e3)
    rows: list[tuple] = []
    for core in cost.cores:
        if (core.ai_core in cores) if cores is not None else core.ai_core < max_ai_cores:
            rows += [(core, p) for p in (AIC_PIPES if core.type.value == "AIC" else AIV_PIPES)]
    row_of = {key: i for i, key in enumerate(rows)}
    bars: dict[int, list[tuple[float, float]]] = {i: [] for i in range(len(rows))}
    span = cost.report.cycles or 1.0
    gap = span * 1e-3  # merge bars closer than 0.1 % of the run: keeps the picture light
    for core, pipe, _op, start, dur, _seq, _n in cost.intervals:
        i = row_of.get((core, pipe))
        if i is None:
            continue
        lst = bars[i]
        if lst and start - (lst[-1][0] + lst[-1][1]) <= gap:
            s0, _d0 = lst[-1]
            lst[-1] = (s0, max(s0 + _d0, start + dur) - s0)
        else:
            lst.append((start, dur))
    stalls: dict[int, list[tuple[float, float]]] = {}
    for core, _flag, issued, ready, _src in cost.flag_waits:
        i = row_of.get((core, "S"))
        if i is not None and ready > issued:
            stalls.setdefault(i, []).append((issued * us, (ready - issued) * us))
    height = max(2.0, 0.18 * len(rows) + 1.0)
    fig = Figure(figsize=(12, height))
    ax = fig.subplots()
    for i, (_core, pipe) in enumerate(rows):
        if i in stalls:
            ax.broken_barh(stalls[i], (i - 0.4, 0.8), facecolors="#d0d0d0")
        if bars[i]:
            ax.broken_barh([(s * us, d * us) for s, d in bars[i]], (i - 0.4, 0.8), facecolors=_COLOURS.get(pipe, "#888"))
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{core.short} {p}" for core, p in rows], fontsize=6)
    ax.invert_yaxis()
    ax.set_xlabel("predicted device time (us)")
    rep = cost.report
    shown = f"AI cores 0..{max_ai_cores - 1} of {rep.block_dim}" if rep.block_dim > max_ai_cores else f"{rep.block_dim} AI cores"
    ax.set_title(f"{rep.arch}: {rep.microseconds:.1f} us predicted, cube utilisation {rep.cube_utilisation:.1%} ({shown}; "
                 "grey = waiting on a cross-core flag)", fontsize=9)
    ax.set_xlim(0, span * us)
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
