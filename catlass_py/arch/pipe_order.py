"""The pipe model: which work of a simulated core is ordered before which (happens-before per core and pipe).

An AI core is not one instruction stream. Its scalar unit (PIPE_S) walks the program in order and dispatches
every other instruction to the queue of its pipe (MTE1, MTE2, MTE3, M, V, FIX); the queues run concurrently.
The simulator executes instructions eagerly in program order, which is one legal schedule; this module states
which orders the hardware guarantees, so that the hazard detector can flag every pair of accesses a real
device might run the other way round, and the cost model never starts work before what it depends on.

Rules (sources: Ascend C "PipeBarrier", "SetFlag/WaitFlag", "CrossCoreSetFlag/CrossCoreWaitFlag", "Mmad" and
"Fixpipe" pages of the Ascend C API reference; CATLASS ``include/catlass/arch/cross_core_sync.hpp`` and the
block/epilogue code that relies on them):

=============================  ===========================================================================
operation                      what it orders
=============================  ===========================================================================
dispatch                       every instruction starts after the scalar work issued before it: an
                               instruction on pipe P follows everything PIPE_S knows at that point
                               ("Scalar ... synchronisation is ensured by the hardware": S is in order
                               and blocking; GetValue/SetValue of GM run on S)
same pipe, MTE1/MTE2/MTE3/     in order: a later instruction of the pipe follows an earlier one (DMA
FIX/M/S                        queues and the cube accumulate in issue order; CATLASS accumulates K
                               steps into one L0C tile with no barrier)
same pipe, V                   issued in order but not completed in order: a V instruction that reads or
                               overwrites what an earlier V instruction wrote needs ``PipeBarrier<PIPE_V>``
                               in between (Ascend C PipeBarrier: "insert between instructions of the same
                               pipe that depend on each other", its example is Add -> Mul on PIPE_V);
                               a later write after an earlier read (WAR) is safe (operands are read at
                               issue). Ascend C's automatic synchronisation makes the compiler insert
                               these barriers (same page); CATLASS writes most of them and leaves a few
                               to the compiler, which the simulated components issue explicitly
``PipeBarrier<P>``             later instructions of P follow every earlier one of P
``PipeBarrier<PIPE_ALL>``      every later instruction of the core follows every earlier one
``SetFlag<X_Y>(id)``           issued on X: fires after X's earlier work (and what X is ordered after)
``WaitFlag<X_Y>(id)``          blocks pipe Y: Y's later work follows the matching set (FIFO per
                               (event, id), as the hardware counters pair them)
unit flag (Mmad/Fixpipe)       a Fixpipe with ``unitFlag`` follows the Mmad with ``unitFlag = 0b11`` that
                               last wrote the L0C bytes it reads; an Mmad with ``unitFlag`` follows the
                               unit-flag Fixpipe that last read the L0C bytes it writes (the unit flag
                               replaces the M_FIX / FIX_M events)
``CrossCoreSetFlag<m, P>``     issued on P: publishes the work of P issued before it (and what P is
                               ordered after), not the work of other pipes; ``PIPE_ALL`` publishes the
                               work of every pipe (later work is not held back)
``CrossCoreWaitFlag``          runs on S: every later instruction of the waiting core follows the sets
                               whose counts it consumed (``CrossCoreWaitEvent.sources``)
=============================  ===========================================================================

:class:`PipeOrder` turns the event stream of a launch into five operations on an abstract order:
``dispatch(core, P)`` (S -> P), ``publish(core, P)`` -> token, ``join(core, P, token)``,
``barrier(core, P)`` and ``barrier_all(core)``, plus ``instruction(core, P, event)`` in between. The hazard
detector (:mod:`catlass_py.arch.hazards`) implements them with vector clocks, the cost model
(:mod:`catlass_py.analysis.cost`) with times; both therefore follow the same happens-before graph.
"""

from __future__ import annotations

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
    MemAccess,
    Observer,
    PipeBarrierEvent,
    SetFlagEvent,
    WaitFlagEvent,
)
from catlass_py.arch.pipes import Pipe

PIPES = (Pipe.S, Pipe.V, Pipe.M, Pipe.MTE1, Pipe.MTE2, Pipe.MTE3, Pipe.FIX)
"""The pipes of a core in component order (``Pipe.ALL`` is not a pipe but a barrier/set target)."""

PIPE_INDEX = {p: i for i, p in enumerate(PIPES)}

UNORDERED_WITHIN_PIPE = frozenset({Pipe.V})
"""Pipes whose dependent instructions need ``PipeBarrier`` (issued in order, completed out of order)."""

UNIT_FLAG_LAST = 0b11
"""Mmad ``unitFlag`` value that closes an L0C tile (CATLASS: last K step of the block); 0b10 keeps it open."""


class CoreOrder:
    """Per-core state a :class:`PipeOrder` subclass keeps; ``unit_mmad`` / ``unit_fix`` hold the unit-flag
    publications (L0C accesses, token) of the last closing Mmads and unit-flag Fixpipes."""

    __slots__ = ("core", "index", "unit_mmad", "unit_fix", "data")

    def __init__(self, core: CoreId, index: int):
        self.core = core
        self.index = index
        self.unit_mmad: list[tuple[tuple[MemAccess, ...], Any]] = []
        self.unit_fix: list[tuple[tuple[MemAccess, ...], Any]] = []
        self.data: Any = None


def _l0c(accesses) -> tuple[MemAccess, ...]:
    return tuple(a for a in accesses if a.space == "L0C")


def _overlapping(entries, accesses) -> list:
    """The tokens of ``entries`` (one core's unit-flag publications) whose L0C accesses overlap ``accesses``. A core
    has one L0C, so byte ranges decide: an event replayed from a template another core captured names that core's
    L0C (``ObserverBus.replay``)."""
    return [tok for accs, tok in entries if any(a.overlaps(b, any_buffer=True) for a in accs for b in accesses)]


def _replace(entries: list, accesses: tuple, token) -> None:
    """Keep the newest publication per L0C range: drop entries the new accesses cover entirely."""
    entries[:] = [(accs, tok) for accs, tok in entries
                  if not all(any(_inside(a, b) for b in accesses) for a in accs)]
    entries.append((accesses, token))


def _inside(a: MemAccess, b: MemAccess) -> bool:
    """Whether ``b`` covers every byte of ``a`` (two L0C accesses of one core, see :func:`_overlapping`)."""
    return b.start <= a.start and a.end <= b.end and (b.count == 1 or b.length >= b.stride)


class PipeOrder(Observer):
    """Observer base that maps the events of a launch onto the ordering operations of the module docstring.

    Subclasses implement :meth:`dispatch`, :meth:`publish`, :meth:`join`, :meth:`barrier`,
    :meth:`barrier_all` and :meth:`instruction` (and may override :meth:`marker`, :meth:`core_end`,
    :meth:`start`). Tokens are whatever :meth:`publish` returns; the base class pairs them: an intra-core
    set's token goes to the wait that consumes it (``WaitFlagEvent.source_seq``), a cross-core set's token to
    every wait whose count it fed (``CrossCoreWaitEvent.sources``).
    """

    interests = frozenset({"instruction", "sync", "cross_core", "core", "marker"})

    # -- operations (subclasses) -----------------------------------------------------------------
    def start(self, info: LaunchInfo) -> None:
        """Called at launch start after the per-core states exist."""

    def dispatch(self, st: CoreOrder, pipe: Pipe) -> None:
        raise NotImplementedError

    def publish(self, st: CoreOrder, pipe: Pipe, e) -> Any:
        raise NotImplementedError

    def join(self, st: CoreOrder, pipe: Pipe, token, e) -> None:
        raise NotImplementedError

    def barrier(self, st: CoreOrder, pipe: Pipe, e) -> None:
        raise NotImplementedError

    def barrier_all(self, st: CoreOrder, e) -> Any:
        """``PipeBarrier<PIPE_ALL>``: order every later instruction of the core after every earlier one. For a
        ``CrossCoreSetFlag<mode, PIPE_ALL>`` (``e`` a :class:`CrossCoreSetEvent`): return a token of all the
        core's work so far, without holding later work back."""
        raise NotImplementedError

    def instruction(self, st: CoreOrder, pipe: Pipe, e: InstructionEvent) -> None:
        raise NotImplementedError

    def cross_wait(self, st: CoreOrder, tokens: list, e: CrossCoreWaitEvent) -> None:
        """A completed ``CrossCoreWaitFlag``: S joins every token it consumed."""
        for tok in tokens:
            self.join(st, Pipe.S, tok, e)

    def marker(self, st: CoreOrder, e: MarkerEvent) -> None:
        """A kernel annotation (``ctx.mark``)."""

    def core_end(self, st: CoreOrder, e: CoreEndEvent) -> None:
        """A core program returned."""

    # -- event routing ---------------------------------------------------------------------------
    def on_launch_start(self, info: LaunchInfo) -> None:
        self.orders: dict[CoreId, CoreOrder] = {c: CoreOrder(c, i) for i, c in enumerate(info.cores)}
        # The same state by the id of the launch's own CoreId objects, which the events carry: a lookup that
        # skips CoreId's (Python-level) hash on every event; any other CoreId falls back to ``orders``.
        self._by_id: dict[int, CoreOrder] = {id(c): st for c, st in self.orders.items()}
        self._tokens: dict[int, Any] = {}
        self._xtokens: dict[int, Any] = {}
        self._route = {
            InstructionEvent: self._on_instruction,
            SetFlagEvent: self._on_set,
            WaitFlagEvent: self._on_wait,
            PipeBarrierEvent: self._on_barrier,
            CrossCoreSetEvent: self._on_cross_set,
            CrossCoreWaitEvent: self._on_cross_wait,
            MarkerEvent: self._on_marker,
            CoreEndEvent: self._on_core_end,
            CoreStartEvent: _ignore,
        }
        self.start(info)

    def on_event(self, e) -> None:
        self._route.get(type(e), _ignore)(e)

    def on_launch_end(self, info: LaunchInfo, error: BaseException | None) -> None:
        """The launch ended: :meth:`release` its working state (a subclass that overrides this reads what it
        needs first, then calls it)."""
        self.release()

    def release(self) -> None:
        """Drop the launch's working state - the per-core orders, tokens no wait consumed and the event routes
        (bound methods of this observer, a reference cycle) - so that an observer kept after its launch (a
        LaunchResult's) holds only its findings, and the rest returns without the cyclic garbage collector."""
        self.orders = {}
        self._tokens = {}
        self._xtokens = {}
        self._route = {}

    def _on_instruction(self, e: InstructionEvent) -> None:
        self._instruction_at(self._by_id.get(id(e.core)) or self.orders[e.core], e)

    def _instruction_at(self, st: CoreOrder, e: InstructionEvent) -> None:
        """:meth:`_on_instruction` of ``e`` on the core of ``st`` (the core whose queue holds a replayed template's
        event, which names the capturing core)."""
        pipe = e.pipe
        if pipe is not Pipe.S:
            self.dispatch(st, pipe)
        uf = e.unit_flag
        if uf:
            if pipe is Pipe.FIX and st.unit_mmad:
                for tok in _overlapping(st.unit_mmad, _l0c(e.local_reads)):
                    self.join(st, pipe, tok, e)
            elif pipe is Pipe.M and st.unit_fix:
                for tok in _overlapping(st.unit_fix, _l0c(e.local_writes)):
                    self.join(st, pipe, tok, e)
        self.instruction(st, pipe, e)
        if uf:
            if pipe is Pipe.M and uf == UNIT_FLAG_LAST:
                accs = _l0c(e.local_writes)
                if accs:
                    _replace(st.unit_mmad, accs, self.publish(st, pipe, e))
            elif pipe is Pipe.FIX:
                accs = _l0c(e.local_reads)
                if accs:
                    _replace(st.unit_fix, accs, self.publish(st, pipe, e))

    def _on_set(self, e: SetFlagEvent) -> None:
        st = self._by_id.get(id(e.core)) or self.orders[e.core]
        src = e.event.src
        self.dispatch(st, src)
        self._tokens[e.seq] = self.publish(st, src, e)

    def _on_wait(self, e: WaitFlagEvent) -> None:
        st = self._by_id.get(id(e.core)) or self.orders[e.core]
        dst = e.event.dst
        self.dispatch(st, dst)
        tok = self._tokens.pop(e.source_seq, None)
        if tok is not None:
            self.join(st, dst, tok, e)

    def _on_barrier(self, e: PipeBarrierEvent) -> None:
        st = self._by_id.get(id(e.core)) or self.orders[e.core]
        if e.pipe is Pipe.ALL:
            self.barrier_all(st, e)
        else:
            self.dispatch(st, e.pipe)
            self.barrier(st, e.pipe, e)

    def _on_cross_set(self, e: CrossCoreSetEvent) -> None:
        st = self._by_id.get(id(e.core)) or self.orders[e.core]
        if e.pipe is Pipe.ALL:
            self._xtokens[e.seq] = self.barrier_all(st, e)
        else:
            if e.pipe is not Pipe.S:
                self.dispatch(st, e.pipe)
            self._xtokens[e.seq] = self.publish(st, e.pipe, e)

    def _on_cross_wait(self, e: CrossCoreWaitEvent) -> None:
        xt = self._xtokens
        st = self._by_id.get(id(e.core)) or self.orders[e.core]
        self.cross_wait(st, [xt[s] for s in e.sources if s in xt], e)

    def _on_marker(self, e: MarkerEvent) -> None:
        self.marker(self._by_id.get(id(e.core)) or self.orders[e.core], e)

    def _on_core_end(self, e: CoreEndEvent) -> None:
        self.core_end(self._by_id.get(id(e.core)) or self.orders[e.core], e)


def _ignore(e) -> None:
    return None


__all__ = ["PIPES", "PIPE_INDEX", "UNORDERED_WITHIN_PIPE", "UNIT_FLAG_LAST", "CoreOrder", "PipeOrder"]
