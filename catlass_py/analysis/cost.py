"""Cost model: a timing simulation of a launch over the observer bus, giving predicted device time, cube
utilisation and per-pipe busy fractions (and, on request, every instruction's start and end for a trace).

There is no CATLASS counterpart; on hardware this is what ``msprof op`` measures and what ``msprof op simulator``
draws. Parameters come from ``arch.cost`` (:class:`catlass_py.arch.spec.CostParams`), each with its source.

The order between pipes is the pipe model's (:mod:`catlass_py.arch.pipe_order`, the same happens-before graph
the hazard detector checks); this module gives its operations times. Per core it keeps an *issue clock* (the
scalar unit dispatching instructions in program order) and, per pipe, the time the pipe may start its next
instruction (``free``) and the time its issued work is complete (``done``):

==========================  =========================================================================
event                       timing rule
==========================  =========================================================================
instruction on pipe P       starts at max(issue, P free); occupies P for its duration (overhead + bytes /
                            rate, or cube fractals, or vector repeats); GM transfers complete
                            ``gm_latency_cycles`` later without occupying P. Issue advances by
                            ``scalar_issue_cycles``. Scalar (S) instructions stall issue until done.
publish on P (a set)        fires at max(issue, P done, P free): after P's earlier work and what P waits for
join into P (a wait)        P starts nothing before the token's time (``WaitFlag`` on P; a unit-flag Fixpipe
                            after its closing Mmad; a unit-flag Mmad after the Fixpipe reading its L0C); a
                            join into S (``WaitFlag<X_S>``) also stalls issue until then
``PipeBarrier<P>``          P starts nothing before its earlier work completed; ALL stalls issue until
                            every pipe's work completed
``CrossCoreSetFlag<P>``     fires as a publish on P (+ ``cross_core_latency_cycles``)
``CrossCoreWaitFlag``       stalls issue until every set it consumed (``sources``) fired
==========================  =========================================================================

Pipes therefore overlap exactly as far as the kernel's synchronisation allows, and no instruction starts
before the work it is ordered after has finished. Approximations: pipe queues
are unbounded (issue never stalls on a full queue); GM bandwidth shared by all cores is modelled by capping
each core's GM rate at ``gm_bandwidth / block_dim`` and by a final floor ``total GM bytes / gm_bandwidth``
on the predicted time; every GM access is assumed to miss L2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from catlass_py.arch.events import (
    CoreEndEvent,
    CoreId,
    CrossCoreSetEvent,
    CrossCoreWaitEvent,
    InstructionEvent,
    LaunchInfo,
    MarkerEvent,
    SetFlagEvent,
    WaitFlagEvent,
)
from catlass_py.arch.pipe_order import PIPES, CoreOrder, PipeOrder
from catlass_py.arch.pipes import CoreType, Pipe

AIC_PIPES = ("MTE2", "MTE1", "M", "FIX", "S")
AIV_PIPES = ("MTE2", "V", "MTE3", "S")
_DTYPE_BITS = {
    "int4": 4, "float4_e2m1fn": 4, "float4_e1m2": 4, "int8": 8, "uint8": 8, "float8_e4m3fn": 8, "float8_e5m2": 8,
    "float8_e8m0fnu": 8, "hifloat8": 8, "int16": 16, "uint16": 16, "float16": 16, "bfloat16": 16, "int32": 32,
    "uint32": 32, "float32": 32, "int64": 64, "uint64": 64,
}


@dataclass
class CostReport:
    """What the cost model predicts for one launch (times in cycles of ``clock_ghz``)."""

    arch: str
    clock_ghz: float
    block_dim: int
    cycles: float
    timeline_cycles: float
    bandwidth_floor_cycles: float
    gm_read_bytes: int
    gm_write_bytes: int
    cube_macs: int
    cube_utilisation: float
    pipe_busy: dict[str, float]
    core_end_cycles: dict[str, float] = field(default_factory=dict)
    launches: int = 1
    busy_cycles: dict[str, float] = field(default_factory=dict, repr=False)
    """Busy cycles summed over the cores of each type, per 'AIC.M'-style key (pipe_busy's numerators)."""
    core_cycles: dict[str, float] = field(default_factory=dict, repr=False)
    """Cycles x cores of each type ('AIC', 'AIV'): pipe_busy's denominators."""

    @property
    def seconds(self) -> float:
        """Predicted device time of the launch."""
        return self.cycles / (self.clock_ghz * 1e9)

    @property
    def microseconds(self) -> float:
        return self.seconds * 1e6

    @property
    def bound(self) -> str:
        """'timeline' when the pipelines' critical path sets the time, 'gm_bandwidth' when the aggregate floor does."""
        return "gm_bandwidth" if self.bandwidth_floor_cycles > self.timeline_cycles else "timeline"

    def summary(self) -> dict[str, Any]:
        """The fields a run summary shows (JSON-friendly)."""
        return {
            "predicted_device_time_us": round(self.microseconds, 3),
            "launches": self.launches,
            "predicted_cycles": round(self.cycles),
            "bound_by": self.bound,
            "cube_utilisation": round(self.cube_utilisation, 4),
            "pipe_busy": {k: round(v, 4) for k, v in self.pipe_busy.items()},
            "gm_bytes": {"read": self.gm_read_bytes, "write": self.gm_write_bytes},
        }


class _CoreTiming:
    __slots__ = ("issue", "free", "done", "busy", "end", "last_end")

    def __init__(self, start: float, pipes):
        self.issue = start
        self.free = dict.fromkeys(pipes, start)
        self.done = dict.fromkeys(pipes, start)
        self.busy = dict.fromkeys(pipes, 0.0)
        self.last_end = dict.fromkeys(pipes, start)
        self.end = start


class CostModel(PipeOrder):
    """Observer that times every instruction of a launch (see the module docstring for the rules).

    The order between pipes comes from :class:`~catlass_py.arch.pipe_order.PipeOrder` (the same happens-before
    graph the hazard detector checks); this class adds durations and pipe occupancy. After the launch,
    :attr:`report` holds the :class:`CostReport`. With ``record=True`` it also keeps :attr:`intervals` (core,
    pipe, op, start, duration, event seq, bytes), :attr:`flag_sets` and :attr:`flag_waits` (cross-core),
    :attr:`event_sets` and :attr:`event_waits` (intra-core ``SetFlag``/``WaitFlag``: when a set fires, when
    the wait lets its pipe go on) for :func:`catlass_py.analysis.trace.chrome_trace`, and :attr:`landing`: for each interval (same index) the
    cycles after its end until its data has landed (``gm_latency_cycles`` for a GM transfer, else 0), which
    :func:`catlass_py.analysis.causality.causality_violations` adds to find when an instruction finished.
    ``arch`` overrides the launch's spec (e.g. to evaluate other cost parameters on the same run).
    """

    def __init__(self, arch=None, *, record: bool = False):
        self.arch_override = arch
        self.record = record
        self.reports: list[CostReport] = []
        self.cores: tuple[CoreId, ...] = ()
        self.intervals: list[tuple] = []
        self.landing: list[float] = []
        self.flag_sets: dict[int, tuple[CoreId, str, int, float]] = {}
        self.flag_waits: list[tuple[CoreId, int, float, float, tuple[int, ...]]] = []
        self.event_sets: dict[int, tuple[CoreId, str, int, float]] = {}  # seq -> core, event, id, fire
        self.event_waits: list[tuple[CoreId, str, int, float, int]] = []  # core, event, id, time, set seq
        self.markers: list[tuple[CoreId, float, str, dict]] = []
        self._offset = 0.0

    @property
    def report(self) -> CostReport | None:
        """The prediction for everything observed: one launch, or several run back to back (their times add)."""
        if not self.reports:
            return None
        return self.reports[0] if len(self.reports) == 1 else _combine(self.reports)

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self, info: LaunchInfo) -> None:
        from catlass_py.arch.spec import get_arch

        arch = get_arch(self.arch_override) if self.arch_override is not None else info.arch
        self.arch = arch
        self.params = p = arch.cost
        self.block_dim = info.block_dim
        self.cores = tuple(dict.fromkeys(self.cores + tuple(info.cores)))  # every core of every launch seen
        self._offset = sum(r.cycles for r in self.reports)  # a later launch starts when the previous one ended
        self._timing: dict[CoreId, _CoreTiming] = {}
        for c, st in self.orders.items():
            st.data = self._timing[c] = _CoreTiming(self._offset, PIPES)
        self._gm_read = self._gm_write = 0
        self._macs = 0
        share = p.gm_bandwidth_gbps / p.clock_ghz / max(1, info.block_dim)  # bytes per cycle per AI core
        self._mte2_rate = {  # GM -> L1 (AIC) / GM -> UB (AIV), by core type
            CoreType.AIC: min(p.gm_read_bytes_per_cycle, share),
            CoreType.AIV: min(p.aiv_gm_read_bytes_per_cycle, share),
        }
        self._gm_write_rate = min(p.gm_write_bytes_per_cycle, share)
        self._ub_to_gm_rate = min(p.ub_to_gm_bytes_per_cycle, share)

    def on_launch_end(self, info: LaunchInfo, error: BaseException | None) -> None:
        self.reports.append(self._build_report())
        self._timing = {}
        super().on_launch_end(info, error)

    # -- order operations on times ---------------------------------------------------------------
    def dispatch(self, st: CoreOrder, pipe: Pipe) -> None:
        """Nothing to do: an instruction never starts before the issue clock, which follows every scalar step."""

    def publish(self, st: CoreOrder, pipe: Pipe, e) -> float:
        t = st.data
        if type(e) is InstructionEvent:  # a unit-flag Mmad or Fixpipe: its own completion
            return t.last_end[pipe]
        fire = max(t.issue, t.done[pipe], t.free[pipe])
        t.issue += self.params.scalar_issue_cycles
        if self.record and type(e) is SetFlagEvent:
            self.event_sets[e.seq] = (e.core, e.event.name, e.event_id, fire)
        if type(e) is CrossCoreSetEvent:
            if self.record:
                self.flag_sets[e.seq] = (e.core, pipe.value, e.flag_id, fire)
            return fire + self.params.cross_core_latency_cycles
        return fire

    def join(self, st: CoreOrder, pipe: Pipe, token: float, e) -> None:
        t = st.data
        if token > t.free[pipe]:
            t.free[pipe] = token
        if pipe is Pipe.S and token > t.issue:  # S blocked: it dispatches nothing later before the token
            t.issue = token
        if type(e) is WaitFlagEvent:
            t.issue += self.params.scalar_issue_cycles
            if self.record:
                self.event_waits.append((e.core, e.event.name, e.event_id, t.free[pipe], e.source_seq))

    def cross_wait(self, st: CoreOrder, tokens, e: CrossCoreWaitEvent) -> None:
        t = st.data
        issued = ready = t.issue
        for v in tokens:
            if v > ready:
                ready = v
        t.issue = ready + self.params.scalar_issue_cycles
        if self.record:
            self.flag_waits.append((e.core, e.flag_id, issued, ready, e.sources))

    def barrier(self, st: CoreOrder, pipe: Pipe, e) -> None:
        t = st.data
        if t.done[pipe] > t.free[pipe]:
            t.free[pipe] = t.done[pipe]

    def barrier_all(self, st: CoreOrder, e) -> float:
        t = st.data
        fire = max(t.issue, *t.done.values())
        if type(e) is CrossCoreSetEvent:
            if self.record:
                self.flag_sets[e.seq] = (e.core, "ALL", e.flag_id, fire)
            t.issue += self.params.scalar_issue_cycles
            return fire + self.params.cross_core_latency_cycles
        t.issue = fire
        return fire

    def instruction(self, st: CoreOrder, pipe: Pipe, e: InstructionEvent) -> None:
        t = st.data
        p = self.params
        dur, lat = self._duration(e, pipe)
        free = t.free[pipe]
        start = t.issue if t.issue > free else free
        busy_end = start + dur
        t.free[pipe] = busy_end
        t.last_end[pipe] = busy_end + lat
        if busy_end + lat > t.done[pipe]:
            t.done[pipe] = busy_end + lat
        t.busy[pipe] += dur
        if pipe is Pipe.S:
            t.issue = busy_end + lat
        else:
            t.issue += p.scalar_issue_cycles
        for a in e.gm_reads:
            self._gm_read += a.length * a.count
        for a in e.gm_writes:
            self._gm_write += a.length * a.count
        if self.record:
            self.intervals.append((e.core, pipe.value, e.op, start, dur, e.seq, e.nbytes))
            self.landing.append(lat)

    def _duration(self, e: InstructionEvent, pipe: Pipe) -> tuple[float, float]:
        """(cycles the pipe is occupied, extra cycles until the data has landed)."""
        p = self.params
        nbytes = e.nbytes
        info = e.info if isinstance(e.info, dict) else {}
        if pipe is Pipe.M:
            m, n, k = info.get("m"), info.get("n"), info.get("k")
            macs_pc = p.macs_per_cycle(info.get("dtype"))
            if m is not None and n is not None and k is not None:
                k0 = max(1, macs_pc // 256)
                fractals = math.ceil(m / 16) * math.ceil(n / 16) * math.ceil(k / k0)
                self._macs += m * n * k
                return p.cube_overhead_cycles + fractals, 0.0
            self._macs += e.flops // 2
            return p.cube_overhead_cycles + e.flops / 2 / macs_pc, 0.0
        if pipe is Pipe.MTE2:
            rate = self._mte2_rate[e.core.type]
            dmas = info.get("dmas", 1) or 1
            lat = p.gm_latency_cycles if e.gm_reads else 0.0
            return p.mte_overhead_cycles * dmas + nbytes / rate, lat
        if pipe is Pipe.MTE1:
            rate = p.l1_to_l0a_bytes_per_cycle if "L0A" in e.op else p.l1_to_l0b_bytes_per_cycle
            return p.mte_overhead_cycles + nbytes / rate, 0.0
        if pipe is Pipe.FIX:
            m, n = info.get("m"), info.get("n")
            l0c_bytes = 4 * m * n if m is not None and n is not None else nbytes
            cycles = max(l0c_bytes / p.l0c_read_bytes_per_cycle, nbytes / self._gm_write_rate)
            return p.mte_overhead_cycles + cycles, (p.gm_latency_cycles if e.gm_writes else 0.0)
        if pipe is Pipe.MTE3:
            lat = p.gm_latency_cycles if e.gm_writes else 0.0
            return p.mte_overhead_cycles + nbytes / self._ub_to_gm_rate, lat
        if pipe is Pipe.V:
            src, dst = info.get("src"), info.get("dst")
            if src in _DTYPE_BITS and dst in _DTYPE_BITS and e.flops:
                nbytes = e.flops * max(_DTYPE_BITS[src], _DTYPE_BITS[dst]) // 8
            return p.vector_overhead_cycles + math.ceil(nbytes / p.vector_bytes_per_cycle), 0.0
        if pipe is Pipe.S:
            return (p.scalar_gm_read_cycles if e.gm_reads or e.gm_writes else p.scalar_issue_cycles), 0.0
        return p.mte_overhead_cycles + nbytes / p.l1_to_l0b_bytes_per_cycle, 0.0

    def core_end(self, st: CoreOrder, e: CoreEndEvent) -> None:
        t = st.data
        t.end = max(t.issue, *t.done.values())

    def marker(self, st: CoreOrder, e: MarkerEvent) -> None:
        if self.record:
            self.markers.append((e.core, st.data.issue, e.kind, e.data))

    # -- report ----------------------------------------------------------------------------------
    def _build_report(self) -> CostReport:
        p = self.params
        timing = getattr(self, "_timing", {})
        off = self._offset
        for t in timing.values():  # cores that raised or never ended still count up to their last work
            t.end = max(t.end, t.issue, *t.done.values())
        timeline = max((t.end for t in timing.values()), default=off) - off
        total = self._gm_read + self._gm_write
        floor = total / (p.gm_bandwidth_gbps / p.clock_ghz)
        cycles = max(timeline, floor)
        busy_cycles: dict[str, float] = {}
        core_cycles: dict[str, float] = {}
        for ctype, pipes in (("AIC", AIC_PIPES), ("AIV", AIV_PIPES)):
            members = [t for c, t in timing.items() if c.type.value == ctype]
            if not members:
                continue
            core_cycles[ctype] = cycles * len(members)
            extra = sorted({k.value for t in members for k, v in t.busy.items() if v} - set(pipes))
            for name in list(pipes) + extra:
                busy_cycles[f"{ctype}.{name}"] = sum(t.busy[Pipe(name)] for t in members)
        pipe_busy = _fractions(busy_cycles, core_cycles)
        return CostReport(
            arch=self.arch.name, clock_ghz=p.clock_ghz, block_dim=self.block_dim, cycles=cycles,
            timeline_cycles=timeline, bandwidth_floor_cycles=floor, gm_read_bytes=self._gm_read,
            gm_write_bytes=self._gm_write, cube_macs=self._macs, cube_utilisation=pipe_busy.get("AIC.M", 0.0),
            pipe_busy=pipe_busy, core_end_cycles={c.short: t.end - off for c, t in timing.items()},
            busy_cycles=busy_cycles, core_cycles=core_cycles,
        )


def _fractions(busy: dict[str, float], cores: dict[str, float]) -> dict[str, float]:
    return {k: (v / cores[k.split(".", 1)[0]] if cores.get(k.split(".", 1)[0]) else 0.0) for k, v in busy.items()}


def _combine(reports: list[CostReport]) -> CostReport:
    """Launches run one after the other: times, bytes and busy cycles add."""
    busy: dict[str, float] = {}
    cores: dict[str, float] = {}
    for r in reports:
        for k, v in r.busy_cycles.items():
            busy[k] = busy.get(k, 0.0) + v
        for k, v in r.core_cycles.items():
            cores[k] = cores.get(k, 0.0) + v
    pipe_busy = _fractions(busy, cores)
    last = reports[-1]
    return CostReport(
        arch=last.arch, clock_ghz=last.clock_ghz, block_dim=max(r.block_dim for r in reports),
        cycles=sum(r.cycles for r in reports), timeline_cycles=sum(r.timeline_cycles for r in reports),
        bandwidth_floor_cycles=sum(r.bandwidth_floor_cycles for r in reports),
        gm_read_bytes=sum(r.gm_read_bytes for r in reports), gm_write_bytes=sum(r.gm_write_bytes for r in reports),
        cube_macs=sum(r.cube_macs for r in reports), cube_utilisation=pipe_busy.get("AIC.M", 0.0),
        pipe_busy=pipe_busy, core_end_cycles=dict(last.core_end_cycles), launches=len(reports),
        busy_cycles=busy, core_cycles=cores,
    )


def roofline(arch, *, macs: int, gm_bytes: int, dtype: str = "int8", block_dim: int | None = None) -> dict[str, float]:
    """Lower bounds on device time (seconds) from peak cube throughput and from aggregate GM bandwidth."""
    p = arch.cost
    cores = arch.core_num if block_dim is None else block_dim
    peak_macs = p.macs_per_cycle(dtype) * cores * p.clock_ghz * 1e9
    compute = macs / peak_macs
    memory = gm_bytes / (p.gm_bandwidth_gbps * 1e9)
    return {"compute_s": compute, "memory_s": memory, "bound_s": max(compute, memory),
            "peak_tops": 2 * peak_macs / 1e12, "gm_bandwidth_gbps": p.gm_bandwidth_gbps}
