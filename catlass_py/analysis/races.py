"""Race detector: happens-before over cross-core flags, checked on every global-memory access.

There is no CATLASS counterpart; on hardware this is ``msSanitizer``'s race check, which needs a device.

Happens-before is tracked with vector clocks, one component per core of the launch:

===========================  ===============================================================================
event                        effect
===========================  ===============================================================================
launch start                 every core's clock is 1 in its own component, 0 elsewhere
cross-core set (seq s)       the setter's clock is published under s, then its own component is incremented
cross-core wait              the waiter's clock becomes the component-wise max of itself and every clock
                             published by the sets it consumed (``CrossCoreWaitEvent.sources``)
GM access (read or write)    recorded as (core, own clock component = epoch, byte ranges); checked against
                             the earlier accesses of other cores to the same buffer
===========================  ===============================================================================

An earlier access by core d at epoch e happens before the current access of core c iff ``e <= clock_c[d]``
(program order covers same-core pairs). Two accesses from different cores to overlapping bytes, at least one a
write, with no such order, are a race: :class:`~catlass_py.errors.RaceError` names both cores, both
instructions (op, event seq, the kernel's last ``ctx.mark`` on that core), the buffer and the byte range.

Accesses are indexed per buffer in pages of ``page_bytes``; a record that a later access of the same kind (or
a write) covers and follows in happens-before order is dropped, which keeps the history short without losing
any race. Buffers the launch parameters hold as read-only cannot race and are skipped. At the end of a launch
the launcher hands over the flag sets nobody consumed (:meth:`RaceDetector.finish`): on hardware they would
corrupt the next operator.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from catlass_py.arch.events import (
    CoreId,
    CrossCoreSetEvent,
    CrossCoreWaitEvent,
    MemAccess,
    InstructionEvent,
    LaunchInfo,
    MarkerEvent,
    Observer,
)
from catlass_py.errors import RaceError


class UnpairedFlagWarning(UserWarning):
    """Flag sets were never consumed by a wait before the launch ended."""


@dataclass(frozen=True)
class RaceAccess:
    """One side of a race: who touched which bytes with which instruction, and where in the kernel."""

    core: CoreId
    kind: str  # 'read' or 'write'
    op: str
    seq: int
    access: MemAccess
    context: str = ""

    def describe(self) -> str:
        where = f" (last mark on that core: {self.context})" if self.context else ""
        return f"{self.kind} by {self.core.name}: {self.op} (event #{self.seq}) {self.access}{where}"


@dataclass(frozen=True)
class UnpairedFlag:
    """Sets of one flag left without a matching wait when the launch ended."""

    core: CoreId
    flag: str  # 'cross-core flag 3' or 'MTE2_MTE1 event 0'
    count: int

    def __str__(self) -> str:
        return f"{self.core.name}: {self.count} unconsumed set(s) of {self.flag}"


class _Rec:
    __slots__ = ("core", "epoch", "write", "acc", "seq", "op", "ctx", "lo", "hi", "dense")

    def __init__(self, core, epoch, write, acc: MemAccess, seq, op, ctx):
        self.core = core
        self.epoch = epoch
        self.write = write
        self.acc = acc
        self.seq = seq
        self.op = op
        self.ctx = ctx
        self.lo = acc.start
        self.hi = acc.end
        self.dense = acc.count <= 1 or acc.length >= acc.stride


def _covers(new: _Rec, old: _Rec) -> bool:
    """True when every byte of ``old`` is also a byte of ``new`` (checked for the common shapes only)."""
    if old.lo < new.lo or old.hi > new.hi:
        return False
    if new.dense:
        return True
    a, b = new.acc, old.acc
    return (b.length <= a.length and b.stride == a.stride and (b.start - a.start) % a.stride + b.length <= a.length
            if b.count > 1 else (b.start - a.start) % a.stride + b.length <= a.length)


def overlap(a: MemAccess, b: MemAccess) -> tuple[int, int, int]:
    """(first byte, one past the last byte, number of bytes) that both accesses touch (0, 0, 0 if none)."""
    ia, ib = a.intervals(), b.intervals()
    if ia.size == 0 or ib.size == 0:
        return 0, 0, 0
    if len(ia) * len(ib) <= 1 << 20:
        lo = np.maximum(ia[:, None, 0], ib[None, :, 0])
        hi = np.minimum(ia[:, None, 1], ib[None, :, 1])
        mask = hi > lo
        if not mask.any():
            return 0, 0, 0
        return int(lo[mask].min()), int(hi[mask].max()), int((hi - lo)[mask].sum())
    # Very long strided accesses: pair each interval of a with the first interval of b ending after its start.
    idx = np.clip(np.searchsorted(ib[:, 1], ia[:, 0], side="right"), 0, len(ib) - 1)
    lo = np.maximum(ia[:, 0], ib[idx, 0])
    hi = np.minimum(ia[:, 1], ib[idx, 1])
    mask = hi > lo
    if not mask.any():
        return 0, 0, 0
    return int(lo[mask].min()), int(hi[mask].max()), int((hi - lo)[mask].sum())


class RaceDetector(Observer):
    """Observer that raises :class:`RaceError` at the first unordered conflicting pair of GM accesses.

    ``launch(..., detect_races=True)`` adds one; it can also be passed in ``observers`` directly (then
    nothing reports unconsumed flags unless :meth:`finish` is called). After a clean launch, :attr:`accesses`
    counts the accesses checked and :attr:`unpaired_flags` lists sets nobody consumed.
    """

    interests = frozenset({"instruction", "cross_core", "marker"})

    def __init__(self, *, page_bytes: int = 1 << 14, skip_read_only: bool = True):
        if page_bytes <= 0 or page_bytes & (page_bytes - 1):
            raise ValueError(f"page_bytes: expected a power of two, got {page_bytes}")
        self.shift = page_bytes.bit_length() - 1
        self.skip_read_only = skip_read_only
        self.accesses = 0
        self.unpaired_flags: list[UnpairedFlag] = []

    # -- lifecycle -------------------------------------------------------------------------------
    def on_launch_start(self, info: LaunchInfo) -> None:
        cores = info.cores
        n = len(cores)
        self._index = {c: i for i, c in enumerate(cores)}
        self._cores = cores
        self._clock: list[list[int]] = []
        for i in range(n):
            vc = [0] * n
            vc[i] = 1
            self._clock.append(vc)
        self._published: dict[int, list[int]] = {}
        self._context: list[str] = [""] * n
        self._reads: dict[int, dict[int, list[_Rec]]] = {}
        self._writes: dict[int, dict[int, list[_Rec]]] = {}
        self._read_only = _read_only_buffers(info.params) if self.skip_read_only else set()
        self.accesses = 0
        self.unpaired_flags = []

    def on_event(self, e) -> None:
        t = type(e)
        if t is InstructionEvent:
            if e.gm_reads or e.gm_writes:
                self._instruction(e)
        elif t is CrossCoreSetEvent:
            vc = self._clock[self._index[e.core]]
            self._published[e.seq] = vc[:]
            vc[self._index[e.core]] += 1
        elif t is CrossCoreWaitEvent:
            vc = self._clock[self._index[e.core]]
            for s in e.sources:
                pub = self._published.get(s)
                if pub is not None:
                    for j, v in enumerate(pub):
                        if v > vc[j]:
                            vc[j] = v
        elif t is MarkerEvent:
            self._context[self._index[e.core]] = _describe_marker(e)

    def finish(self, unconsumed_cross_core=(), unconsumed_intra_core=()) -> list[UnpairedFlag]:
        """Record flag sets left unconsumed at the end of a launch and warn about them (``UnpairedFlagWarning``).

        ``unconsumed_cross_core``: (core, flag id, count) as in ``LaunchResult.unconsumed_flags``;
        ``unconsumed_intra_core``: (core, HardEvent, event id, count)."""
        flags = [UnpairedFlag(c, f"cross-core flag {fid}", n) for c, fid, n in unconsumed_cross_core]
        flags += [UnpairedFlag(c, f"{ev.name} event {eid}", n) for c, ev, eid, n in unconsumed_intra_core]
        self.unpaired_flags = flags
        if flags:
            shown = "; ".join(str(f) for f in flags[:8]) + ("; ..." if len(flags) > 8 else "")
            warnings.warn(
                f"{len(flags)} flag(s) were set but never waited for when the launch ended (on hardware the "
                f"next operator would inherit them): {shown}", UnpairedFlagWarning, stacklevel=3)
        return flags

    # -- accesses --------------------------------------------------------------------------------
    def _instruction(self, e: InstructionEvent) -> None:
        ci = self._index[e.core]
        vc = self._clock[ci]
        epoch = vc[ci]
        ro = self._read_only
        for acc in e.gm_reads:
            if acc.buffer_id not in ro and acc.length and acc.count:
                self._access(e, ci, vc, epoch, acc, False)
        for acc in e.gm_writes:
            if acc.length and acc.count:
                self._access(e, ci, vc, epoch, acc, True)

    def _access(self, e, ci: int, vc: list[int], epoch: int, acc: MemAccess, write: bool) -> None:
        self.accesses += 1
        new = _Rec(ci, epoch, write, acc, e.seq, e.op, self._context[ci])
        shift = self.shift
        pages = range(new.lo >> shift, ((new.hi - 1) >> shift) + 1)
        bid = acc.buffer_id
        writes = self._writes.setdefault(bid, {})
        reads = self._reads.setdefault(bid, {})
        tables = (writes, reads) if write else (writes,)
        seen = set() if len(pages) > 1 else None
        for table in tables:
            for pg in pages:
                lst = table.get(pg)
                if not lst:
                    continue
                for old in lst:
                    if old.core == ci or old.epoch <= vc[old.core] or old.hi <= new.lo or new.hi <= old.lo:
                        continue
                    if seen is not None:
                        if id(old) in seen:
                            continue
                        seen.add(id(old))
                    if acc.overlaps(old.acc):
                        raise self._race(old, new)
        # Insert, dropping records the new one makes redundant (covered and ordered before it).
        mine = writes if write else reads
        prune = (writes, reads) if write else (reads,)
        for pg in pages:
            for table in prune:
                lst = table.get(pg)
                if lst:
                    keep = [o for o in lst if not ((o.core == ci or o.epoch <= vc[o.core]) and _covers(new, o))]
                    if len(keep) != len(lst):
                        table[pg] = keep
            mine.setdefault(pg, []).append(new)

    def _race(self, old: _Rec, new: _Rec) -> RaceError:
        first = RaceAccess(self._cores[old.core], "write" if old.write else "read", old.op, old.seq, old.acc, old.ctx)
        second = RaceAccess(self._cores[new.core], "write" if new.write else "read", new.op, new.seq, new.acc, new.ctx)
        lo, hi, nbytes = overlap(old.acc, new.acc)
        buf = new.acc.buffer
        msg = (
            f"data race on GM buffer {buf!r}, bytes [{lo}, {hi}) ({nbytes} byte(s) touched by both) between "
            f"{first.core.name} and {second.core.name}:\n"
            f"  first:  {first.describe()}\n"
            f"  second: {second.describe()}\n"
            f"no cross-core flag orders them: {second.core.name} never waited (directly or through other cores) "
            f"on a set {first.core.name} issued after its {first.kind}"
        )
        err = RaceError(msg)
        err.buffer = buf
        err.byte_range = (lo, hi)
        err.first = first
        err.second = second
        err.cores = (first.core, second.core)
        err.core = second.core  # the launcher keeps this message as is (it already names both cores)
        return err


def _describe_marker(e: MarkerEvent) -> str:
    if not e.data:
        return e.kind
    return e.kind + " {" + ", ".join(f"{k}={v}" for k, v in e.data.items()) + "}"


def _read_only_buffers(params: Any, depth: int = 3) -> set[int]:
    """Ids of read-only GlobalBuffers reachable from the launch parameters (dataclass fields, mappings,
    sequences), which no instruction can write and therefore cannot race."""
    from catlass_py.arch.memory import GlobalBuffer, GlobalTensor

    out: set[int] = set()
    stack = [(params, 0)]
    seen: set[int] = set()
    while stack:
        obj, d = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, GlobalTensor):
            obj = obj.buffer
        if isinstance(obj, GlobalBuffer):
            if obj.read_only:
                out.add(obj.id)
            continue
        if d >= depth:
            continue
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            stack.extend((getattr(obj, f.name, None), d + 1) for f in dataclasses.fields(obj))
        elif isinstance(obj, dict):
            stack.extend((v, d + 1) for v in obj.values())
        elif isinstance(obj, (list, tuple)):
            stack.extend((v, d + 1) for v in obj)
    return out
