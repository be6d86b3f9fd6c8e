"""What CATLASS's grouped kernels share: scalar reads of the group list from GM, and the blocks of all groups
dealt round robin over the cores (``startCoreIdx``)."""

from __future__ import annotations

from catlass_py.arch.memory import GlobalTensor
from catlass_py.arch.pipes import Pipe


def get_value(ctx, gm: GlobalTensor, index: int) -> int:
    """Ascend C ``GlobalTensor::GetValue(index)``: one scalar read from GM (S pipe). When every observer of
    instructions only times them (:class:`~catlass_py.arch.events.ObserverBus` ``templates``), a core's reads
    after its first are that first read's template: a scalar read's timing does not depend on its address."""
    value = int(gm.element(index))
    bus = ctx.bus
    if bus.instructions:
        if bus.templates:
            key = ("GetValue", gm.dtype.bits)
            if key in ctx.tile_cache:
                bus.replay(ctx.core, key, [])
                return value
            bus.capture_begin(ctx.core)
            ctx.emit(Pipe.S, "GetValue", gm_reads=(gm.scalar_access(index),))
            if bus.capture_end(ctx.core, key):
                ctx.tile_cache[key] = True
            return value
        ctx.emit(Pipe.S, "GetValue", gm_reads=(gm.scalar_access(index),))
    return value


def get_values(ctx, gm: GlobalTensor, start: int, stop: int) -> None:
    """:func:`get_value` of the elements ``start .. stop - 1`` in order, for a caller that already has their values
    (made from the same reads: a launch's walk table). When the core has the read's template, one replay of it for
    all of them, after the read of the last element (the bound the others stay within)."""
    if stop <= start:
        return
    bus = ctx.bus
    key = ("GetValue", gm.dtype.bits)
    if bus.instructions and bus.templates and key in ctx.tile_cache and start >= 0:
        gm.element(stop - 1)
        bus.replay(ctx.core, key, [], times=stop - start)
        return
    for i in range(start, stop):
        get_value(ctx, gm, i)


class RoundRobinGroups:
    """The blocks of all groups as one sequence dealt round robin over the cores (CATLASS's ``startCoreIdx``):
    block 0 of a group goes to the core after the one that took the previous group's last block. With one group
    this is the plain ``loop = coreIdx, coreIdx + coreNum, ...`` of the single-problem kernels."""

    def __init__(self, core_idx: int, core_num: int):
        self.core_idx, self.core_num = core_idx, core_num
        self.start_core = 0

    def loops(self, core_loops: int) -> range:
        """This core's block indices in a group of ``core_loops`` blocks (from CATLASS's ``startLoopIdx``); the next
        call deals the next group."""
        core, num, start = self.core_idx, self.core_num, self.start_core
        loops = range((core + num if core < start else core) - start, core_loops, num)
        self.start_core = (self.start_core + core_loops) % self.core_num
        return loops


__all__ = ["RoundRobinGroups", "get_value", "get_values"]
