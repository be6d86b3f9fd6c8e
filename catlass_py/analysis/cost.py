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
before the work it is ordered after has finished.

Memory below the core (the calibration against CATLASS's published timings, :mod:`catlass_py.calibration`,
chose the parameters marked "fitted"):

* a GM read (MTE2) costs ``gm_run_cycles`` per contiguous run (a row of an ND tile, a panel of a zN tile) plus
  its bytes at the core's rate for an L2 hit (``l2_read_bytes_per_cycle``) or an L2 miss
  (``gm_read_bytes_per_cycle``; the AIV rates for a vector core);
* the L2 is modelled at tile granularity: a read of the same bytes as an earlier read (in simulated time) hits,
  as does any read of a buffer the launch wrote (the workspaces the cores hand each other); any other read
  misses, fetches whole ``hbm_access_bytes`` granules from HBM and enters the cache (least recently used out
  past ``l2_size_bytes``; the cache starts empty, as after CATLASS's tuner clears it before each timed run,
  and is kept across the launches one model observes). Reuse of A and B tiles across cores is therefore
  counted: the first core to read a tile pays the miss, the others hit;
* every read also queues, in simulated time, on the L2 all cores share (``l2_bandwidth_gbps``, first come first
  served), and a miss shares the HBM (``gm_bandwidth_gbps`` plus ``hbm_run_cycles`` per run) with the other
  misses in flight: it gets 1/n of it, n the misses in flight when it starts, its own included. The read ends
  when its core, the L2 and its HBM share are done with it. That is the per-core against chip-wide bandwidth: a
  core alone reads at its own rate, many cores at their share of the chip's, and a small miss (a vector core's
  scale vector) is not queued behind the other cores' whole tiles. The HBM bytes fetched / ``gm_bandwidth``
  also floor the predicted time;
* writes (Fixpipe, MTE3) land in L2 at the core's rate; an atomic add's Fixpipe moves the bytes and the add
  costs nothing more;
* every launch adds its head overhead: ``launch_overhead_us``, plus ``mix_launch_overhead_us``
  for a MIX kernel (cube and vector programs).

To time reads of shared bytes in the order they happen, events are queued per core and timed at the end of
the launch, always advancing the core that has got least far (the simulator runs one core at a time, so its
event order is not the order in time). Approximations: pipe queues are unbounded (issue never stalls on a full
queue); a read that overlaps an earlier one only in part misses; a miss's HBM share is fixed when it starts
(misses that start later do not slow it); writes do not queue on the shared L2/HBM; latency does not depend on
the address pattern beyond the per-run cost.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_right
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from catlass_py.arch.events import (
    CoreEndEvent,
    CoreId,
    CoreStartEvent,
    CrossCoreSetEvent,
    CrossCoreWaitEvent,
    InstructionEvent,
    LaunchInfo,
    MarkerEvent,
    PipeBarrierEvent,
    SetFlagEvent,
    WaitFlagEvent,
)
from catlass_py.analysis.cost_records import (
    _BARRIER,
    _EVENT,
    _INSTR,
    _MACRO,
    _READ,
    _SET,
    _WAIT,
    compilable,
    compile_template,
)
from catlass_py.arch.pipe_order import PIPE_INDEX, PIPES, UNIT_FLAG_LAST, CoreOrder, PipeOrder, _l0c
from catlass_py.arch.pipes import CoreType, HardEvent, Pipe
from catlass_py.errors import KernelError

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
    launch_overhead_cycles: float = 0.0
    """Head overhead of the launch(es), included in ``cycles``."""
    l2_hit_bytes: int = 0
    """GM bytes read from L2 (MTE2)."""
    hbm_read_bytes: int = 0
    """Bytes read from HBM by the reads that missed L2 (whole ``hbm_access_bytes`` granules)."""
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
            "l2": {"hit_bytes": self.l2_hit_bytes, "hbm_read_bytes": self.hbm_read_bytes},
            "launch_overhead_us": round(self.launch_overhead_cycles / (self.clock_ghz * 1e3), 3),
        }


class _CoreTiming:
    __slots__ = ("issue", "free", "done", "busy", "end", "last_end", "clock", "rates")

    def __init__(self, start: float, pipes, rates: tuple[float, float] = (0.0, 0.0)):
        self.issue = start
        self.free = dict.fromkeys(pipes, start)
        self.done = dict.fromkeys(pipes, start)
        self.busy = dict.fromkeys(pipes, 0.0)
        self.last_end = dict.fromkeys(pipes, start)
        self.end = start
        self.clock = start  # start of the latest instruction timed: how far the core has got
        self.rates = rates  # MTE2 bytes per cycle of the core's type: (L2 hit, L2 miss)


def check_timing_arch(arch, built_for, label: str = "arch") -> None:
    """Refuse to price a kernel built for the arch ``built_for`` with the cost parameters of ``arch`` when their
    arch codes differ (a :class:`CostModel` given another arch; ``catlass-py run/tune --arch`` checks it up front,
    with ``label`` ``"--arch"``): an :class:`~catlass_py.errors.ArgumentError`."""
    if arch.arch_code != built_for.arch_code:
        from catlass_py.errors import ArgumentError

        raise ArgumentError(f"{label}: {arch.name} (arch_code {arch.arch_code}) cannot time a kernel built for "
                            f"{built_for.name} (arch_code {built_for.arch_code})")


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
    ``arch`` overrides the launch's spec (e.g. to evaluate other cost parameters on the same run). Without
    ``record`` the model does not subscribe to markers (``interests``): only the trace shows them.
    """

    def __init__(self, arch=None, *, record: bool = False):
        self.arch_override = arch
        self.record = record
        if not record:  # markers only go into the trace: without one the machine need not build them
            self.interests = PipeOrder.interests - {"marker"}
        else:  # a trace shows every instruction as the machine published it
            self.accepts_templates = False
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
        # L2 at tile granularity, kept across the launches one model observes: read footprint -> (time of the
        # first fetch, bytes), least recently used first; buffers written (their reads hit).
        self._l2: OrderedDict = OrderedDict()
        self._l2_bytes = 0
        self._written: set[int] = set()
        self._geometry_cache: dict = {}

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
        self._queues: dict[int, list] = {id(st.core): [] for st in self.orders.values()}  # by id of the CoreId
        # key -> (records, positions of their flag sequence numbers, MACs, GM bytes read, GM bytes written, the GM
        # reads' (position, region, bytes past its start), the GM writes' (position, regions), the index of its
        # compiled function in _macros or -1): see template_end
        self._templates: dict = {}
        self._macros: list = []  # the launch's compiled templates (cost_records.compile_template), by _MACRO index
        # id of a CoreId -> queue length, MACs, GM bytes read and written when its capture began
        self._captures: dict[int, tuple[int, int, int, int]] = {}
        self._side: list = []  # what the queued records need beside numbers (see on_event)
        self._last_core = self._last_queue = None
        if self.arch_override is not None:
            check_timing_arch(arch, info.arch)
        self._gm_read = self._gm_write = 0
        self._l2_hit_bytes = self._hbm_read = 0
        self._hbm_rate = p.gm_bandwidth_gbps / p.clock_ghz  # bytes per cycle, all cores together
        self._hbm_active: list[float] = []  # end times of the reads in flight that fetch from HBM (a heap)
        self._l2_rate = p.l2_bandwidth_gbps / p.clock_ghz
        self._l2_free = self._offset  # when the L2 has served every read queued so far
        self._macs = 0
        self._macs_per_cycle: dict = {}  # cube MACs per cycle by Mmad input dtype (CostParams.macs_per_cycle)
        # MTE2 bytes per cycle of one core: (core type, L2 hit) -> rate
        self._read_rate = {
            (CoreType.AIC, True): p.l2_read_bytes_per_cycle,
            (CoreType.AIC, False): p.gm_read_bytes_per_cycle,
            (CoreType.AIV, True): p.aiv_gm_read_bytes_per_cycle,
            (CoreType.AIV, False): p.aiv_l2_miss_read_bytes_per_cycle,
        }
        self._rates = {t: (self._read_rate[(t, True)], self._read_rate[(t, False)]) for t in CoreType}
        for c, t in self._timing.items():
            t.rates = self._rates[c.type]
        self._gm_write_rate = p.gm_write_bytes_per_cycle
        self._ub_to_gm_rate = p.ub_to_gm_bytes_per_cycle
        types = {c.type for c in info.cores}
        head_us = p.launch_overhead_us
        if types == {CoreType.AIC, CoreType.AIV}:  # a MIX kernel
            head_us += p.mix_launch_overhead_us
        self._head = head_us * 1e3 * p.clock_ghz

    def on_event(self, e) -> None:
        """Queue the event on its core; the launch's events are timed at its end (:meth:`_time_events`).

        A core's queue is a flat list of numbers, five per event, ``(kind, pipe index, a, b, x)``, so that
        queuing a launch allocates nothing the garbage collector tracks; ``x`` is -1 or the index in
        ``_side`` of what the record needs beside numbers:

        * ``_INSTR``: an instruction without a unit flag; ``a``, ``b`` its duration and landing cycles (they
          do not depend on when it starts and are computed here, as are the GM bytes and cube MACs every
          instruction adds), ``x`` -> (GM buffer ids written, the event if ``record``);
        * ``_READ``: the same for an MTE2 read from GM, which the L2 model times when it starts: ``a`` its
          fixed cycles, ``b`` the length of its reads (:func:`_reads`), which follow the record;
        * ``_SET`` / ``_WAIT``: a ``SetFlag`` (``a`` its seq) / ``WaitFlag`` (``a`` the seq of its set), ``x``
          -> the event if ``record``;
        * ``_BARRIER``: a ``PipeBarrier`` of one pipe;
        * ``_EVENT``: any other event, ``x`` -> the event (a core's start is dropped: the pipe model ignores
          it);
        * ``_MACRO``: a replayed template compiled into one function (:mod:`~catlass_py.analysis.cost_records`),
          ``a`` its index in ``_macros``, ``b`` the number of flag sequence numbers that follow the record."""
        q = self._core_queue(e.core)
        kind = e.__class__
        if kind is SetFlagEvent:
            q.extend((_SET, _SRC[e.event], e.seq, 0, self._keep(e) if self.record else -1))
        elif kind is WaitFlagEvent:
            q.extend((_WAIT, _DST[e.event], e.source_seq, 0, self._keep(e) if self.record else -1))
        elif kind is InstructionEvent and not e.unit_flag:
            pipe = e.pipe
            for a in e.gm_reads:
                self._gm_read += a.length * a.count
            ids = ()
            if e.gm_writes:
                for a in e.gm_writes:
                    self._gm_write += a.length * a.count
                ids = tuple(a.buffer_id for a in e.gm_writes)
            x = self._keep((ids, e if self.record else None)) if ids or self.record else -1
            if pipe is Pipe.MTE2 and e.gm_reads:  # the L2 model times the reads when they start
                reads = _reads(e.gm_reads)
                q.extend((_READ, _MTE2, self._mte2_fixed(e), len(reads), x))
                q.extend(reads)
            else:
                dur, lat = self._duration(e, pipe)
                q.extend((_INSTR, PIPE_INDEX[pipe], dur, lat, x))
        elif kind is PipeBarrierEvent and e.pipe is not Pipe.ALL:
            q.extend((_BARRIER, PIPE_INDEX[e.pipe], 0, 0, -1))
        elif kind is not CoreStartEvent:  # the pipe model ignores a core's start
            q.extend((_EVENT, 0, 0, 0, self._keep(e)))

    # -- tile templates (ObserverBus.capture_begin / capture_end / replay) --------------------------------------
    accepts_templates = True

    def _core_queue(self, core: CoreId) -> list:
        """:meth:`_queue` of ``core``, kept for the next call: events come in runs of one core, so this mostly skips
        hashing the CoreId."""
        if core is not self._last_core:
            self._last_core, self._last_queue = core, self._queue(core)
        return self._last_queue

    def _queue(self, core: CoreId) -> list:
        """``core``'s record queue (by the id of the launch's own CoreId; an equal CoreId that is not that object,
        as in a hand-built event, through the pipe model's orders)."""
        q = self._queues.get(id(core))
        return q if q is not None else self._queues[id(self.orders[core].core)]

    def template_flag(self, core: CoreId, event: HardEvent, seq: int, is_set: bool) -> None:
        """A ``SetFlag`` (``seq`` its number) or ``WaitFlag`` (``seq`` the number of the set it consumed) of
        ``core``, queued as :meth:`on_event` queues its event (``ObserverBus.flag_sinks``; never with ``record``,
        whose trace names the flags' ids)."""
        q = self._core_queue(core)
        if is_set:
            q.extend((_SET, _SRC[event], seq, 0, -1))
        else:
            q.extend((_WAIT, _DST[event], seq, 0, -1))

    def template_begin(self, core: CoreId) -> None:
        self._captures[id(core)] = (len(self._queue(core)), self._macs, self._gm_read, self._gm_write)

    def template_end(self, core: CoreId, key, gm=None) -> bool:
        """Keep the records queued for ``core`` since :meth:`template_begin` as the template ``key``: possible when
        they are instructions timed on arrival (``_INSTR``), flags, one-pipe barriers and unit-flag instructions
        that touch no GM (``_EVENT``: the pipe model times their event when the launch ends, and a repeat queues
        the same event again, which only the trace, not kept by a model that takes templates, would tell apart),
        whose numbers depend on nothing but the flag sequence numbers, and GM reads (``_READ``) and writes.

        A template with GM accesses needs ``gm``: the GM regions they lie in, as ``(buffer id, byte offset)`` pairs
        of distinct buffers (:meth:`ObserverBus.capture_end`). Each access is kept as (region, bytes past the
        region's start), so that a replay given the regions of its own tile (same geometry, other addresses) reads
        and writes those; the L2 model then times the replay's reads at their own addresses.

        A template without GM accesses (an L1 tile's loads and Mmads) is also compiled into one function
        (:mod:`~catlass_py.analysis.cost_records`); its replays queue one ``_MACRO`` record."""
        start, macs, gm_read, gm_write = self._captures.pop(id(core))
        records = self._queue(core)[start:]
        regions = None
        if gm is not None:
            regions = {bid: i for i, (bid, _off) in enumerate(gm)}
            if len(regions) != len(gm):  # two regions of one buffer: an access could not tell which it lies in
                return False
        slots, reads, writes = [], [], []
        side = self._side
        j, n = 0, len(records)
        while j < n:
            code, x, width = records[j], records[j + 4], 5
            if code == _EVENT:
                e = side[x]
                if e.__class__ is not InstructionEvent or e.gm_reads or e.gm_writes:
                    return False
            elif code == _READ:
                if regions is None:
                    return False
                for r in range(j + 5, j + 5 + records[j + 3], 5):
                    i = regions.get(records[r])
                    if i is None:
                        return False
                    reads.append((r, i, records[r + 1] - gm[i][1]))
                width += records[j + 3]
            elif code == _SET or code == _WAIT:
                slots.append(j + 2)
            if code != _EVENT and x != -1:  # GM written (the record keeps the buffer ids)
                ids, e = side[x]
                if regions is None or e is not None or any(b not in regions for b in ids):
                    return False
                writes.append((j + 4, tuple(regions[b] for b in ids)))
            j += width
        macs = self._macs - macs
        macro = -1
        if not reads and not writes:
            units = self._unit_records(records)
            if units is not None and compilable(records, units):
                macro = len(self._macros)
                self._macros.append(compile_template(records, {j: u[:5] for j, u in units.items()}))
                macs += sum(u[5] for u in units.values())
        self._templates[key] = (records, slots, macs, self._gm_read - gm_read, self._gm_write - gm_write, reads,
                                writes, macro)
        return True

    def _unit_records(self, records: list) -> dict | None:
        """The unit-flag instructions (``_EVENT`` records) of a template's ``records`` by position, as
        :func:`~catlass_py.analysis.cost_records.compile_template` takes them, each with the cube MACs its timing
        counts: ``(pipe index, L0C accesses, whether it publishes, duration, landing cycles, MACs)``; None when one
        is not a Mmad or Fixpipe, or when a subclass times instructions its own way."""
        units: dict = {}
        cls = type(self)
        if (cls._instruction_at is not PipeOrder._instruction_at or cls.instruction is not CostModel.instruction
                or cls.join is not CostModel.join or cls.publish is not CostModel.publish):
            return None if _EVENT in records[::5] else units
        side = self._side
        j, n = 0, len(records)
        while j < n:
            code = records[j]
            if code == _EVENT:
                e = side[records[j + 4]]
                pipe = e.pipe
                if pipe is Pipe.M:
                    accs, publishes = _l0c(e.local_writes), e.unit_flag == UNIT_FLAG_LAST
                elif pipe is Pipe.FIX:
                    accs, publishes = _l0c(e.local_reads), True
                else:
                    return None
                macs = self._macs
                dur, lat = self._duration(e, pipe)  # neither rule depends on the start; the M rule counts MACs
                units[j] = (PIPE_INDEX[pipe], accs, publishes, dur, lat, self._macs - macs)
                self._macs = macs
            j += 5 + (records[j + 3] if code == _READ else 0)
        return units

    def template_replay(self, core: CoreId, key, seqs: list[int], times: int = 1, gm=None) -> None:
        """The template ``key`` again on ``core`` (:meth:`ObserverBus.replay`). Its unit-flag instructions, if any,
        are the capturing core's events, queued as they are: the timing loop applies each to the core whose queue
        holds it (:meth:`_time_events`)."""
        records, slots, macs, gm_read, gm_write, reads, writes, macro = self._templates[key]
        if times != 1 and (slots or reads or writes):
            raise KernelError(f"CostModel: template {key!r} holds flags or GM accesses; it repeats one at a time")
        q = self._core_queue(core)
        if macro >= 0:  # one _MACRO record and the replay's flag sequence numbers (cost_records)
            for _ in range(times):
                q.extend((_MACRO, macro, len(seqs), 0, -1))
                q.extend(seqs)
        else:
            if slots or reads or writes:
                records = records.copy()
                for j, seq in zip(slots, seqs):
                    records[j] = seq
                if reads or writes:
                    if gm is None:
                        raise KernelError(f"CostModel: template {key!r} accesses GM; its replay must name the GM "
                                          "regions")
                    for r, i, delta in reads:
                        records[r], off = gm[i]
                        records[r + 1] = off + delta
                    for j, regions in writes:
                        records[j] = self._keep((tuple(gm[i][0] for i in regions), None))
            q.extend(records if times == 1 else records * times)
        self._macs += macs * times
        self._gm_read += gm_read * times
        self._gm_write += gm_write * times

    def _keep(self, obj) -> int:
        """Put ``obj`` in the side list of the queued records; its index there."""
        side = self._side
        side.append(obj)
        return len(side) - 1

    def on_launch_end(self, info: LaunchInfo, error: BaseException | None) -> None:
        mark = len(self.intervals)
        self._time_events()
        if self.record and len(self.intervals) > mark + 1:  # timed in simulated-time order: back to event order
            order = sorted(range(mark, len(self.intervals)), key=lambda i: self.intervals[i][5])
            self.intervals[mark:] = [self.intervals[i] for i in order]
            self.landing[mark:] = [self.landing[i] for i in order]
        self.reports.append(self._build_report())
        self._timing = {}
        super().on_launch_end(info, error)

    def release(self) -> None:
        super().release()
        self._queues = {}
        self._side = []
        self._last_core = self._last_queue = None

    def _time_events(self) -> None:
        """Time the queued events core by core in simulated-time order: always the core that has got least far
        (the start of its latest instruction), until it passes the next one; a core whose ``CrossCoreWaitFlag``
        consumes a set not yet timed waits for it. The simulator runs one core at a time, so its event order
        is not the order in time; the L2 model needs the latter (the first read of some bytes in time is the
        one that misses).

        The records :meth:`on_event` queued for an instruction without a unit flag, a ``SetFlag``, a
        ``WaitFlag`` and a one-pipe ``PipeBarrier`` are timed here directly: what
        :meth:`PipeOrder._on_instruction`, ``_on_set``, ``_on_wait`` and ``_on_barrier`` followed by this
        class's :meth:`instruction`, :meth:`publish`, :meth:`join` and :meth:`barrier` do, as the same
        operations on the same values. Every other event takes the pipe model's route, an instruction (one with a
        unit flag) on the core whose queue holds it (:meth:`PipeOrder._instruction_at`). When the launch failed,
        a core may be left waiting for a set that never came: the rest of each core's events is then timed in
        turn, without waiting."""
        queues = [(t, q) for t, q in zip(self._timing.values(), self._queues.values()) if q]
        states = [st for st, q in zip(self.orders.values(), self._queues.values()) if q]
        side = self._side
        macros = self._macros
        self._queues = {k: [] for k in self._queues}
        self._side = []
        self._last_core = self._last_queue = None
        pos = [0] * len(queues)  # where each core's queue has got to
        route = self._route
        instruction_at = self._instruction_at
        xtokens = self._xtokens
        tokens = self._tokens
        gm_read_cycles = self._gm_read_cycles
        gm_latency = self.params.gm_latency_cycles
        pipes = PIPES
        record = self.record
        intervals, landing = self.intervals, self.landing
        event_sets, event_waits = self.event_sets, self.event_waits
        written = self._written
        sic = self.params.scalar_issue_cycles
        S = Pipe.S
        heappush, heappop = heapq.heappush, heapq.heappop
        heap = [(t.clock, i) for i, (t, _q) in enumerate(queues)]
        heapq.heapify(heap)
        parked: dict[int, list[int]] = {}
        # core -> (the clocks after each instruction of the compiled template it has timed, the one it stopped at):
        # the template is timed whole, and the core comes back at the clocks where the loop, timing its records one
        # by one, would have stopped and let the others go (cost_records), so the others time their records in the
        # same order
        inside: dict[int, tuple[tuple, int]] = {}
        draining = False
        while True:
            while heap:
                _clock, i = heappop(heap)
                t, q = queues[i]
                k, n = pos[i], len(q)
                limit = math.inf if draining else heap[0][0] if heap else math.inf
                if inside and i in inside:  # stopped inside a compiled template: the next stop in it, if any
                    clocks, j = inside.pop(i)
                    j = bisect_right(clocks, limit, j + 1)
                    if j < len(clocks):
                        if j < len(clocks) - 1:
                            inside[i] = (clocks, j)
                        heappush(heap, (clocks[j], i))
                        continue
                free, done, last_end, busy = t.free, t.done, t.last_end, t.busy
                while k < n:
                    code = q[k]
                    if code <= _READ:  # _INSTR, _READ: PipeOrder._on_instruction + instruction
                        pipe = pipes[q[k + 1]]
                        dur = q[k + 2]
                        lat = q[k + 3]
                        x = q[k + 4]
                        k += 5
                        issue = t.issue
                        f = free[pipe]
                        start = issue if issue > f else f
                        if start > t.clock:
                            t.clock = start
                        if code == _READ:  # dur holds the fixed cycles (_duration's MTE2 rule), lat the reads
                            dur = dur + gm_read_cycles(t.rates, q[k:k + lat], start)
                            k += lat
                            lat = gm_latency
                        if x >= 0:
                            ids, e = side[x]
                        busy_end = start + dur
                        free[pipe] = busy_end
                        last_end[pipe] = busy_end + lat
                        if busy_end + lat > done[pipe]:
                            done[pipe] = busy_end + lat
                        busy[pipe] += dur
                        if pipe is S:
                            t.issue = busy_end + lat
                        else:
                            t.issue = issue + sic
                        if x >= 0:
                            for b in ids:
                                written.add(b)
                            if record:
                                intervals.append((e.core, pipe.value, e.op, start, dur, e.seq, e.nbytes))
                                landing.append(lat)
                        if t.clock > limit:
                            heappush(heap, (t.clock, i))
                            break
                    elif code == _SET:  # PipeOrder._on_set + publish
                        pipe = pipes[q[k + 1]]
                        seq = q[k + 2]
                        x = q[k + 4]
                        k += 5
                        fire = t.issue
                        v = done[pipe]
                        if v > fire:
                            fire = v
                        v = free[pipe]
                        if v > fire:
                            fire = v
                        t.issue += sic
                        if record:
                            e = side[x]
                            event_sets[seq] = (e.core, e.event.name, e.event_id, fire)
                        tokens[seq] = fire
                    elif code == _WAIT:  # PipeOrder._on_wait + join
                        token = tokens.pop(q[k + 2], None)
                        if token is not None:
                            pipe = pipes[q[k + 1]]
                            if token > free[pipe]:
                                free[pipe] = token
                            if pipe is S and token > t.issue:
                                t.issue = token
                            t.issue += sic
                            if record:
                                e = side[q[k + 4]]
                                event_waits.append((e.core, e.event.name, e.event_id, free[pipe], e.source_seq))
                        k += 5
                    elif code == _BARRIER:  # PipeOrder._on_barrier + barrier
                        pipe = pipes[q[k + 1]]
                        k += 5
                        if done[pipe] > free[pipe]:
                            free[pipe] = done[pipe]
                    elif code == _MACRO:  # a compiled template: its records in one call (cost_records)
                        clocks = macros[q[k + 1]](t, q, k + 5, tokens, sic, states[i])
                        k += 5 + q[k + 2]
                        if t.clock > limit:  # where the records one by one would have let another core go
                            j = bisect_right(clocks, limit)
                            if j < len(clocks) - 1:
                                inside[i] = (clocks, j)
                            heappush(heap, (clocks[j], i))
                            break
                    else:  # _EVENT: the pipe model's route
                        e = side[q[k + 4]]
                        kind = e.__class__
                        if kind is CrossCoreWaitEvent and not draining:
                            missing = next((s for s in e.sources if s not in xtokens), None)
                            if missing is not None:
                                parked.setdefault(missing, []).append(i)
                                break
                        k += 5
                        if kind is InstructionEvent:  # on this queue's core (a replayed template names another)
                            instruction_at(states[i], e)
                        else:
                            route.get(kind, _skip)(e)
                        if kind is CrossCoreSetEvent:
                            for j in parked.pop(e.seq, ()):
                                heappush(heap, (queues[j][0].clock, j))
                        if t.clock > limit:
                            heappush(heap, (t.clock, i))
                            break
                pos[i] = k
            if draining:
                break
            # A wait whose set never came (the launch failed): time what is left of each core in turn.
            draining = True
            parked = {}
            heap = [(0, i) for i, (_t, q) in enumerate(queues) if pos[i] < len(q)]

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
        free = t.free[pipe]
        start = t.issue if t.issue > free else free
        if start > t.clock:
            t.clock = start
        dur, lat = self._duration(e, pipe, start)
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
            self._written.add(a.buffer_id)
        if self.record:
            self.intervals.append((e.core, pipe.value, e.op, start, dur, e.seq, e.nbytes))
            self.landing.append(lat)

    def _duration(self, e: InstructionEvent, pipe: Pipe, start: float = 0.0) -> tuple[float, float]:
        """(cycles the pipe is occupied, extra cycles until the data has landed); ``start`` is when the
        instruction starts (the L2 model orders reads of the same bytes by it)."""
        p = self.params
        nbytes = e.nbytes
        # the pipes by how many instructions a launch issues on them; only some rules read ``info``
        if pipe is Pipe.MTE1:
            rate = p.l1_to_l0a_bytes_per_cycle if "L0A" in e.op else p.l1_to_l0b_bytes_per_cycle
            return p.mte_overhead_cycles + nbytes / rate, 0.0
        if pipe is Pipe.S:
            return (p.scalar_gm_read_cycles if e.gm_reads or e.gm_writes else p.scalar_issue_cycles), 0.0
        info = e.info if isinstance(e.info, dict) else {}
        if pipe is Pipe.M:
            m, n, k = info.get("m"), info.get("n"), info.get("k")
            dtype = info.get("dtype")
            macs_pc = self._macs_per_cycle.get(dtype)
            if macs_pc is None:
                macs_pc = self._macs_per_cycle[dtype] = p.macs_per_cycle(dtype)
            if m is not None and n is not None and k is not None:
                k0 = max(1, macs_pc // 256)
                fractals = math.ceil(m / 16) * math.ceil(n / 16) * math.ceil(k / k0)
                self._macs += m * n * k
                return p.cube_overhead_cycles + fractals, 0.0
            self._macs += e.flops // 2
            return p.cube_overhead_cycles + e.flops / 2 / macs_pc, 0.0
        if pipe is Pipe.MTE2:
            fixed = self._mte2_fixed(e)
            if not e.gm_reads:  # an on-chip move on MTE2 (or a hand-built event): bytes at the miss rate
                return fixed + nbytes / self._read_rate[(e.core.type, False)], 0.0
            return fixed + self._gm_read_cycles(self._rates[e.core.type], _reads(e.gm_reads), start), \
                p.gm_latency_cycles
        if pipe is Pipe.V:
            src, dst = info.get("src"), info.get("dst")
            if src in _DTYPE_BITS and dst in _DTYPE_BITS and e.flops:
                nbytes = e.flops * max(_DTYPE_BITS[src], _DTYPE_BITS[dst]) // 8
            return p.vector_overhead_cycles + math.ceil(nbytes / p.vector_bytes_per_cycle), 0.0
        if pipe is Pipe.FIX:
            if e.op == "AtomicAdd":  # the add of an atomic store happens in L2; its Fixpipe moved the bytes
                return 0.0, (p.gm_latency_cycles if e.gm_writes else 0.0)
            m, n = info.get("m"), info.get("n")
            l0c_bytes = 4 * m * n if m is not None and n is not None else nbytes
            cycles = max(l0c_bytes / p.l0c_read_bytes_per_cycle, nbytes / self._gm_write_rate)
            return p.mte_overhead_cycles + cycles, (p.gm_latency_cycles if e.gm_writes else 0.0)
        if pipe is Pipe.MTE3:
            lat = p.gm_latency_cycles if e.gm_writes else 0.0
            return p.mte_overhead_cycles + nbytes / self._ub_to_gm_rate, lat
        return p.mte_overhead_cycles + nbytes / p.l1_to_l0b_bytes_per_cycle, 0.0

    def _mte2_fixed(self, e: InstructionEvent) -> int:
        """The fixed MTE2 cycles of a transfer: ``mte_overhead_cycles`` per DMA it issues."""
        info = e.info if isinstance(e.info, dict) else {}
        return self.params.mte_overhead_cycles * (info.get("dmas", 1) or 1)

    def _gm_read_cycles(self, rates: tuple[float, float], reads, start: float) -> float:
        """MTE2 cycles of the GM reads ``reads`` (:func:`_reads`, or a slice of a queue holding them) starting at
        ``start`` on a core whose (L2 hit, L2 miss) read rates are ``rates``: ``gm_run_cycles`` per contiguous run,
        the bytes of L2 hits at the core's L2 rate, the whole HBM granules of misses at the core's HBM rate; every
        read also queues for the L2 all cores share (first come first served), and a read that fetches from HBM
        gets 1/n of the HBM's bandwidth (``gm_bandwidth`` and ``hbm_run_cycles`` per run; n the fetches in flight
        at ``start``, itself included); the transfer ends when the core, the L2 and the HBM share are done with
        it."""
        p = self.params
        hit_bytes = miss_bytes = fetched = 0
        hit_runs = miss_runs = fetch_runs = 0
        hit_rate, miss_rate = rates
        for j in range(0, len(reads), 5):
            r = tuple(reads[j:j + 5])
            n = r[2] * r[4]
            if n <= 0:
                continue
            geometry = self._geometry_cache.get(r)
            if geometry is None:
                geometry = self._geometry_cache[r] = _geometry(r, p.hbm_access_bytes)
            runs, granule_bytes, key = geometry
            state = self._l2_lookup(key, r[0], granule_bytes, start, granule_bytes / miss_rate)
            if state == _HIT:
                hit_bytes += n
                hit_runs += runs
            else:
                miss_bytes += granule_bytes
                miss_runs += runs
                if state == _MISS:
                    fetched += granule_bytes
                    fetch_runs += runs
        self._l2_hit_bytes += hit_bytes
        cycles = hit_bytes / hit_rate + miss_bytes / miss_rate \
            + (hit_runs + miss_runs) * p.gm_run_cycles
        # Every read goes through L2, whose bandwidth all cores share; a miss also through HBM.
        l2_start = start if start > self._l2_free else self._l2_free
        self._l2_free = l2_start + (hit_bytes + miss_bytes) / self._l2_rate
        if self._l2_free - start > cycles:
            cycles = self._l2_free - start
        if fetched:  # the HBM: this miss gets 1/n of it, n the misses in flight when it starts (its own included)
            self._hbm_read += fetched
            fetching = self._hbm_active
            while fetching and fetching[0] <= start:
                heapq.heappop(fetching)
            share = (fetched / self._hbm_rate + fetch_runs * p.hbm_run_cycles) * (len(fetching) + 1)
            if share > cycles:
                cycles = share
            heapq.heappush(fetching, start + cycles)
        return cycles

    def _l2_lookup(self, key, buffer_id: int, n: int, t: float, fetch: float) -> int:
        """Where a read of the granules ``key`` (``n`` bytes of buffer ``buffer_id``) starting at ``t`` finds its
        bytes: ``_HIT`` (L2), ``_MISS`` (HBM; the granules enter L2) or ``_REFETCH`` (it waits for HBM like a miss,
        but another core's fetch of the same granules already counted the HBM traffic). A read that starts after,
        or less than its own fetch time ``fetch`` before, the recorded first fetch of the same granules hits (it
        is served by that fetch); one that starts earlier than that was in fact the first: it pays the miss and
        becomes the recorded fetch."""
        size = self.params.l2_size_bytes
        if size <= 0:
            return _MISS
        if buffer_id in self._written:
            return _HIT
        l2 = self._l2
        entry = l2.get(key)
        if entry is not None:
            l2.move_to_end(key)
            if t + fetch >= entry[0]:
                return _HIT
            l2[key] = (t, entry[1])
            return _REFETCH
        l2[key] = (t, n)
        self._l2_bytes += n
        while self._l2_bytes > size and l2:
            _key, (_t, old) = l2.popitem(last=False)
            self._l2_bytes -= old
        return _MISS

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
        floor = self._hbm_read / (p.gm_bandwidth_gbps / p.clock_ghz)
        head = getattr(self, "_head", 0.0)
        cycles = head + max(timeline, floor)
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
            launch_overhead_cycles=head, l2_hit_bytes=self._l2_hit_bytes, hbm_read_bytes=self._hbm_read,
            busy_cycles=busy_cycles, core_cycles=core_cycles,
        )


_HIT, _MISS, _REFETCH = 0, 1, 2

_SRC = {ev: PIPE_INDEX[ev.src] for ev in HardEvent}
_DST = {ev: PIPE_INDEX[ev.dst] for ev in HardEvent}
_MTE2 = PIPE_INDEX[Pipe.MTE2]


def _skip(e) -> None:
    return None


def _reads(accesses) -> tuple[int, ...]:
    """GM access records as (buffer id, start, length, stride, count) one after the other: what the L2 model uses
    of them, in numbers (nothing for the garbage collector to track)."""
    return tuple(v for a in accesses for v in (a.buffer_id, a.start, a.length, a.stride, a.count))


def _geometry(r, granule: int) -> tuple[int, int, tuple]:
    """(contiguous runs, bytes of the ``granule``-aligned granules they touch, the L2 key of those granules) of a
    GM read (:func:`_reads`). Two reads whose runs cover the same granules (e.g. the two halves of 512-byte
    granules that neighbouring tiles read) have the same key."""
    buffer_id, start, length, stride, count = r
    first = start // granule * granule
    if count <= 1 or length >= stride:  # one contiguous range
        total = length * count if count > 1 else length
        granules = _granules(start, total, granule)
        return 1, granules * granule, (buffer_id, first, granules, 0, 1)
    period = granule // math.gcd(stride % granule, granule) if stride % granule else 1
    per_period = sum(_granules(start + j * stride, length, granule) for j in range(min(period, count)))
    full, rest = divmod(count, period)
    total = full * per_period + sum(_granules(start + j * stride, length, granule) for j in range(rest))
    return count, total * granule, (buffer_id, first, _granules(start, length, granule), stride, count)


def _granules(start: int, length: int, granule: int) -> int:
    return (start + length - 1) // granule - start // granule + 1 if length > 0 else 0


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
        launch_overhead_cycles=sum(r.launch_overhead_cycles for r in reports),
        l2_hit_bytes=sum(r.l2_hit_bytes for r in reports), hbm_read_bytes=sum(r.hbm_read_bytes for r in reports),
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
