"""PTO ``TPUSH`` / ``TPOP`` with a fixpipe configuration: the cube -> vector (C2V) FIFO.

Counterparts: ``docs/isa/TPUSH.md`` / ``TPOP.md``, ``FixpipeParams<LayoutMode, QuantMode, ReluMode, Phase,
SubBlockId, ...>`` (``include/pto/common/fixpipe.hpp``) and the CPU simulator's ``TPush.hpp``. ``tpush`` waits
for a free slot, converts the Acc tile through the fixpipe (reading QUANT_PRE for scalar modes and the FPC
quant vector for vector modes, so ``SET_QUANT_SCALAR`` / ``SET_QUANT_VECTOR`` must come first) and signals
data-ready; ``tpop`` waits for data and writes it into the consumer tile in the layout the ``LayoutMode``
names. In this single-threaded model a push into a full FIFO or a pop from an empty one would wait forever
and raises :class:`DeadlockError`. The slot's data reach the consumer's UB at the TPOP here (TPUSH reads the
Acc tile and the quant registers on FIX, TPOP writes the Vec tile on V).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from catlass_py.arch.pipes import Pipe
from catlass_py.errors import ConfigError, DeadlockError
from catlass_py.integers import is_int
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.tile.pto._common import emit, listening, region
from catlass_py.tile.pto.fixpipe import (
    DEFAULT_OPTIONS,
    FixpipeOptions,
    LayoutMode,
    ReluPreMode,
    fixpipe_apply,
    fixpipe_check,
    fixpipe_reads,
    pre_quant_mode,
)
from catlass_py.tile.pto.tile import Tile, TileType
from catlass_py.tile.quant import QuantMode

_LAYOUT_FMT = {LayoutMode.NZ2ND: "ND", LayoutMode.NZ2DN: "DN", LayoutMode.NZ2NZ: "NZ"}


@dataclass(frozen=True)
class FixpipeParams:
    """PTO ``FixpipeParams``: ``layout`` (NZ2ND default), ``quant`` (a :class:`QuantMode`; ``None`` picks the cast
    mode of the (accumulator, slot) dtypes), ``relu``, ``sub_block_id`` and the [CONFLICT] ``options``."""

    layout: LayoutMode = LayoutMode.NZ2ND
    quant: QuantMode | None = None
    relu: ReluPreMode = ReluPreMode.NoRelu
    sub_block_id: int = 0
    options: FixpipeOptions = DEFAULT_OPTIONS

    def __post_init__(self):
        LayoutMode(self.layout)
        if self.quant is not None and not isinstance(self.quant, QuantMode):
            raise ConfigError(f"FixpipeParams: quant must be a QuantMode, got {self.quant!r}")
        if self.sub_block_id not in (0, 1):
            raise ConfigError(f"FixpipeParams: sub_block_id must be 0 or 1, got {self.sub_block_id!r}")


class TPipe:
    """PTO ``TPipe`` (C2V direction): ``depth`` slots of ``dtype`` elements between a cube core and a vector core."""

    def __init__(self, dtype, depth: int = 2, name: str = "pipe"):
        if not is_int(depth) or depth < 1:
            raise ConfigError(f"TPipe: depth must be a positive int, got {depth!r}")
        depth = int(depth)
        self.dtype = get_dtype(dtype)
        self.depth = depth
        self.name = name
        self._slots: deque = deque()

    def __len__(self) -> int:
        return len(self._slots)

    def __repr__(self) -> str:
        return f"TPipe({self.name!r}, {self.dtype.name}, {len(self._slots)}/{self.depth} full)"


class _Shape:
    """What a timing-only TPUSH puts in a slot: the shape of the values it did not compute."""

    __slots__ = ("shape", "size")

    def __init__(self, shape):
        self.shape = tuple(shape)
        self.size = self.shape[0] * self.shape[1]


def _check_mode(mode: QuantMode, src, dst, arch) -> None:
    allowed = set()
    for kind in ("cast", "scalar", "vector"):
        try:
            allowed.add(pre_quant_mode(src, dst, kind, arch))
        except ConfigError:
            pass
    if src == dst:
        allowed.add(QuantMode.NoQuant)
    if mode not in allowed:
        raise ConfigError(f"TPUSH: quant mode {mode.value} does not convert {src.name} to {dst.name} on {arch.name} "
                          f"(possible: {sorted(m.value for m in allowed)})")


def tpush(pipe: TPipe, acc: Tile, params: FixpipeParams = FixpipeParams()) -> None:
    """PTO ``TPUSH<Pipe, AccTile, FixpipeConfig>(pipe, acc)``: convert ``acc``'s valid region into the next slot."""
    if not isinstance(acc, Tile) or acc.loc is not TileType.Acc:
        raise ConfigError(f"TPUSH: the C2V producer tile must be an Acc tile, got {acc!r}")
    if len(pipe) >= pipe.depth:
        raise DeadlockError(f"TPUSH: {pipe!r} has no free slot and nothing will pop it before this push")
    ctx = acc.ctx
    arch = ctx.arch
    mode = params.quant
    if mode is None:
        mode = QuantMode.NoQuant if acc.dtype == pipe.dtype else pre_quant_mode(acc.dtype, pipe.dtype, "cast", arch)
    else:
        _check_mode(mode, acc.dtype, pipe.dtype, arch)
    if acc.computes:
        data = fixpipe_apply(ctx, acc.read(), mode, pipe.dtype, relu=params.relu, options=params.options)
    else:  # timing-only: the register checks; the slot carries the shape only
        fixpipe_check(ctx, acc.valid_col, mode, options=params.options)
        data = _Shape(acc.valid)
    pipe._slots.append((data, LayoutMode(params.layout), params.sub_block_id))
    if listening(ctx):
        emit(ctx, Pipe.FIX, "TPUSH", nbytes=pipe.dtype.nbytes(data.size),
             reads=(region(acc), fixpipe_reads(ctx, mode, acc.valid_col)), fifo=pipe.name, quant=mode.value,
             layout=LayoutMode(params.layout).name)


def tpop(pipe: TPipe, dst: Tile) -> None:
    """PTO ``TPOP(pipe, dst)``: take the oldest slot and write it into ``dst`` (a Vec tile whose format is the one
    the push's LayoutMode produced: ND for NZ2ND, DN for NZ2DN, NZ for NZ2NZ)."""
    if not pipe._slots:
        raise DeadlockError(f"TPOP: {pipe!r} is empty and nothing will push before this pop")
    data, layout, sub = pipe._slots[0]
    if dst.loc is not TileType.Vec or dst.dtype != pipe.dtype:
        raise ConfigError(f"TPOP: the C2V consumer must be a Vec tile of {pipe.dtype.name}, got {dst!r}")
    if dst.fmt != _LAYOUT_FMT[layout]:
        raise ConfigError(f"TPOP: the slot was pushed with {layout.name}; the destination must be "
                          f"{_LAYOUT_FMT[layout]}, got {dst.fmt}")
    ctx = dst.ctx
    if ctx is not None and ctx.is_aiv and ctx.sub_block_idx != sub:
        raise ConfigError(f"TPOP: the slot was pushed for vector sub-block {sub}, popped on {ctx.short}")
    if data.shape[0] > dst.rows or data.shape[1] > dst.cols:
        raise ConfigError(f"TPOP: a {data.shape[0]}x{data.shape[1]} slot does not fit {dst}")
    pipe._slots.popleft()
    if not isinstance(data, _Shape):
        dst.write(data)
    if listening(ctx):
        emit(ctx, Pipe.V, "TPOP", nbytes=pipe.dtype.nbytes(data.size), writes=(region(dst, *data.shape),), fifo=pipe.name)


__all__ = ["FixpipeParams", "TPipe", "tpop", "tpush"]
