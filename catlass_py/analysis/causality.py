"""Timeline causality: on a costed launch, no instruction starts before an instruction it depends on finished.

No CATLASS counterpart; it checks the promise of the cost model (:mod:`catlass_py.analysis.cost`), which takes
its dependencies from the pipe model (:mod:`catlass_py.arch.pipe_order`): a timeline where a Fixpipe reads an
L0C tile before the Mmad producing it has run is not a schedule any device could follow, and its predicted time
is too short.

A dependency is a pair of accesses of two instructions to overlapping bytes of the same memory (GM buffer,
on-chip buffer or register), at least one a write. The pair is taken in simulation order: the simulator runs
every instruction eagerly in program order, and in a race-free launch (the hazard detector,
:class:`~catlass_py.arch.hazards.RaceDetector`, reports every pair no synchronisation orders) that order is one
the hardware may follow, so the earlier instruction of the pair is the one the later one waits for. The rule:

==========================================  ================================================================
pair (earlier i, later j)                   j must not start before
==========================================  ================================================================
any two instructions                        i finished: start + duration + the landing latency the cost
                                            model adds for a GM transfer (:attr:`CostModel.landing`)
same core, same in-order pipe (S, MTE1,     i started
MTE2, MTE3, M, FIX)
same core, PIPE_V, i reads and j writes     i started
==========================================  ================================================================

Why the start suffices within an in-order pipe: the pipe is a queue that runs its instructions one after the
other in issue order and each sees the effects of the ones before it (DMA queues complete in order, the cube
accumulates the K steps of a tile into L0C back to back: CATLASS puts no barrier between them), so the queue
itself orders the pair whatever the earlier instruction's landing latency; two Fixpipes writing the same GM
bytes land in issue order. PIPE_V completes out of order (``PipeBarrier<PIPE_V>`` between dependent
instructions), so its pairs need the end, except a later write after an earlier read: vector operands are read
at issue (the same exception as the hazard detector's).

Use: run the launch with a ``CostModel(record=True)`` and an :class:`AccessLog` among its observers, then
:func:`causality_violations` lists the pairs that break the rule (an empty list when the timeline is causal)::

    cost, log = CostModel(record=True), AccessLog()
    launch(kernel, params, block_dim, observers=(cost, log))
    assert not causality_violations(cost, log)

The check is exact over all pairs: per memory it keeps, in pages of ``page_bytes``, the accesses seen so far
and drops one only when a later access of the same core and pipe covers its bytes, conflicts with everything
it conflicts with, and starts and finishes no earlier (every bound the dropped one imposes, the later one
imposes too).
"""

from __future__ import annotations

from dataclasses import dataclass

from catlass_py.arch.events import CoreId, InstructionEvent, MemAccess, Observer
from catlass_py.arch.hazards import overlap
from catlass_py.arch.pipe_order import UNORDERED_WITHIN_PIPE
from catlass_py.arch.pipes import Pipe
from catlass_py.errors import ArgumentError

_EPS = 1e-6  # cycles: times are sums of the same float terms, this only absorbs their rounding


@dataclass(frozen=True)
class AccessRecord:
    """One instruction as :class:`AccessLog` saw it: everything it reads and writes, in any memory."""

    core: CoreId
    pipe: Pipe
    op: str
    seq: int
    reads: tuple[MemAccess, ...]
    writes: tuple[MemAccess, ...]


class AccessLog(Observer):
    """Observer that records every instruction's accesses (GM and local) in simulation order, for
    :func:`causality_violations`; :attr:`records` holds one :class:`AccessRecord` per instruction."""

    interests = frozenset({"instruction"})

    def __init__(self):
        self.records: list[AccessRecord] = []

    def on_event(self, e) -> None:
        if type(e) is InstructionEvent:
            self.records.append(AccessRecord(e.core, e.pipe, e.op, e.seq, e.gm_reads + e.local_reads,
                                             e.gm_writes + e.local_writes))


@dataclass(frozen=True)
class TimedAccess:
    """One side of a violation: the instruction, what it did to the bytes, and its times (cycles)."""

    core: CoreId
    pipe: Pipe
    op: str
    seq: int
    kind: str  # 'read' or 'write'
    access: MemAccess
    start: float
    end: float  # start + duration + landing latency

    def describe(self) -> str:
        return (f"{self.op} (event #{self.seq}, {self.core.short} PIPE_{self.pipe.value}) {self.kind}s {self.access}, "
                f"cycles {self.start:.1f}-{self.end:.1f}")


@dataclass(frozen=True)
class CausalityViolation:
    """A later instruction (``later``) that starts before the earlier one it depends on (``earlier``) finished
    (or, on the same in-order pipe, started): ``bound`` is the time it had to wait for."""

    memory: str
    byte_range: tuple[int, int]
    earlier: TimedAccess
    later: TimedAccess
    bound: float

    def describe(self) -> str:
        lo, hi = self.byte_range
        return (f"{self.memory} bytes [{lo}, {hi}): the later instruction starts at cycle {self.later.start:.1f}, "
                f"before cycle {self.bound:.1f}\n  earlier: {self.earlier.describe()}\n"
                f"  later:   {self.later.describe()}")

    __str__ = describe


class _Entry:
    __slots__ = ("key", "write", "acc", "lo", "hi", "dense", "start", "end", "in_order", "rec")

    def __init__(self, key, write, acc: MemAccess, start, end, in_order, rec):
        self.key = key
        self.write = write
        self.acc = acc
        self.lo = acc.start
        self.hi = acc.end
        self.dense = acc.count <= 1 or acc.length >= acc.stride
        self.start = start
        self.end = end
        self.in_order = in_order
        self.rec = rec


def _covers(new: _Entry, old: _Entry) -> bool:
    """True when every byte of ``old`` is a byte of ``new`` (decided for the common shapes, else False)."""
    if old.lo < new.lo or old.hi > new.hi:
        return False
    if new.dense:
        return True
    a, b = new.acc, old.acc
    if b.count > 1 and (b.stride != a.stride or b.length > a.length):
        return False
    return (b.start - a.start) % a.stride + b.length <= a.length


def _bound(old: _Entry, key, write: bool) -> float:
    """The time a later access (of component ``key``, a write or not) must not start before."""
    if old.key == key and (old.in_order or (write and not old.write)):
        return old.start
    return old.end


def causality_violations(cost, log: AccessLog, *, limit: int | None = 20,
                         page_bytes: int = 1 << 14) -> list[CausalityViolation]:
    """The dependent pairs of a costed launch whose later instruction starts too early (see the module
    docstring for the rule), in the order the later instructions ran, at most ``limit`` (None: all).

    ``cost`` is a ``CostModel(record=True)`` and ``log`` an :class:`AccessLog` that observed the same launches.
    """
    if not getattr(cost, "record", False):
        raise ArgumentError("cost: expected a CostModel(record=True)")
    intervals, landing, records = cost.intervals, cost.landing, log.records
    if len(intervals) != len(records):
        raise ArgumentError(f"cost and log observed different launches: {len(intervals)} timed instructions, "
                            f"{len(records)} recorded")
    if page_bytes <= 0 or page_bytes & (page_bytes - 1):
        raise ArgumentError(f"page_bytes: expected a power of two, got {page_bytes}")
    shift = page_bytes.bit_length() - 1
    history: dict[int, dict[int, list[_Entry]]] = {}  # buffer id -> page -> entries
    out: list[CausalityViolation] = []
    for rec, iv, lat in zip(records, intervals, landing):
        core, _pipe, _op, start, dur, seq, _n = iv
        if core != rec.core or seq != rec.seq:
            raise ArgumentError(f"cost and log disagree on the instruction order at event #{rec.seq} ({rec.op})")
        key = (core, rec.pipe)
        in_order = rec.pipe not in UNORDERED_WITHIN_PIPE
        end = start + dur + lat
        new: list[_Entry] = []
        for write, accs in ((False, rec.reads), (True, rec.writes)):
            for acc in accs:
                if not (acc.length and acc.count):
                    continue
                entry = _Entry(key, write, acc, start, end, in_order, rec)
                new.append(entry)
                pages = history.get(acc.buffer_id)
                if pages is None:
                    continue
                seen: set[int] = set()
                lo, hi = entry.lo, entry.hi
                for pg in range(lo >> shift, ((hi - 1) >> shift) + 1):
                    for old in pages.get(pg, ()):
                        if old.hi <= lo or hi <= old.lo or not (write or old.write) or id(old) in seen:
                            continue
                        seen.add(id(old))
                        bound = _bound(old, key, write)
                        if start + _EPS < bound and acc.overlaps(old.acc):
                            out.append(_violation(old, entry, bound))
                            if limit is not None and len(out) >= limit:
                                return out
        for entry in new:
            pages = history.setdefault(entry.acc.buffer_id, {})
            for pg in range(entry.lo >> shift, ((entry.hi - 1) >> shift) + 1):
                lst = pages.get(pg)
                if lst is None:
                    pages[pg] = [entry]
                    continue
                # Drop what ``entry`` makes redundant: same core and pipe, covered bytes, every later access
                # that conflicts with the old one conflicts with ``entry``, whose start and end are no earlier.
                keep = [o for o in lst if not (o.key == key and (entry.write or not o.write) and o.start <= start
                                               and o.end <= end and _covers(entry, o))]
                keep.append(entry)
                pages[pg] = keep
    return out


def _violation(old: _Entry, new: _Entry, bound: float) -> CausalityViolation:
    lo, hi, _n = overlap(old.acc, new.acc)
    acc = new.acc
    memory = f"GM buffer {acc.buffer!r}" if acc.space == "GM" else acc.buffer

    def side(e: _Entry) -> TimedAccess:
        r = e.rec
        return TimedAccess(r.core, r.pipe, r.op, r.seq, "write" if e.write else "read", e.acc, e.start, e.end)

    return CausalityViolation(memory, (lo, hi), side(old), side(new), bound)


__all__ = ["AccessLog", "AccessRecord", "CausalityViolation", "TimedAccess", "causality_violations"]
