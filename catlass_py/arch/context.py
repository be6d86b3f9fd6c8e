"""The per-core view a kernel program receives: indices, buffers and synchronisation.

Counterpart of the Ascend C kernel-side globals (``GetBlockIdx()``, ``GetSubBlockIdx()``, ``g_coreType``)
and instructions (``SetFlag``/``WaitFlag``/``PipeBarrier``, ``CrossCoreSetFlag``/``CrossCoreWaitFlag``,
CATLASS ``Arch::CrossCoreBarrier``). A kernel's ``aic(ctx, params)`` / ``aiv(ctx, params)`` gets one.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

import numpy as np

from catlass_py.arch.events import (
    CoreId,
    MemAccess,
    CrossCoreSetEvent,
    CrossCoreWaitEvent,
    InstructionEvent,
    MarkerEvent,
    ObserverBus,
    PipeBarrierEvent,
    SetFlagEvent,
    WaitFlagEvent,
)
from catlass_py.arch.flags import flag_id_of
from catlass_py.arch.memory import LocalArena, Resource, next_buffer_id
from catlass_py.arch.mutation import SyncEditor, swap
from catlass_py.arch.pipes import CoreType, HardEvent, Pipe
from catlass_py.errors import ArgumentError, ConfigError, DeadlockError

if TYPE_CHECKING:  # pragma: no cover
    from catlass_py.arch.launch import _Launch

EVENT_ID_COUNT = 8  # EVENT_ID0..EVENT_ID7


class CoreContext:
    """What one simulated core sees while it runs.

    =====================  ===========================================================================
    ``block_idx``          Ascend C ``GetBlockIdx()``: AIC ``[0, block_num)``, AIV ``ai_core*2 + sub``
    ``block_num``          ``GetBlockNum()``: AI cores in the launch (same on AIC and AIV)
    ``sub_block_idx/num``  ``GetSubBlockIdx()`` (0/1 on AIV, 0 on AIC) / ``GetSubBlockNum()`` (2 / 1)
    ``resource``           the core's on-chip buffers (CATLASS ``Arch::Resource``)
    =====================  ===========================================================================
    """

    def __init__(self, arch, core: CoreId, block_num: int, bus: ObserverBus, launch: "_Launch | None" = None,
                 *, poison: int = 0xFF, check_intra_core_flags: bool = True, editor: SyncEditor | None = None,
                 numerics: bool = True):
        self.arch = arch
        #: False on a timing-only launch (``LaunchParams(numerics=False)``): tile operations publish their
        #: events and check bounds but skip their data work
        self.numerics = numerics
        self.core = core
        self.block_num = block_num
        self.bus = bus
        self._launch = launch
        self._check_flags = check_intra_core_flags
        self._events: dict[tuple[HardEvent, int], deque] = {}
        self.resource = Resource(arch, self, poison=poison)
        self._poison = poison
        #: Special-purpose registers of this core by name (PTO ``QUANT_PRE``, ``FPC``, ``CTRL`` ...), as
        #: unsigned ints; written by instructions such as SET_QUANT_SCALAR and read by the fixpipe.
        self.registers: dict[str, int] = {}
        self._register_ids: dict[str, int] = {}
        #: records synchronisation call sites and applies a mutation (:mod:`catlass_py.arch.mutation`)
        self._editor = editor
        self._delayed: list = []
        self._watch: list = []  # [site record, pipes it orders] of recorded waits/barriers not yet followed
        self._instructions = 0  # instructions issued so far (counted while synchronisation sites are recorded)
        self._waits = 0  # waits issued so far (idem)
        self._touched: set = set()  # pipes that ran an instruction or took a wait (idem)
        self._extra_buffers: dict[str, LocalArena] = {}
        #: the tile layer's per-core cache (strided views of this core's buffers, proved in bounds once per
        #: tile geometry, and scratch arrays); dropped with the buffers when the launch ends
        self.tile_cache: dict = {}

    # -- identity --------------------------------------------------------------------------------
    @property
    def core_type(self) -> CoreType:
        return self.core.type

    @property
    def is_aic(self) -> bool:
        return self.core.type is CoreType.AIC

    @property
    def is_aiv(self) -> bool:
        return self.core.type is CoreType.AIV

    @property
    def block_idx(self) -> int:
        return self.core.block_idx

    @property
    def ai_core_idx(self) -> int:
        """Index of the AI core this core belongs to (``GetBlockIdx() / GetSubBlockNum()`` on AIV)."""
        return self.core.ai_core

    @property
    def sub_block_idx(self) -> int:
        return self.core.sub

    @property
    def sub_block_num(self) -> int:
        return self.arch.aiv_per_aic if self.is_aiv else 1

    @property
    def short(self) -> str:
        return self.core.short

    def __str__(self) -> str:
        return self.core.name

    def __repr__(self) -> str:
        return f"CoreContext({self.core.short}, block_num={self.block_num})"

    def extra_buffer(self, name: str, size: int) -> LocalArena:
        """An on-chip buffer beyond CATLASS's ``Resource`` (e.g. the Ascend 950 MX-scale buffers ``L0A_MX`` /
        ``L0B_MX`` of PTO), created poisoned on first use and kept for the life of the core."""
        arena = self._extra_buffers.get(name)
        if arena is None:
            arena = LocalArena(name, int(size), self, alignment=self.arch.local_alignment, poison=self._poison)
            self._extra_buffers[name] = arena
        elif arena.size != size:
            raise ArgumentError(f"{self}: buffer {name!r} already exists with {arena.size} bytes, not {size}")
        return arena

    def cube_l1(self) -> LocalArena:
        """The L1 of the AI core this core belongs to. On Ascend 950 a vector core writes UB tiles into it (PTO
        ``TMOV`` / ``TEXTRACT`` / ``TINSERT`` Vec -> Mat, the UB -> L1 data path); Atlas A2/A3 vector cores have
        no path to L1 (:class:`ConfigError`). On the AIC this is its own ``l1_buf``; an AIV in a launch gets its
        AIC's arena (one kept by the launch when the kernel has no AIC program); a standalone AIV gets an L1 of
        its own, created on first use."""
        if self.is_aic:
            return self.resource.l1_buf
        if self.arch.arch_code < 3510:
            raise ConfigError(f"{self}: vector cores of {self.arch.name} have no path to L1 (UB -> L1 moves exist "
                              "from Ascend 950 on)")
        if self._launch is not None:
            return self._launch.cube_l1(self.core.ai_core)
        return self.extra_buffer("L1", self.arch.buffer_sizes()["L1"])

    def tile_scratch(self):
        """The launch's scratch bytes for the tile layer's fast path (``arch.budget.tile_scratch_bytes``, counted
        in a run's memory budget): one buffer shared by the launch's cores - one core runs at a time, and a tile
        operation uses it only while it runs. A core outside a launch has its own."""
        owner = self._launch if self._launch is not None else self
        raw = getattr(owner, "_tile_scratch", None)
        if raw is None:
            from catlass_py.arch.budget import tile_scratch_bytes

            raw = np.empty(tile_scratch_bytes(self.arch), np.uint8)
            owner._tile_scratch = raw
        return raw

    def launch_memo(self) -> dict:
        """A dict shared by the launch's cores, for values every core derives alike from the launch's inputs
        (a kernel's per-group descriptors): it lives as long as the launch. A core outside a launch has its
        own."""
        owner = self._launch if self._launch is not None else self
        memo = getattr(owner, "_launch_memo", None)
        if memo is None:
            memo = owner._launch_memo = {}
        return memo

    def launch_shared(self, what, owner, make):
        """A value the launch's cores share for ``owner`` (an object every core holds, such as a kernel's params or
        an assembled block; ``what`` names the use): ``make()`` on the first call of the launch, kept in
        :meth:`launch_memo` keyed by ``owner``'s identity, with ``owner`` held so that its id is not reused."""
        memo = self.launch_memo()
        key = (what, id(owner))
        entry = memo.get(key)
        if entry is None or entry[0] is not owner:
            entry = memo[key] = (owner, make())
        return entry[1]

    # -- events ----------------------------------------------------------------------------------
    def emit(self, pipe: Pipe, op: str, *, nbytes: int = 0, flops: int = 0, gm_reads=(), gm_writes=(), info=None,
             local_reads=(), local_writes=(), unit_flag: int = 0) -> None:
        """Publish one instruction event on ``pipe`` with every byte it reads and writes: ``gm_*`` in global
        memory, ``local_*`` in this core's buffers and registers (:class:`~catlass_py.arch.events.MemAccess`
        from ``GlobalTensor.access``, ``LocalTensor.access``, :meth:`register_access`). Callers test
        ``ctx.bus.instructions`` first to skip building the arguments. An instruction without a pipe is a
        :class:`ConfigError`: the pipe model cannot order it."""
        bus = self.bus
        if bus.instructions:
            if pipe.__class__ is not Pipe or pipe is Pipe.ALL:
                raise ConfigError(f"{self}: instruction {op!r} declares pipe {pipe!r}; every instruction runs on one "
                                  "pipe (Pipe.S, V, M, MTE1, MTE2, MTE3 or FIX)")
            bus.publish(InstructionEvent(bus.next_seq(), self.core, pipe, op, nbytes, flops, tuple(gm_reads),
                                         tuple(gm_writes), info, tuple(local_reads), tuple(local_writes), unit_flag))
        if self._delayed:
            self._release_delayed(pipe)
        if self._editor is not None:
            self._instructions += 1
            self._touched.add(pipe)
            if self._watch:
                self._watch = [w for w in self._watch if not _orders(w, pipe)]

    def _release_delayed(self, pipe: Pipe) -> None:
        """Issue the waits a mutation delayed until after this instruction (one of their pipe, or any)."""
        due = [fn for p, fn in self._delayed if p is None or p is pipe]
        self._delayed = [(p, fn) for p, fn in self._delayed if not (p is None or p is pipe)]
        for fn in due:
            fn()

    def register_access(self, name: str) -> MemAccess:
        """The special-purpose register ``name`` of this core (PTO ``QUANT_PRE``, ``FPC`` ...) as an access
        record: instructions that set a register write it, the fixpipe that uses it reads it."""
        ids = self._register_ids
        rid = ids.get(name)
        if rid is None:
            rid = ids[name] = next_buffer_id()
        return MemAccess(f"register {name} of {self.core.short}", rid, 0, 8, 0, 1, "REG")

    def mark(self, kind: str, **data) -> None:
        """Annotate the run (e.g. ``ctx.mark('block', index=7)``); observers such as the workload report
        collect these. Free when nobody listens."""
        bus = self.bus
        if bus.markers:
            bus.publish(MarkerEvent(bus.next_seq(), self.core, kind, data))

    # -- intra-core pipe synchronisation ---------------------------------------------------------
    def set_flag(self, event: HardEvent, event_id: int = 0) -> None:
        """``AscendC::SetFlag<event>(event_id)``: pipe ``event.src`` signals pipe ``event.dst``."""
        site = None
        ed = self._editor
        if ed is not None:
            site, edit = ed.edit("SetFlag", self, event=event, ident=event_id)
            if edit is not None:
                if edit.action == "drop":
                    return
                if edit.action == "swap_ids":
                    event_id = swap(event_id, edit.ids)
        if event.__class__ is not HardEvent or event_id.__class__ is not int or not 0 <= event_id < EVENT_ID_COUNT:
            self._check_event(event, event_id)
        bus = self.bus
        bus._seq = seq = bus._seq + 1  # bus.next_seq(), inline on the hot path
        q = self._events.get((event, event_id))
        if q is None:
            q = self._events[(event, event_id)] = deque()
        q.append(seq)
        if bus.sync:
            sinks = bus.flag_sinks
            if sinks:
                for sink in sinks:
                    sink(self.core, event, seq, True)
            else:
                bus.publish(SetFlagEvent(seq, self.core, event, event_id))
        if site is not None:
            ed.set_issued(seq, site, self, event.src)

    def wait_flag(self, event: HardEvent, event_id: int = 0) -> None:
        """``AscendC::WaitFlag<event>(event_id)``: pipe ``event.dst`` waits for the matching set."""
        site = None
        ed = self._editor
        if ed is not None:
            site, edit = ed.edit("WaitFlag", self, event=event, ident=event_id, orders=event.dst)
            if edit is not None:
                if edit.action == "drop":
                    return
                if edit.action == "swap_ids":
                    event_id = swap(event_id, edit.ids)
                elif edit.action == "delay":
                    self._delayed.append((event.dst, lambda: self._wait_flag(event, event_id, site)))
                    return
        self._wait_flag(event, event_id, site)

    def _wait_flag(self, event: HardEvent, event_id: int, site) -> None:
        if event.__class__ is not HardEvent or event_id.__class__ is not int or not 0 <= event_id < EVENT_ID_COUNT:
            self._check_event(event, event_id)
        q = self._events.get((event, event_id))
        if q:
            source = q.popleft()
        elif self._check_flags:
            raise DeadlockError(
                f"{self}: WaitFlag<{event.name}>({event_id}) has no earlier SetFlag<{event.name}>({event_id}); "
                f"pipe {event.dst} would wait forever",
                blocked=((self.core.name, f"{event.name}/{event_id}", 0),),
            )
        else:
            source = 0
        bus = self.bus
        if bus.sync:
            sinks = bus.flag_sinks
            if sinks:
                bus._seq += 1  # the number the event would have taken
                for sink in sinks:
                    sink(self.core, event, source, False)
            else:
                bus.publish(WaitFlagEvent(bus.next_seq(), self.core, event, event_id, source))
        if site is not None:
            self._editor.wait_consumed((source,), site, event.dst)

    def unobserved_flag_ops(self):
        """``(set_flag, wait_flag)`` doing what :meth:`set_flag` / :meth:`wait_flag` do on a core without a
        sync-site editor when nobody observes sync events (None otherwise): the same queues, sequence numbers and
        missing-set error, minus the checks of the event and id - for a caller issuing (event, id) pairs that went
        through :meth:`set_flag` / :meth:`wait_flag` before. :meth:`replay_flags` does a list of them in one call."""
        if self._editor is not None or self.bus.sync:
            return None
        events, bus, wait_flag = self._events, self.bus, self._wait_flag

        def set_(event: HardEvent, event_id: int) -> None:
            bus._seq = seq = bus._seq + 1
            q = events.get((event, event_id))
            if q is None:
                q = events[(event, event_id)] = deque()
            q.append(seq)

        def wait(event: HardEvent, event_id: int) -> None:
            q = events.get((event, event_id))
            if q:
                q.popleft()
            else:
                wait_flag(event, event_id, None)  # raises the missing-set DeadlockError (or consumes nothing)

        return set_, wait

    def replay_flags(self, ops, seqs: list[int] | None = None) -> bool:
        """The ``(is_set, event, event_id)`` flag operations ``ops`` in order, doing what :meth:`set_flag` /
        :meth:`wait_flag` do on a core without a sync-site editor, without publishing events (the same queues,
        sequence numbers and missing-set error, minus the checks of the event and id): for a caller repeating flags
        that went through them before. With ``seqs`` (a replay of a template, see
        :class:`~catlass_py.arch.events.ObserverBus`) each set appends its sequence number to it and each wait the
        number of the set it consumed. False, doing nothing, on a core with an editor, or when someone observes
        sync events and there is no ``seqs``."""
        if self._editor is not None or (seqs is None and self.bus.sync):
            return False
        events, bus = self._events, self.bus
        record = seqs.append if seqs is not None else None
        for is_set, event, event_id in ops:
            key = (event, event_id)
            q = events.get(key)
            if is_set:
                bus._seq = seq = bus._seq + 1
                if q is None:
                    q = events[key] = deque()
                q.append(seq)
                if record is not None:
                    record(seq)
            elif q:
                source = q.popleft()
                if record is not None:
                    record(source)
            elif seqs is None or self._check_flags:
                self._wait_flag(event, event_id, None)  # raises the missing-set DeadlockError (or consumes nothing)
            else:
                record(0)  # consumes nothing, as wait_flag's event says (source 0)
        return True

    def pipe_barrier(self, pipe: Pipe = Pipe.ALL) -> None:
        """``AscendC::PipeBarrier<pipe>()``: later instructions of ``pipe`` wait for earlier ones."""
        if not isinstance(pipe, Pipe):
            raise ArgumentError(f"pipe: expected a Pipe, got {pipe!r}")
        ed = self._editor
        if ed is not None:
            _site, edit = ed.edit("PipeBarrier", self, event=pipe, orders=pipe)
            if edit is not None and edit.action == "drop":
                return
        if self.bus.sync:
            self.bus.publish(PipeBarrierEvent(self.bus.next_seq(), self.core, pipe))

    def flush_delayed(self) -> None:
        """Issue the waits a mutation delayed and no later instruction released (at the end of the program)."""
        while self._delayed:
            self._delayed.pop(0)[1]()

    def pending_intra_core_flags(self) -> list[tuple[HardEvent, int, int]]:
        """(event, id, count) of sets no wait consumed yet."""
        return [(e, i, len(q)) for (e, i), q in self._events.items() if q]

    def _check_event(self, event, event_id) -> None:
        if not isinstance(event, HardEvent):
            raise ArgumentError(f"event: expected a HardEvent, got {event!r}")
        if not 0 <= event_id < EVENT_ID_COUNT:
            raise ArgumentError(f"event id: expected 0..{EVENT_ID_COUNT - 1}, got {event_id}")

    # -- cross-core synchronisation --------------------------------------------------------------
    def cross_core_set_flag(self, flag, mode: int = 2, pipe: Pipe = Pipe.S) -> None:
        """``CrossCoreSetFlag<mode, pipe>(flag)`` (see :mod:`catlass_py.arch.flags` for the modes)."""
        launch = self._require_launch("cross_core_set_flag")
        fid = flag_id_of(flag)
        if not isinstance(pipe, Pipe):
            raise ArgumentError(f"pipe: expected a Pipe, got {pipe!r}")
        site = None
        ed = self._editor
        if ed is not None:
            site, edit = ed.edit("CrossCoreSetFlag", self, ident=fid, pipe=pipe)
            if edit is not None:
                if edit.action == "drop":
                    return
                if edit.action == "move_pipe":
                    pipe = edit.pipe
                elif edit.action == "swap_ids":
                    fid = swap(fid, edit.ids)
        seq = self.bus.next_seq()
        if self.bus.cross_core:
            self.bus.publish(CrossCoreSetEvent(seq, self.core, fid, mode, pipe))
        if site is not None:
            ed.set_issued(seq, site)
        launch.flag_set(self, fid, mode, seq)

    def cross_core_wait_flag(self, flag) -> None:
        """``CrossCoreWaitFlag(flag)``: block while this core's counter of ``flag`` is 0, then decrement it."""
        launch = self._require_launch("cross_core_wait_flag")
        fid = flag_id_of(flag)
        site = None
        ed = self._editor
        if ed is not None:
            site, edit = ed.edit("CrossCoreWaitFlag", self, ident=fid, orders=Pipe.ALL)
            if edit is not None:
                if edit.action == "drop":
                    return
                if edit.action == "swap_ids":
                    fid = swap(fid, edit.ids)
                elif edit.action == "delay":
                    self._delayed.append((None, lambda: self._cross_core_wait(launch, fid, site)))
                    return
        self._cross_core_wait(launch, fid, site)

    def _cross_core_wait(self, launch, fid: int, site) -> None:
        sources, blocked = launch.flag_wait(self, fid)
        if self.bus.cross_core:
            self.bus.publish(CrossCoreWaitEvent(self.bus.next_seq(), self.core, fid, sources, blocked))
        if site is not None:
            self._editor.wait_consumed(sources, site)

    def cross_core_barrier(self, mode: int = 0, pipe: Pipe = Pipe.ALL) -> None:
        """CATLASS ``Arch::CrossCoreBarrier<mode, pipe>()``: set then wait the reserved barrier id
        (mode 0 on AIV: 8, mode 0 on AIC: 9, mode 1 on AIV: 10)."""
        arch = self.arch
        if mode == 0:
            fid = arch.aic_inter_block_barrier_id if self.is_aic else arch.aiv_inter_block_barrier_id
        elif mode == 1 and self.is_aiv:
            fid = arch.aiv_inter_subblock_barrier_id
        else:
            raise ArgumentError(f"cross_core_barrier: mode {mode} is not a barrier mode on {self.core_type}")
        self.cross_core_set_flag(fid, mode, pipe)
        self.cross_core_wait_flag(fid)

    def release(self) -> None:
        """End of the launch: free this core's buffers and drop its links to the launch (see
        ``_Launch.release``)."""
        res = self.resource
        if res is not None:
            for arena in list(res.arenas().values()) + list(self._extra_buffers.values()):
                arena.release()
            res.ctx = None
        self.resource = None
        self._extra_buffers = {}
        self.tile_cache = {}
        self._launch = self._editor = None
        self._delayed = []
        self._watch = []
        self._events = {}

    def _require_launch(self, what: str) -> "_Launch":
        if self._launch is None:
            raise ArgumentError(f"{what}: this core context is not part of a launch (standalone_core)")
        return self._launch


def _orders(watch: list, pipe: Pipe) -> bool:
    """Mark a watched wait or barrier (``[site record, pipes it orders]``) followed when an instruction on
    ``pipe`` comes after it on a pipe it orders."""
    pipes = watch[1]
    if Pipe.ALL in pipes or pipe in pipes:
        watch[0].followed = True
        return True
    return False


def standalone_core(arch=None, core_type: CoreType | str = CoreType.AIC, *, observers=(), poison: int = 0xFF) -> CoreContext:
    """A core outside any launch, for trying tile operations one at a time (tests, notebooks).

    It has the buffers of ``core_type`` and intra-core flags; cross-core flags need :func:`launch`.
    """
    from catlass_py.arch.spec import ATLAS_A2, get_arch

    arch = ATLAS_A2 if arch is None else get_arch(arch)
    ctype = CoreType(str(core_type).upper()) if not isinstance(core_type, CoreType) else core_type
    core = CoreId(ctype, 0, 0, arch.aiv_per_aic)
    return CoreContext(arch, core, 1, ObserverBus(observers), None, poison=poison)
