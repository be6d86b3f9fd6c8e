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
                   cross-core sets and waits (zero-length slices when they take effect); the stalls
                   (instruction issue waiting for a cross-core flag) are slices of the core's S track, the
                   scalar unit that runs ``CrossCoreWaitFlag``
X events           one per instruction (cat "instruction"): name = op, ts/dur in microseconds of predicted
                   device time (whole nanoseconds), args = event seq and bytes
flow s -> f        one arrow per cross-core set consumed by a wait, from the set slice to the wait slice
                   (same pid, tid, ts and cat "cross-core" as the slices they bind to)
instant events     the kernel's ``ctx.mark`` annotations (block, epilogue_block) on the flags track
intra-core flags   with ``intra_core_flags=True``: an "events" track per core ("AIC0 events") with a
                   zero-length slice per ``SetFlag`` (when it fires) and ``WaitFlag`` (when its pipe may go on)
                   and an arrow (cat "intra-core") from each set to the wait that consumed it
=================  ========================================================================================

Timestamps are exact: every ts and dur is a whole number of nanoseconds (the cycle times rounded once, then
only added and subtracted as integers) written as microseconds with at most three decimals, so a slice that
ends where the next one starts is written with exactly that start. Flows bind by the Trace Event Format's
rule: an ``s`` event to the slice of its thread that encloses its ts, an ``f`` event with ``bp: "e"`` to the
enclosing slice too; each one sits at the start of a zero-length set or wait slice. The flags and events
tracks hold only zero-length slices, never a slice that ends at a flow's ts: a viewer that converts microseconds to floating
milliseconds (catapult, behind chrome://tracing, computes a slice's end as ``start + duration`` in doubles and
nests slices with nanosecond rounding) could otherwise nest the wait slice into a stall whose end it computes
one unit in the last place earlier than the wait, and then find no slice at the flow's ts.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

from catlass_py import JSON_SCHEMA_VERSION
from catlass_py.analysis.cost import AIC_PIPES, AIV_PIPES, CostModel
from catlass_py.errors import ArgumentError

XCAT = "cross-core"
ICAT = "intra-core"
_PIPE_SLOT = {"flags": 0, "S": 1, "MTE2": 2, "MTE1": 3, "M": 4, "FIX": 5, "V": 6, "MTE3": 7, "events": 8}


def _tid(core, pipe: str) -> int:
    slot = 0 if core.type.value == "AIC" else 1 + core.sub
    return slot * 16 + _PIPE_SLOT.get(pipe, 9 + (sum(map(ord, pipe)) % 7))


def chrome_trace(cost: CostModel, *, markers: bool = True, intra_core_flags: bool = False) -> dict[str, Any]:
    """The Chrome trace (a JSON-able dict) of a launch timed by ``cost`` (a ``CostModel(record=True)``).

    ``markers`` adds the kernel's annotations; ``intra_core_flags`` adds an "events" track per core with the
    intra-core ``SetFlag``/``WaitFlag`` pairs (zero-length slices when the set fires and when the wait lets its
    pipe go on) and an arrow from each set to its wait (cat "intra-core"; many more events)."""
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

    def ns(x: float) -> int:  # the one rounding: cycles -> whole nanoseconds
        return round(x * ns_per_cycle)

    def us(n: int) -> float:  # whole nanoseconds as microseconds: JSON writes n / 1000 exactly (<= 3 decimals)
        return n / 1e3

    for core, pipe, op, start, dur, seq, nbytes in cost.intervals:
        pid, tid = track(core, pipe)
        a = ns(start)
        events.append({"ph": "X", "cat": "instruction", "name": op, "pid": pid, "tid": tid, "ts": us(a),
                       "dur": us(ns(start + dur) - a), "args": {"seq": seq, "bytes": nbytes}})
    if markers:  # first: a viewer nests zero-length slices sharing a ts in file order and binds a flow at that
        # ts to the innermost (the last), which must be the set or wait slice, not an annotation
        for core, t, kind, data in cost.markers:
            pid, tid = track(core, "flags")
            events.append({"ph": "i", "s": "t", "name": kind, "pid": pid, "tid": tid, "ts": us(ns(t)),
                           "args": {k: v for k, v in data.items() if isinstance(v, (int, float, str, bool))}})
    set_ts: dict[int, tuple[int, int, float]] = {}
    for seq, (core, pipe, flag, fire) in cost.flag_sets.items():
        pid, tid = track(core, "flags")
        ts = us(ns(fire))
        set_ts[seq] = (pid, tid, ts)
        events.append({"ph": "X", "cat": XCAT, "name": f"set flag {flag}", "pid": pid, "tid": tid, "ts": ts, "dur": 0,
                       "args": {"seq": seq, "pipe": pipe}})
    flow = 0
    for core, flag, issued, ready, sources in cost.flag_waits:
        pid, tid = track(core, "flags")
        a, b = ns(issued), ns(ready)
        ts1 = us(b)
        if b > a:  # the core's instruction issue stood still waiting for the flag: a slice of its scalar unit
            spid, stid = track(core, "S")
            events.append({"ph": "X", "cat": XCAT, "name": f"stall on flag {flag}", "pid": spid, "tid": stid,
                           "ts": us(a), "dur": us(b - a)})
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
    if intra_core_flags:
        sets: dict[int, tuple[int, int, float]] = {}
        for seq, (core, event, ident, fire) in cost.event_sets.items():
            pid, tid = track(core, "events")
            sets[seq] = (pid, tid, us(ns(fire)))
            events.append({"ph": "X", "cat": ICAT, "name": f"set {event} {ident}", "pid": pid, "tid": tid,
                           "ts": sets[seq][2], "dur": 0, "args": {"seq": seq}})
        for core, event, ident, t, source in cost.event_waits:
            pid, tid = track(core, "events")
            ts = us(ns(t))
            events.append({"ph": "X", "cat": ICAT, "name": f"wait {event} {ident}", "pid": pid, "tid": tid, "ts": ts,
                           "dur": 0, "args": {"source": source}})
            src = sets.get(source)
            if src is not None:
                flow += 1
                events.append({"ph": "s", "id": flow, "name": f"{event} {ident}", "cat": ICAT, "pid": src[0],
                               "tid": src[1], "ts": src[2]})
                events.append({"ph": "f", "bp": "e", "id": flow, "name": f"{event} {ident}", "cat": ICAT, "pid": pid,
                               "tid": tid, "ts": ts})
    rep = cost.report
    if rep.launch_overhead_cycles > 0:  # the fixed cost of a launch, in no pipe: its own track, after the work
        pid = max((c.ai_core for c in cores), default=-1) + 1
        events.append({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": "launch"}})
        events.append({"ph": "M", "name": "process_sort_index", "pid": pid, "args": {"sort_index": pid}})
        events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": 0, "args": {"name": "launch overhead"}})
        a = ns(rep.cycles - rep.launch_overhead_cycles)
        events.append({"ph": "X", "cat": "launch", "name": "launch overhead", "pid": pid, "tid": 0, "ts": us(a),
                       "dur": us(ns(rep.cycles) - a),
                       "args": {"launch_overhead_us": round(rep.launch_overhead_cycles * us_per_cycle, 3),
                                "what": "the fixed cost of a launch (CostParams.launch_overhead_us, plus "
                                        "mix_launch_overhead_us for a cube + vector kernel): no pipe is busy"}})
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
_PIPE_NAMES = {"MTE2": "MTE2 (GM -> L1/UB)", "MTE1": "MTE1 (L1 -> L0)", "M": "M (cube mmad)",
               "FIX": "FIX (fixpipe L0C -> GM)", "V": "V (vector)", "MTE3": "MTE3 (UB -> GM)", "S": "S (scalar)"}
_STALL = "#d9d9d9"
_LAUNCH = "#ece3f0"
#: at most this many cross-core arrows and text labels are drawn (the first ones in time); the title says so
MAX_ARROWS = 600
MAX_LABELS = 400


def _block_label(data: dict) -> str:
    """A short label of a ``ctx.mark('block', ...)`` annotation: group, tile coordinates, K slice."""
    parts = []
    if "group" in data:
        parts.append(f"g{data['group']}")
    if "m_idx" in data and "n_idx" in data:
        parts.append(f"({data['m_idx']},{data['n_idx']})")
    for key, short in (("k_idx", "k"), ("slice", "s"), ("batch", "b")):
        if key in data:
            parts.append(f"{short}{data[key]}")
    return " ".join(parts) or "block"


def draw_timeline(cost: CostModel, path: "str | os.PathLike[str]", *, cores: "Iterable[int] | None" = None,
                  dpi: int = 110, width: float = 16.0) -> dict[str, Any]:
    """Draw the predicted timeline of a launch timed by ``cost`` (a ``CostModel(record=True)``) to a PNG.

    One band per core (the AIC, then its two AIVs) of the AI cores ``cores`` (ids; default: every AI core of
    the launch), one lane per pipe. Bars are instructions (adjacent ones closer than 0.1 % of the run merged);
    hatched grey bars on a core's S lane are stalls - its instruction issue waiting on a cross-core flag - as
    in the Chrome trace (:func:`chrome_trace`), labelled with the flag; arrows run from each flag set (on the
    setting pipe's lane) to the wait it released; the AIC's output blocks are labelled where the cube starts
    them (group, tile coordinates, K slice). A legend names the pipes. Returns what was drawn: ``cores``,
    ``lanes``, ``arrows`` (drawn) and ``flag_waits_released`` (all), ``stalls``, ``stall_labels``,
    ``block_labels``, ``legend``. Needs matplotlib: ``pip install 'catlass-py[plot]'``."""
    if cost.report is None or not cost.record:
        raise ArgumentError("cost: expected a CostModel(record=True) that observed a finished launch")
    try:
        from matplotlib.figure import Figure  # no pyplot: leaves the caller's backend alone
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch
    except ImportError:  # pragma: no cover - depends on the environment
        raise ArgumentError("drawing a timeline needs matplotlib: pip install 'catlass-py[plot]'") from None
    launched = sorted({c.ai_core for c in cost.cores})
    shown = launched if cores is None else sorted(set(int(c) for c in cores))
    missing = [c for c in shown if c not in launched]
    if missing:
        raise ArgumentError(f"cores: the launch ran AI cores {launched[0]}..{launched[-1]}, got {missing}")
    us = 1.0 / (cost.params.clock_ghz * 1e3)
    units = sorted((c for c in cost.cores if c.ai_core in shown), key=lambda c: (c.ai_core, c.type.value != "AIC", c.sub))
    lanes: list[tuple] = []
    band_of: dict = {}
    for unit in units:
        band_of[unit] = len(lanes)
        lanes += [(unit, p) for p in (AIC_PIPES if unit.type.value == "AIC" else AIV_PIPES)]
    lane_of = {key: i for i, key in enumerate(lanes)}
    span = cost.report.cycles or 1.0
    gap = span * 1e-3
    bars: dict[int, list[list[float]]] = {i: [] for i in range(len(lanes))}
    for core, pipe, _op, start, dur, _seq, _n in cost.intervals:
        i = lane_of.get((core, pipe))
        if i is None:
            continue
        lst = bars[i]
        if lst and start - (lst[-1][0] + lst[-1][1]) <= gap:
            lst[-1][1] = max(lst[-1][0] + lst[-1][1], start + dur) - lst[-1][0]
        else:
            lst.append([start, dur])

    lane_h = 0.13
    height = max(3.0, lane_h * len(lanes) + 1.75)
    fig = Figure(figsize=(width, height))
    ax = fig.add_axes((0.075, 0.5 / height, 0.91, 1 - 1.5 / height))
    # bands: alternate AI cores shaded, a line between cores
    for k, ai in enumerate(shown):
        idx = [lane_of[(u, p)] for u in units if u.ai_core == ai for p in
               (AIC_PIPES if u.type.value == "AIC" else AIV_PIPES)]
        if k % 2 == 0:
            ax.axhspan(min(idx) - 0.5, max(idx) + 0.5, color="#f4f6fa", zorder=0)
        ax.axhline(max(idx) + 0.5, color="#9aa3b2", lw=0.6, zorder=1)
    for unit in units:
        first = band_of[unit]
        if unit.type.value != "AIC":
            ax.axhline(first - 0.5, color="#c8cdd6", lw=0.4, ls=":", zorder=1)
    for i, (_unit, pipe) in enumerate(lanes):
        if bars[i]:
            ax.broken_barh([(s * us, d * us) for s, d in bars[i]], (i - 0.4, 0.8), facecolors=_COLOURS.get(pipe, "#888"),
                           edgecolor="none", zorder=3)
    # the launch overhead (no pipe busy) closes the predicted time: shaded across every lane
    head = cost.report.launch_overhead_cycles
    if head > 0:
        ax.axvspan((span - head) * us, span * us, color=_LAUNCH, alpha=0.5, lw=0, zorder=1)
        ax.text((span - head / 2) * us, -0.75, "launch overhead", ha="center", va="center", fontsize=6, color="#555",
                zorder=4, clip_on=True)
    # stalls on the S lane, labelled with the flag waited on
    labels = stalls = 0
    for core, flag, issued, ready, _src in cost.flag_waits:
        i = lane_of.get((core, "S"))
        if i is None or ready <= issued:
            continue
        stalls += 1
        ax.broken_barh([(issued * us, (ready - issued) * us)], (i - 0.4, 0.8), facecolors=_STALL, edgecolor="#8c8c8c",
                       hatch="////", linewidth=0.3, zorder=2)
        if (ready - issued) > span * 0.035 and labels < MAX_LABELS:
            labels += 1
            ax.text((issued + ready) / 2 * us, i, f"wait flag {flag}", ha="center", va="center", fontsize=5.5,
                    color="#333", zorder=4, clip_on=True)
    # flag arrows: set (on the setting pipe's lane) -> the wait it released (the waiting core's S lane)
    set_at = {seq: (core, pipe, fire) for seq, (core, pipe, _flag, fire) in cost.flag_sets.items()}
    arrows = []
    for core, flag, _issued, ready, sources in cost.flag_waits:
        dst = lane_of.get((core, "S"))
        for seq in sources:
            src = set_at.get(seq)
            if src is None or dst is None or lane_of.get((src[0], src[1])) is None:
                continue
            arrows.append((src[2], lane_of[(src[0], src[1])], ready, dst))
    arrows.sort()
    for x0, y0, x1, y1 in arrows[:MAX_ARROWS]:
        ax.annotate("", xy=(x1 * us, y1), xytext=(x0 * us, y0), zorder=5,
                    arrowprops={"arrowstyle": "-|>", "lw": 0.45, "color": "#3b3b3b", "alpha": 0.55,
                                "mutation_scale": 4, "shrinkA": 0, "shrinkB": 0})
    # block labels where the cube starts each output block
    last_x: dict = {}
    block_labels = 0
    min_dx = span * 0.03
    for core, t, kind, data in cost.markers:
        if kind != "block" or core.type.value != "AIC" or core not in band_of:
            continue
        if t - last_x.get(core, -span) < min_dx:
            continue
        last_x[core] = t
        block_labels += 1
        y = band_of[core] - 0.45
        ax.plot([t * us, t * us], [y, y + 4.9], color="#444", lw=0.4, alpha=0.5, zorder=2)
        ax.text(t * us, y, " " + _block_label(data), fontsize=5, va="bottom", ha="left", color="#222", zorder=6,
                clip_on=True)
    ax.set_yticks(range(len(lanes)))
    ax.set_yticklabels([f"{core.short} {p}" for core, p in lanes], fontsize=5.5)
    ax.set_ylim(len(lanes) - 0.5, -1.0)
    ax.set_xlim(0, span * us)
    ax.set_xlabel("predicted device time (us)", fontsize=8)
    ax.tick_params(axis="x", labelsize=7)
    ax.grid(axis="x", color="#e0e0e0", lw=0.5, zorder=0)
    ax.set_axisbelow(True)
    rep = cost.report
    which = "every AI core" if cores is None else f"AI cores {', '.join(map(str, shown))}"
    note = f"; arrows: first {MAX_ARROWS} of {len(arrows)}" if len(arrows) > MAX_ARROWS else ""
    fig.suptitle(f"{rep.arch}: {rep.microseconds:.1f} us predicted on {rep.block_dim} AI cores, cube utilisation "
                 f"{rep.cube_utilisation:.1%} (showing {which}{note})", fontsize=9, y=1 - 0.12 / height)
    handles = [Patch(facecolor=_COLOURS[p], label=_PIPE_NAMES[p]) for p in ("MTE2", "MTE1", "M", "FIX", "V", "MTE3", "S")]
    handles += [Patch(facecolor=_STALL, edgecolor="#8c8c8c", hatch="////", label="stall: waiting on a cross-core flag"),
                Patch(facecolor=_LAUNCH, alpha=0.5, label="launch overhead (no pipe busy)"),
                Line2D([], [], color="#3b3b3b", lw=0.8, marker=">", markersize=3, label="flag set -> the wait it releases"),
                Line2D([], [], color="#444", lw=0.6, label="output block started (group (m,n))")]
    fig.legend(handles=handles, loc="upper center", ncol=5, fontsize=6.5, frameon=False,
               bbox_to_anchor=(0.5, 1 - 0.3 / height))
    fig.savefig(path, dpi=dpi)
    return {"cores": shown, "lanes": len(lanes), "arrows": min(len(arrows), MAX_ARROWS), "flag_waits_released": len(arrows),
            "stalls": stalls, "stall_labels": labels, "block_labels": block_labels,
            "launch_overhead_us": round(head * us, 3),
            "legend": [h.get_label() for h in handles]}
