"""The observer bus: typed events published by the simulated machine.

Every data-moving or computing instruction and every synchronisation operation is published as one small
frozen event. Analyses (trace export, cost model, race detector, workload report) subscribe as
:class:`Observer` objects; no tile or kernel code knows about them. When no observer is subscribed the
machine builds no events at all, so an unobserved run pays nothing.

There is no CATLASS counterpart: this is the simulator's equivalent of the msprof instruction trace.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from catlass_py.arch.pipes import CoreType, HardEvent, Pipe


@dataclass(frozen=True, slots=True)
class CoreId:
    """Identity of one simulated core.

    ``ai_core`` is the AI-core (block) index; ``sub`` the vector sub-block (0/1) or 0 for the AIC;
    ``block_idx`` is what Ascend C ``GetBlockIdx()`` returns on that core (AIV: ``ai_core*2 + sub``).
    """

    type: "CoreType"
    ai_core: int
    sub: int = 0
    aiv_per_aic: int = 2

    @property
    def block_idx(self) -> int:
        return self.ai_core if self.type.value == "AIC" else self.ai_core * self.aiv_per_aic + self.sub

    @property
    def name(self) -> str:
        return f"AIC {self.ai_core}" if self.type.value == "AIC" else f"AIV {self.block_idx} (AI core {self.ai_core}, sub-block {self.sub})"

    @property
    def short(self) -> str:
        return f"AIC{self.ai_core}" if self.type.value == "AIC" else f"AIV{self.ai_core}.{self.sub}"

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class MemAccess:
    """Bytes of one memory touched by an instruction: a global-memory buffer, an on-chip buffer of one core
    (L1, L0A, L0B, L0C, UB, BT, FB, ...) or a special-purpose register of one core.

    The touched set is ``count`` intervals ``[start + i*stride, start + i*stride + length)`` (byte offsets
    in the memory), which describes a row-major tile exactly and a contiguous range with ``count == 1``.
    ``space`` names the kind of memory ('GM', 'L1', 'UB', 'REG', ...), ``buffer`` the instance for messages
    ('a', 'UB of AIV0.1') and ``buffer_id`` its identity (unique per launch process).
    """

    buffer: str
    buffer_id: int
    start: int
    length: int
    stride: int = 0
    count: int = 1
    space: str = "GM"

    @property
    def end(self) -> int:
        """One past the last byte touched."""
        return self.start + (self.count - 1) * self.stride + self.length if self.count else self.start

    @property
    def nbytes(self) -> int:
        """Bytes touched (runs may overlap when ``stride < length``; they are counted once each)."""
        return self.length * self.count

    def intervals(self) -> np.ndarray:
        """(count, 2) int64 array of [begin, end) byte intervals."""
        begins = self.start + np.arange(self.count, dtype=np.int64) * self.stride
        return np.stack([begins, begins + self.length], axis=1)

    def overlaps(self, other: "MemAccess", *, any_buffer: bool = False) -> bool:
        """True if any byte is touched by both accesses (``any_buffer``: compare the byte ranges of two accesses
        whatever buffers they name, e.g. one core's L0C named by events captured on another core)."""
        if (self.buffer_id != other.buffer_id and not any_buffer) or self.count == 0 or other.count == 0:
            return False
        if self.end <= other.start or other.end <= self.start:
            return False
        if (self.count == 1 or self.length >= self.stride) and (other.count == 1 or other.length >= other.stride):
            return True  # both dense over their span, and the spans intersect
        if self.count > other.count:
            self, other = other, self
        a, b = self.intervals(), other.intervals()
        # Intervals of one access are sorted; for each run of a, the last run of b starting before its end.
        idx = np.searchsorted(b[:, 0], a[:, 1], side="left")
        prev = idx - 1
        ok = prev >= 0
        return bool(np.any(ok & (b[np.clip(prev, 0, None), 1] > a[:, 0])))

    def __str__(self) -> str:
        if self.count == 1:
            return f"{self.buffer}[{self.start}:{self.end}]"
        return f"{self.buffer}[{self.start}:{self.end}] ({self.count} runs of {self.length} B, stride {self.stride} B)"


@dataclass(frozen=True, slots=True)
class Event:
    """Base of all events: a launch-wide sequence number and the core that issued it."""

    seq: int
    core: CoreId


@dataclass(frozen=True, slots=True)
class InstructionEvent(Event):
    """One instruction (or one tile operation issued as a short burst) on ``pipe``.

    ``nbytes`` counts bytes moved, ``flops`` multiply-adds x2 (cube) or element ops (vector);
    ``gm_reads``/``gm_writes`` the global-memory bytes touched, ``local_reads``/``local_writes`` the bytes of
    on-chip buffers and registers; ``info`` small op-specific details; ``unit_flag`` the Mmad/Fixpipe
    ``unitFlag`` field (0 when unused; see :mod:`catlass_py.arch.pipe_order`).
    """

    pipe: "Pipe"
    op: str
    nbytes: int = 0
    flops: int = 0
    gm_reads: tuple[MemAccess, ...] = ()
    gm_writes: tuple[MemAccess, ...] = ()
    info: Any = None
    local_reads: tuple[MemAccess, ...] = ()
    local_writes: tuple[MemAccess, ...] = ()
    unit_flag: int = 0


@dataclass(frozen=True, slots=True)
class SetFlagEvent(Event):
    """Intra-core ``SetFlag<event>(event_id)``."""

    event: "HardEvent"
    event_id: int


@dataclass(frozen=True, slots=True)
class WaitFlagEvent(Event):
    """Intra-core ``WaitFlag<event>(event_id)``; ``source_seq`` is the set it consumed."""

    event: "HardEvent"
    event_id: int
    source_seq: int


@dataclass(frozen=True, slots=True)
class PipeBarrierEvent(Event):
    """Intra-core ``PipeBarrier<pipe>()``."""

    pipe: "Pipe"


@dataclass(frozen=True, slots=True)
class CrossCoreSetEvent(Event):
    """``CrossCoreSetFlag<mode, pipe>(flag_id)``."""

    flag_id: int
    mode: int
    pipe: "Pipe"


@dataclass(frozen=True, slots=True)
class CrossCoreWaitEvent(Event):
    """A completed ``CrossCoreWaitFlag(flag_id)``.

    ``sources`` are the sequence numbers of the set events whose counter increment this wait consumed
    (one set, or one per participating core for the 'all must set' modes): the happens-before edges.
    ``blocked`` tells whether the core had to wait.
    """

    flag_id: int
    sources: tuple[int, ...]
    blocked: bool = False


@dataclass(frozen=True, slots=True)
class CoreStartEvent(Event):
    """A core program starts."""


@dataclass(frozen=True, slots=True)
class CoreEndEvent(Event):
    """A core program returned."""


@dataclass(frozen=True, slots=True)
class MarkerEvent(Event):
    """An annotation from kernel code (``ctx.mark``), e.g. which output block a core computes."""

    kind: str
    data: dict = field(default_factory=dict)


def _fast_init(cls) -> None:
    """Replace the ``__init__`` of a frozen slotted dataclass by one that stores each field through its slot's
    member descriptor: the same signature, values and immutability (assignment still raises
    ``FrozenInstanceError``), about twice as fast as the generated per-field ``object.__setattr__`` - the
    machine builds one event per instruction and flag."""
    import dataclasses

    fields = dataclasses.fields(cls)
    if any(f.default_factory is not dataclasses.MISSING or not f.init for f in fields):
        return
    ns = {f"_set_{f.name}": getattr(cls, f.name).__set__ for f in fields}  # the slots (inherited ones too)
    params = []
    for f in fields:
        if f.default is dataclasses.MISSING:
            params.append(f.name)
        else:
            ns[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
    body = "".join(f"    _set_{f.name}(self, {f.name})\n" for f in fields)
    exec(f"def __init__(self, {', '.join(params)}):\n{body}", ns)  # noqa: S102 - generated from the fields
    init = ns["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    cls.__init__ = init


for _cls in (MemAccess, Event, InstructionEvent, SetFlagEvent, WaitFlagEvent, PipeBarrierEvent, CrossCoreSetEvent,
             CrossCoreWaitEvent, CoreStartEvent, CoreEndEvent):
    _fast_init(_cls)


INSTRUCTION, SYNC, CROSS_CORE, MARKER, CORE = "instruction", "sync", "cross_core", "marker", "core"
EVENT_KINDS = frozenset({INSTRUCTION, SYNC, CROSS_CORE, MARKER, CORE})
_KIND_OF = {InstructionEvent: INSTRUCTION, SetFlagEvent: SYNC, WaitFlagEvent: SYNC, PipeBarrierEvent: SYNC,
            CrossCoreSetEvent: CROSS_CORE, CrossCoreWaitEvent: CROSS_CORE, MarkerEvent: MARKER,
            CoreStartEvent: CORE, CoreEndEvent: CORE}


class Observer:
    """Base class of bus subscribers. Override any of the three hooks.

    ``interests`` names the event kinds the observer needs ('instruction', 'sync' (intra-core flags and
    barriers), 'cross_core', 'marker', 'core' (start/end)); ``None`` means all. The machine skips building
    events nobody is interested in, so a marker-only observer leaves the instruction path free, and an observer
    is handed only the events of its kinds.
    """

    interests: frozenset[str] | None = None

    accepts_templates: bool = False
    """True for an observer of instructions and flags that also takes a *tile template* in place of the events
    of a repeated piece of a core's program (:class:`ObserverBus`'s ``capture_begin`` / ``capture_end`` /
    ``replay``): ``template_begin(core)``, ``template_end(core, key[, gm]) -> bool`` (whether it could keep the
    events published for ``core`` since ``template_begin`` as the template ``key``; ``gm``, passed only when the
    publisher names them, the GM regions the events access) and ``template_replay(core, key, seqs, times[, gm])``
    (those events again, ``times`` times, with the flag sequence numbers ``seqs``, on ``core``, which may be
    another core of the launch than the one the template was captured on: the events' on-chip accesses then name
    the capturing core's memories, which stand for ``core``'s own at the same offsets; ``gm`` this repeat's GM
    regions). Such an observer may also define ``template_flag(core, event, seq, is_set)``: when every observer of
    flags does, a ``SetFlag`` (``seq`` its sequence number) or ``WaitFlag`` (``seq`` the number of the set it
    consumed) of a core reaches it as that call instead of a :class:`SetFlagEvent` / :class:`WaitFlagEvent`
    (``ObserverBus.flag_sinks``)."""

    def on_launch_start(self, launch_info: "LaunchInfo") -> None:
        """Called once before any core runs."""

    def on_event(self, event: Event) -> None:
        """Called for every event of a kind in ``interests`` (every event when ``None``), in simulation order."""

    def on_launch_end(self, launch_info: "LaunchInfo", error: BaseException | None) -> None:
        """Called once after the launch ended (``error`` is the exception that ends it, if any)."""


@dataclass(frozen=True)
class LaunchInfo:
    """What observers learn about a launch: arch, block_dim, the cores taking part and the params."""

    arch: Any
    block_dim: int
    cores: tuple[CoreId, ...]
    kernel: Any
    params: Any


class ObserverBus:
    """Fan-out of events to observers.

    ``active`` is False when nobody listens; ``instructions``, ``sync``, ``cross_core``, ``markers`` and
    ``cores`` tell whether anyone wants that kind of event, so that publishers skip building the others.

    ``templates`` is True when someone wants instruction or sync events and every such observer
    ``accepts_templates``: it times them (pipes, durations, flags, bytes moved) and checks nothing else. A publisher
    that repeats a piece of a core's program whose timing depends on the piece's geometry alone (an L1 tile,
    :meth:`~catlass_py.gemm.block.block_mmad_instance.BlockMmadInstance.mmad_l1_tile`; a scalar read of the group
    list, :func:`~catlass_py.kernel.grouped.get_value`) may then publish its events once between
    :meth:`capture_begin` and :meth:`capture_end` and, at each repeat, call :meth:`replay` with the repeat's flag
    sequence numbers (every ``SetFlag``'s own, every ``WaitFlag``'s source, in program order) instead of building
    the events again. ``local_accesses`` is False when nobody needs the on-chip accesses of instructions without a
    unit flag (no observer of instructions, or only ones that time them: the pipe model reads on-chip accesses
    only to order unit-flag Mmads and Fixpipes), so that publishers may leave ``local_reads``/``local_writes``
    empty on those.
    """

    __slots__ = ("_observers", "active", "instructions", "sync", "cross_core", "markers", "cores", "templates",
                 "local_accesses", "_takers", "_seq", "_routes", "flag_sinks")

    def __init__(self, observers: Iterable[Observer] = ()):
        self._observers = tuple(observers)
        self.active = bool(self._observers)
        wanted: set[str] = set()
        for obs in self._observers:
            kinds = getattr(obs, "interests", None)
            wanted |= EVENT_KINDS if kinds is None else set(kinds)
        self.instructions = INSTRUCTION in wanted
        self.sync = SYNC in wanted
        self.cross_core = CROSS_CORE in wanted
        self.markers = MARKER in wanted
        self.cores = CORE in wanted
        takers = [obs for obs in self._observers
                  if (kinds := getattr(obs, "interests", None)) is None or INSTRUCTION in kinds or SYNC in kinds]
        self.templates = bool(takers) and all(getattr(obs, "accepts_templates", False) for obs in takers)
        self._takers = tuple(takers) if self.templates else ()
        # an intra-core flag as a call instead of an event, when every observer of flags takes templates and flags
        sinks = tuple(getattr(obs, "template_flag", None) for obs in self._takers
                      if (kinds := getattr(obs, "interests", None)) is None or SYNC in kinds)
        self.flag_sinks = sinks if sinks and all(sinks) else ()
        self.local_accesses = self.instructions and not self.templates
        self._seq = 0
        # each event class to the observers interested in its kind (other classes go to every observer)
        self._routes = {cls: tuple(obs for obs in self._observers
                                   if (kinds := getattr(obs, "interests", None)) is None or kind in kinds)
                        for cls, kind in _KIND_OF.items()}

    @property
    def observers(self) -> tuple[Observer, ...]:
        return self._observers

    def next_seq(self) -> int:
        """Allocate the next sequence number (also used by flags when the bus is inactive)."""
        self._seq += 1
        return self._seq

    def publish(self, event: Event) -> None:
        """Hand ``event`` to every observer interested in its kind."""
        for obs in self._routes.get(event.__class__, self._observers):
            obs.on_event(event)

    def capture_begin(self, core: CoreId) -> None:
        """Start capturing ``core``'s next events as a template (only when ``templates``)."""
        for obs in self._takers:
            obs.template_begin(core)

    def capture_end(self, core: CoreId, key, gm=None) -> bool:
        """Keep the events ``core`` published since :meth:`capture_begin` as the template ``key``; whether every
        observer could (a template holds instructions, intra-core flags and one-pipe barriers only). ``gm``: the GM
        regions the events read and write, as ``(buffer id, byte offset)`` pairs of distinct buffers (e.g. a
        tile's C, scale and D), when they access GM; a replay then names its own regions in the same order."""
        ok = True
        for obs in self._takers:
            ok = (obs.template_end(core, key, gm) if gm is not None else obs.template_end(core, key)) and ok
        return ok

    def replay(self, core: CoreId, key, seqs: list[int], times: int = 1, gm=None) -> None:
        """The events of the template ``key`` again on ``core``, with the flag sequence numbers ``seqs``. A template
        captured on another core of the launch keeps that core's on-chip memories in its unit-flag instructions'
        accesses: they stand for ``core``'s own at the same offsets (every core's arenas have the launch arch's
        sizes). ``times``: that many repeats back to back (a template without flags or GM accesses). ``gm``: for a
        template captured with GM regions, this repeat's regions, in the capture's order (each access lies as far
        past its region's start as it did at the capture)."""
        for obs in self._takers:
            if gm is None:
                obs.template_replay(core, key, seqs, times)
            else:
                obs.template_replay(core, key, seqs, times, gm)

    def launch_start(self, info: LaunchInfo) -> None:
        for obs in self._observers:
            obs.on_launch_start(info)

    def launch_end(self, info: LaunchInfo, error: BaseException | None) -> None:
        for obs in self._observers:
            obs.on_launch_end(info, error)
