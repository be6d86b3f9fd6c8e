"""Workload report: which core computed which block and which tile (an observer of ``ctx.mark`` events).

Kernels annotate their work with ``ctx.mark('block', ...)`` (cube side) and ``ctx.mark('epilogue_tile', ...)``
(vector side); this observer gathers the annotations, plus each core's cross-core flag traffic, into a
:class:`WorkloadReport`. There is no CATLASS counterpart: on hardware this needs printf debugging.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from catlass_py.arch.events import (
    CoreId,
    CrossCoreSetEvent,
    CrossCoreWaitEvent,
    Event,
    LaunchInfo,
    MarkerEvent,
    Observer,
)
from catlass_py.arch.pipes import CoreType


@dataclass
class CoreFlagTraffic:
    """Cross-core flag operations one core issued: flag id -> count."""

    sets: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    waits: dict[int, int] = field(default_factory=lambda: defaultdict(int))


@dataclass
class WorkloadReport:
    """Per AI core: the blocks its cube core computed (marker payloads, in order); per vector core: the
    epilogue tiles it processed; per core: flag traffic; plus the launch's core list."""

    block_dim: int = 0
    cores: tuple[CoreId, ...] = ()
    blocks: dict[int, list[dict]] = field(default_factory=lambda: defaultdict(list))
    tiles: dict[tuple[int, int], list[dict]] = field(default_factory=lambda: defaultdict(list))
    epilogue_blocks: dict[tuple[int, int], list[dict]] = field(default_factory=lambda: defaultdict(list))
    flags: dict[CoreId, CoreFlagTraffic] = field(default_factory=lambda: defaultdict(CoreFlagTraffic))
    markers: list[MarkerEvent] = field(default_factory=list)

    def blocks_per_core(self) -> list[int]:
        """Number of blocks each AI core computed, indexed by AI core."""
        return [len(self.blocks.get(c, [])) for c in range(self.block_dim)]

    def tiles_per_aiv(self) -> dict[str, int]:
        """Epilogue tiles processed by each vector core, keyed 'AIVc.s'."""
        return {f"AIV{c}.{s}": len(v) for (c, s), v in sorted(self.tiles.items())}


class WorkloadRecorder(Observer):
    """Observer that builds a :class:`WorkloadReport` (``.report``) for one launch."""

    interests = frozenset({"marker", "cross_core"})

    def __init__(self):
        self.report = WorkloadReport()

    def on_launch_start(self, info: LaunchInfo) -> None:
        self.report = WorkloadReport(block_dim=info.block_dim, cores=info.cores)

    def on_event(self, e: Event) -> None:
        if isinstance(e, MarkerEvent):
            rep = self.report
            rep.markers.append(e)
            if e.kind == "block" and e.core.type is CoreType.AIC:
                rep.blocks[e.core.ai_core].append(e.data)
            elif e.kind == "epilogue_tile":
                rep.tiles[(e.core.ai_core, e.core.sub)].append(e.data)
            elif e.kind == "epilogue_block":
                rep.epilogue_blocks[(e.core.ai_core, e.core.sub)].append(e.data)
        elif isinstance(e, CrossCoreSetEvent):
            self.report.flags[e.core].sets[e.flag_id] += 1
        elif isinstance(e, CrossCoreWaitEvent):
            self.report.flags[e.core].waits[e.flag_id] += 1
