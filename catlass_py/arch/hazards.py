"""Hazard detector: every pair of unordered conflicting accesses, between cores or between pipes of one core.

No CATLASS counterpart; on hardware this is ``msSanitizer``'s race check (inter-core and inter-pipe), which
needs a device. The order comes from :mod:`catlass_py.arch.pipe_order`; this module implements its
operations with vector clocks (one component per (core, pipe), as in the vector-clock race detector of JAX
Pallas' interpret mode) and keeps a history of accesses per memory:

==========================  ================================================================================
operation                   vector clocks
==========================  ================================================================================
launch start                every (core, pipe) clock is 0; each pipe's next epoch is 1
instruction on P, epoch e   its accesses are checked against the history, then recorded as (P, e); for an
                            in-order pipe, P's own component becomes e (later P work follows it)
dispatch S -> P             ``clock[P] = max(clock[P], clock[S])``
publish on P (a set)        a copy of ``clock[P]`` with P's own component at its last issued epoch
join token into P (a wait)  ``clock[P] = max(clock[P], token)``
``PipeBarrier<P>``          P's own component jumps to its last issued epoch
``PipeBarrier<PIPE_ALL>``   every pipe's clock becomes the maximum of all of them, own components complete
cross-core set on PIPE_ALL  publishes that maximum without changing the clocks
==========================  ================================================================================

An earlier access of component d at epoch e is ordered before an access on pipe P iff ``e <= clock[P][d]``.
Two accesses to overlapping bytes of the same memory (GM buffer, on-chip buffer or register), at least one a
write, that are not ordered, are a hazard: :class:`~catlass_py.errors.RaceError` names the memory, the bytes,
both instructions with their cores and pipes (and the kernel's last ``ctx.mark`` on each core) and the
synchronisation that would order them. On PIPE_V a later write after an earlier read of the same pipe is not a
hazard (operands are read at issue).

History: accesses are indexed per memory in pages of ``page_bytes``; a record that a later access of the same
kind (or a write) covers and follows in happens-before order is dropped, which keeps the history short without
losing any hazard. Global-memory buffers the launch parameters hold as read-only cannot conflict and are
skipped.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from catlass_py.arch.events import CoreId, CrossCoreSetEvent, CrossCoreWaitEvent, InstructionEvent, LaunchInfo, MemAccess
from catlass_py.arch.pipe_order import PIPE_INDEX, PIPES, UNORDERED_WITHIN_PIPE, CoreOrder, PipeOrder
from catlass_py.arch.pipes import HardEvent, Pipe
from catlass_py.errors import RaceError

_NP = len(PIPES)
_S = PIPE_INDEX[Pipe.S]


@dataclass(frozen=True)
class RaceAccess:
    """One side of a hazard: who touched which bytes with which instruction, and where in the kernel."""

    core: CoreId
    pipe: Pipe
    kind: str  # 'read' or 'write'
    op: str
    seq: int
    access: MemAccess
    context: str = ""

    def describe(self) -> str:
        where = f" (last mark on that core: {self.context})" if self.context else ""
        return f"{self.kind} by {self.core.name} on PIPE_{self.pipe}: {self.op} (event #{self.seq}) {self.access}{where}"


class _Rec:
    __slots__ = ("comp", "epoch", "write", "acc", "seq", "op", "ctx", "lo", "hi", "dense")

    def __init__(self, comp, epoch, write, acc: MemAccess, seq, op, ctx):
        self.comp = comp
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
    idx = np.clip(np.searchsorted(ib[:, 1], ia[:, 0], side="right"), 0, len(ib) - 1)
    lo = np.maximum(ia[:, 0], ib[idx, 0])
    hi = np.minimum(ia[:, 1], ib[idx, 1])
    mask = hi > lo
    if not mask.any():
        return 0, 0, 0
    return int(lo[mask].min()), int(hi[mask].max()), int((hi - lo)[mask].sum())


class _Clocks:
    """Vector clocks of one core: one int32 array per pipe, the next epoch per pipe, the S version."""

    __slots__ = ("vc", "cur", "base", "s_version", "seen_s", "context", "consumed")

    def __init__(self, n: int, base: int):
        self.vc = [np.zeros(n, np.int32) for _ in PIPES]
        self.cur = [1] * _NP
        self.base = base  # component index of this core's PIPES[0]
        self.s_version = 0
        self.seen_s = [0] * _NP
        self.context = ""
        self.consumed: set[int] = set()


class RaceDetector(PipeOrder):
    """Observer that raises :class:`RaceError` at the first unordered conflicting pair of accesses.

    ``launch(..., detect_races=True)`` adds one; it can also be passed in ``observers`` directly. After a
    clean launch :attr:`accesses` counts the accesses checked.
    """

    def __init__(self, *, page_bytes: int = 1 << 14, skip_read_only: bool = True):
        if page_bytes <= 0 or page_bytes & (page_bytes - 1):
            raise ValueError(f"page_bytes: expected a power of two, got {page_bytes}")
        self.shift = page_bytes.bit_length() - 1
        self.skip_read_only = skip_read_only
        self.accesses = 0

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self, info: LaunchInfo) -> None:
        n = len(info.cores) * _NP
        self._comp_owner: list[tuple[CoreId, Pipe]] = [(c, p) for c in info.cores for p in PIPES]
        for st in self.orders.values():
            st.data = _Clocks(n, st.index * _NP)
        self._reads: dict[int, dict[int, list[_Rec]]] = {}
        self._writes: dict[int, dict[int, list[_Rec]]] = {}
        self._read_only = _read_only_buffers(info.params) if self.skip_read_only else set()
        self._cross_sets: dict[CoreId, list[tuple[int, Pipe, int]]] = {c: [] for c in info.cores}
        self.accesses = 0

    def release(self) -> None:
        """Also drop the access history (:meth:`PipeOrder.release`); :attr:`accesses` stays."""
        self._reads = {}
        self._writes = {}
        self._cross_sets = {}
        self._comp_owner = []
        self._read_only = set()
        super().release()

    # -- order operations ------------------------------------------------------------------------
    def dispatch(self, st: CoreOrder, pipe: Pipe) -> None:
        c = st.data
        i = PIPE_INDEX[pipe]
        if c.seen_s[i] != c.s_version:
            c.seen_s[i] = c.s_version
            np.maximum(c.vc[i], c.vc[_S], out=c.vc[i])

    def publish(self, st: CoreOrder, pipe: Pipe, e) -> np.ndarray:
        c = st.data
        i = PIPE_INDEX[pipe]
        tok = c.vc[i].copy()
        tok[c.base + i] = c.cur[i] - 1
        if type(e) is CrossCoreSetEvent:
            self._cross_sets[st.core].append((e.seq, pipe, e.flag_id))
        return tok

    def join(self, st: CoreOrder, pipe: Pipe, token: np.ndarray, e) -> None:
        c = st.data
        i = PIPE_INDEX[pipe]
        np.maximum(c.vc[i], token, out=c.vc[i])
        if i == _S:
            c.s_version += 1
        if type(e) is CrossCoreWaitEvent:
            c.consumed.update(e.sources)

    def barrier(self, st: CoreOrder, pipe: Pipe, e) -> None:
        c = st.data
        i = PIPE_INDEX[pipe]
        c.vc[i][c.base + i] = c.cur[i] - 1

    def barrier_all(self, st: CoreOrder, e) -> np.ndarray:
        c = st.data
        joined = np.maximum.reduce(c.vc)
        joined[c.base:c.base + _NP] = np.maximum(joined[c.base:c.base + _NP], np.asarray(c.cur, np.int32) - 1)
        if type(e) is CrossCoreSetEvent:  # publishes every pipe's work; later work is not held back
            self._cross_sets[st.core].append((e.seq, Pipe.ALL, e.flag_id))
            return joined
        for i in range(_NP):
            c.vc[i][:] = joined
        c.s_version += 1
        return joined

    def marker(self, st: CoreOrder, e) -> None:
        st.data.context = _describe_marker(e)

    def instruction(self, st: CoreOrder, pipe: Pipe, e: InstructionEvent) -> None:
        c = st.data
        i = PIPE_INDEX[pipe]
        epoch = c.cur[i]
        c.cur[i] = epoch + 1
        comp = c.base + i
        if e.gm_reads or e.gm_writes or e.local_reads or e.local_writes:
            vc = c.vc[i]
            new: list[_Rec] = []
            ro = self._read_only
            for acc in e.gm_reads:
                if acc.buffer_id not in ro and acc.length and acc.count:
                    new.append(self._check(e, st, pipe, comp, vc, epoch, acc, False))
            for acc in e.local_reads:
                if acc.length and acc.count:
                    new.append(self._check(e, st, pipe, comp, vc, epoch, acc, False))
            for acc in e.gm_writes:
                if acc.length and acc.count:
                    new.append(self._check(e, st, pipe, comp, vc, epoch, acc, True))
            for acc in e.local_writes:
                if acc.length and acc.count:
                    new.append(self._check(e, st, pipe, comp, vc, epoch, acc, True))
            for rec in new:
                self._insert(rec, vc)
        if pipe not in UNORDERED_WITHIN_PIPE:
            c.vc[i][comp] = epoch
        if i == _S:
            c.s_version += 1

    # -- history ---------------------------------------------------------------------------------
    def _pages(self, rec: _Rec) -> range:
        shift = self.shift
        return range(rec.lo >> shift, ((rec.hi - 1) >> shift) + 1)

    def _check(self, e, st, pipe, comp, vc, epoch, acc: MemAccess, write: bool) -> _Rec:
        self.accesses += 1
        new = _Rec(comp, epoch, write, acc, e.seq, e.op, st.data.context)
        pages = self._pages(new)
        bid = acc.buffer_id
        tables = (self._writes.get(bid), self._reads.get(bid)) if write else (self._writes.get(bid),)
        seen = set() if len(pages) > 1 else None
        lo, hi = new.lo, new.hi
        for table in tables:
            if not table:
                continue
            for pg in pages:
                lst = table.get(pg)
                if not lst:
                    continue
                for old in lst:
                    if old.hi <= lo or hi <= old.lo or old.epoch <= vc[old.comp]:
                        continue
                    if old.comp == comp and not old.write:
                        continue  # a later write after an earlier read of the same pipe (WAR) is in order
                    if seen is not None:
                        if id(old) in seen:
                            continue
                        seen.add(id(old))
                    if acc.overlaps(old.acc):
                        raise self._race(old, new)
        return new

    def _insert(self, new: _Rec, vc) -> None:
        """Record ``new``, dropping records it covers and follows (they can no longer cause a hazard that
        ``new`` would not cause too)."""
        bid = new.acc.buffer_id
        writes = self._writes.setdefault(bid, {})
        reads = self._reads.setdefault(bid, {})
        mine = writes if new.write else reads
        prune = (writes, reads) if new.write else (reads,)
        for pg in self._pages(new):
            for table in prune:
                lst = table.get(pg)
                if lst:
                    # Sound: a later access unordered with ``o`` is unordered with ``new`` (o precedes new), and
                    # one of new's own pipe knows everything new's pipe knew, so it follows ``o`` too.
                    keep = [o for o in lst if not (o.epoch <= vc[o.comp] and _covers(new, o))]
                    if len(keep) != len(lst):
                        table[pg] = keep
            mine.setdefault(pg, []).append(new)

    # -- report ----------------------------------------------------------------------------------
    def _side(self, rec: _Rec) -> RaceAccess:
        core, pipe = self._comp_owner[rec.comp]
        return RaceAccess(core, pipe, "write" if rec.write else "read", rec.op, rec.seq, rec.acc, rec.ctx)

    def _race(self, old: _Rec, new: _Rec) -> RaceError:
        first, second = self._side(old), self._side(new)
        lo, hi, nbytes = overlap(old.acc, new.acc)
        acc = new.acc
        memory = f"GM buffer {acc.buffer!r}" if acc.space == "GM" else acc.buffer
        msg = (
            f"data race on {memory}, bytes [{lo}, {hi}) ({nbytes} byte(s) touched by both):\n"
            f"  first:  {first.describe()}\n"
            f"  second: {second.describe()}\n"
            f"{self._missing(first, second)}"
        )
        err = RaceError(msg)
        err.buffer = acc.buffer
        err.space = acc.space
        err.byte_range = (lo, hi)
        err.first = first
        err.second = second
        err.cores = (first.core, second.core)
        err.pipes = (first.pipe, second.pipe)
        err.missing = msg.rsplit("\n", 1)[-1]
        err.core = second.core  # the launcher keeps this message as is (it already names both cores)
        return err

    def _missing(self, first: RaceAccess, second: RaceAccess) -> str:
        """The synchronisation that would have ordered the pair."""
        p, q = first.pipe, second.pipe
        what = f"{first.op} (PIPE_{p}) and {second.op} (PIPE_{q})"
        if first.core == second.core:
            where = f"on {second.core.name.split(' (')[0]}"
            if p is q:
                return f"missing synchronisation: no PipeBarrier<PIPE_{p}> between {what} {where}"
            ev = _HARD_EVENTS.get((p, q))
            if ev is not None:
                return f"missing synchronisation: no SetFlag<{ev.name}>/WaitFlag<{ev.name}> between {what} {where}"
            return (f"missing synchronisation: nothing orders {what} {where} (there is no {p}_{q} event; "
                    f"PipeBarrier<PIPE_ALL> or a chain of events through another pipe)")
        hint = ""
        for seq, pipe, flag in self._cross_sets.get(first.core, ()):
            if seq > first.seq and seq in self.orders[second.core].data.consumed and pipe is not p and pipe is not Pipe.ALL:
                hint = (f"; {first.core.name} set cross-core flag {flag} on PIPE_{pipe} after its {first.kind} and "
                        f"{second.core.name} waited on it, but a set on PIPE_{pipe} does not publish PIPE_{p}'s work: "
                        f"issue the set on PIPE_{p} (CrossCoreSetFlag<mode, PIPE_{p}>)")
                break
        return (f"missing synchronisation: no cross-core flag orders {what}: {second.core.name} never waited "
                f"(directly or through other cores) on a set {first.core.name} issued on PIPE_{p} after its "
                f"{first.kind}{hint}")


_HARD_EVENTS = {(ev.src, ev.dst): ev for ev in HardEvent}


def _describe_marker(e) -> str:
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


__all__ = ["RaceAccess", "RaceDetector", "overlap"]
