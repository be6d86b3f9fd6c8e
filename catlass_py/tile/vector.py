"""Vector-core (AIV) compute on UB tiles: casts, fills and the broadcast multiplies of the epilogues.

Counterparts: Ascend C ``Cast``/``Duplicate`` and CATLASS ``Epilogue::Tile::TileRowBroadcastMul``,
``TileBroadcastOneBlk``, ``TileOneBlkColumnBroadcastMul``, ``TileCast`` (``epilogue/tile/*.hpp``). Like the
C++ ops, every one works on the FULL static tile, not on the actual (tail-clipped) tile: stale UB contents
outside the actual region are computed on but never stored. A caller that knows how much of the tile will be
read may pass a hint (``valid`` elements of a ``Cast``, ``rows`` of a tile op): the simulator then computes that
part only and leaves the rest as it was, with the same checks and the same event. Arithmetic is IEEE float32
(numpy rounds to nearest even, as the vector unit does).

Each op is one instruction event on ``PIPE_V`` that reads and writes the UB elements it computes on: ``count``
elements for ``Cast``/``Duplicate`` (a fill, which reads nothing), the full static tile for the tile ops.
"""

from __future__ import annotations

import numpy as np

from catlass_py.arch.memory import LocalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.arch.spec import get_arch
from catlass_py.errors import ConfigError
from catlass_py.gemm.coord import MatrixShape
from catlass_py.gemm.gemm_type import GemmType
from catlass_py.integers import is_int
from catlass_py.numerics.dtypes import BFLOAT16, FLOAT16, FLOAT32, get_dtype
from catlass_py.numerics.rounding import RoundMode, cast as _cast
from catlass_py.tile._region import span_access

BYTE_PER_BLK = 32


def _emit(t: LocalTensor, op: str, elements: int, reads=(), writes=(), **info) -> None:
    """One PIPE_V instruction event: ``reads`` / ``writes`` are ``(tensor, elements)`` pairs of UB views,
    turned into access records only when someone needs them (``ObserverBus.local_accesses``)."""
    ctx = t.ctx
    if ctx is not None and ctx.bus.instructions:
        local = ctx.bus.local_accesses
        ctx.emit(Pipe.V, op, flops=elements, nbytes=t.dtype.nbytes(elements), info=info or None,
                 local_reads=tuple(span_access(r, n) for r, n in reads) if local else (),
                 local_writes=tuple(span_access(w, n) for w, n in writes) if local else ())


def _checks(*operands) -> None:
    """The capacity checks of the ``(tensor, elements)`` views an op would take (timing-only runs)."""
    for t, n in operands:
        t.check(n)


def _ub(t: LocalTensor, op: str) -> None:
    if t.position != "UB":
        raise ConfigError(f"{op}: operands must live in UB, got a {t.position} tensor")


def plain_conversion(src_dtype, dst_dtype, round_mode: RoundMode) -> bool:
    """Whether ``rounding.cast`` of a ``src_dtype`` array to ``dst_dtype`` with ``round_mode`` is numpy's own
    conversion (``astype``): widening to fp32 from a type it holds exactly (any mode), int32 -> fp32 with
    RINT/NONE (round to nearest even), fp32 -> fp16/bf16 with RINT/NONE (correctly rounded, overflow to inf)."""
    if round_mode.__class__ is not RoundMode or round_mode is RoundMode.HYBRID:  # cast() validates these
        return False
    key = (src_dtype, dst_dtype, round_mode)
    hit = _PLAIN_CONVERSIONS.get(key)
    if hit is None:
        rne = round_mode in (RoundMode.RINT, RoundMode.NONE)
        src_np = np.dtype(src_dtype)
        hit = dst_dtype is FLOAT32 and (
            src_np in (np.dtype(np.float16), np.dtype(BFLOAT16.numpy), np.dtype(np.float32), np.dtype(np.int8),
                       np.dtype(np.int16)) or (src_np == np.dtype(np.int32) and rne))
        hit = hit or (dst_dtype in (FLOAT16, BFLOAT16) and src_np == np.dtype(np.float32) and rne)
        _PLAIN_CONVERSIONS[key] = hit
    return hit


_PLAIN_CONVERSIONS: dict = {}


def vector_cast(dst: LocalTensor, src: LocalTensor, round_mode: RoundMode, count: int,
                valid: int | None = None) -> None:
    """Ascend C ``Cast(dst, src, roundMode, count)``: convert ``count`` elements with ``round_mode``
    (``RoundMode.NONE`` for exact widening such as bf16 -> fp32).

    ``valid`` (a simulator hint, no hardware field): only the first ``valid`` elements of ``dst`` will ever be
    read; the others are left as they are instead of being computed. The checks and the event still cover
    ``count`` elements."""
    _ub(dst, "Cast")
    _ub(src, "Cast")
    if dst.computes:
        x = src.view(count)  # the source is checked (and converted) before the destination
        if valid is not None and 0 <= valid < count:
            x = x[:valid]
        if plain_conversion(x.dtype, dst.dtype, round_mode):
            d = dst.view(count)[:x.size]
            if x.dtype.kind in "iu":  # from an integer: no float exception to silence
                np.copyto(d, x, casting="unsafe")
            else:
                with np.errstate(over="ignore", invalid="ignore"):  # what rounding.cast does around astype
                    np.copyto(d, x, casting="unsafe")  # the same conversion, without the intermediate array
        else:
            y = _cast(x, dst.dtype, round_mode)
            dst.view(count)[:x.size] = y
    else:  # timing-only: the same checks (the conversion's too, on no elements), no bytes
        _checks((src, count), (dst, count))
        _cast(np.empty(0, src.dtype.numpy), dst.dtype, round_mode)
    ctx = dst.arena.ctx
    if ctx is not None and ctx.bus.instructions:  # (the event's fields are made only for an observer)
        _emit(dst, "Cast", count, ((src, count),), ((dst, count),), src=src.dtype.name, dst=dst.dtype.name,
              mode=round_mode.name)


def duplicate(dst: LocalTensor, value, count: int) -> None:
    """Ascend C ``Duplicate(dst, value, count)``: fill ``count`` elements with ``value``."""
    _ub(dst, "Duplicate")
    if dst.computes:
        dst.view(count)[:] = value
    else:  # timing-only: the same checks, no bytes
        dst.check(count)
    _emit(dst, "Duplicate", count, (), ((dst, count),))


def _compute_dtype(op: str, compute_type) -> np.dtype:
    element = compute_type.element if isinstance(compute_type, GemmType) else get_dtype(compute_type)
    if element.kind != "float":
        raise ConfigError(f"{op}: compute type must be a float type, got {element}")
    return element


def _tile_shape(op: str, tile_shape) -> MatrixShape:
    return MatrixShape(*tile_shape).check(op)


class TileRowBroadcastMul:
    """CATLASS ``TileRowBroadcastMul<ArchTag, ComputeType, TileShape>``:
    ``out[i][c] = in0[i][c] * in1[c]`` for the whole ROW x COLUMN tile (row vector broadcast down)."""

    def __init__(self, arch, compute_type, tile_shape):
        self.arch = get_arch(arch)
        self.element = _compute_dtype("TileRowBroadcastMul", compute_type)
        self.tile_shape = _tile_shape("TileRowBroadcastMul", tile_shape)

    def __call__(self, out: LocalTensor, in0: LocalTensor, in1: LocalTensor, rows: int | None = None) -> None:
        """``rows`` (a simulator hint): only the first ``rows`` rows of ``out`` will ever be read; the others
        are left as they are. The checks and the event still cover the whole tile."""
        r, c = self.tile_shape
        if out.computes:
            v = r if rows is None or not 0 <= rows < r else rows
            x, y, o = in0.view(r * c)[:v * c].reshape(v, c), in1.view(c), out.view(r * c)[:v * c].reshape(v, c)
            with np.errstate(all="ignore"):  # the vector unit raises nothing (stale tail columns may overflow)
                if x.dtype == y.dtype == o.dtype:  # written in place (numpy buffers any overlap of out and in0)
                    np.multiply(x, y, out=o)
                else:
                    o[:] = x * y
        else:  # timing-only: the same checks, no bytes
            _checks((in0, r * c), (in1, c), (out, r * c))
        _emit(out, "TileRowBroadcastMul", r * c, ((in0, r * c), (in1, c)), ((out, r * c),))


class TileBroadcastOneBlk:
    """CATLASS ``TileBroadcastOneBlk<ArchTag, ComputeType, COMPUTE_LENGTH>`` (Ascend C ``Brcb``):
    ``out[i*B + j] = in[i]`` with B = elements per 32-byte block, for i < COMPUTE_LENGTH."""

    def __init__(self, arch, compute_type, compute_length: int):
        self.arch = get_arch(arch)
        self.element = _compute_dtype("TileBroadcastOneBlk", compute_type)
        if not is_int(compute_length) or compute_length <= 0:
            raise ConfigError(f"TileBroadcastOneBlk: COMPUTE_LENGTH must be a positive int, got {compute_length!r}")
        self.compute_length = int(compute_length)
        self.blk = BYTE_PER_BLK * 8 // self.element.bits

    def __call__(self, out: LocalTensor, src: LocalTensor, rows: int | None = None) -> None:
        """``rows`` (a simulator hint): only the first ``rows`` blocks of ``out`` will ever be read; the others
        are left as they are. The checks and the event still cover all COMPUTE_LENGTH blocks."""
        n, b = self.compute_length, self.blk
        if out.computes:
            v = n if rows is None or not 0 <= rows < n else rows
            o, x = out.view(n * b), src.view(n)
            o[:v * b].reshape(v, b)[:] = x[:v, None]
        else:  # timing-only: the same checks, no bytes
            _checks((out, n * b), (src, n))
        _emit(out, "TileBroadcastOneBlk", n * b, ((src, n),), ((out, n * b),))


class TileOneBlkColumnBroadcastMul:
    """CATLASS ``TileOneBlkColumnBroadcastMul<ArchTag, ComputeType, TileShape>``:
    ``out[i][c] = in0[i][c] * in1blk[i*B + c % B]`` (with ``in1blk`` from :class:`TileBroadcastOneBlk` this
    multiplies row i by one per-row value)."""

    def __init__(self, arch, compute_type, tile_shape):
        self.arch = get_arch(arch)
        self.element = _compute_dtype("TileOneBlkColumnBroadcastMul", compute_type)
        self.tile_shape = _tile_shape("TileOneBlkColumnBroadcastMul", tile_shape)
        self.blk = BYTE_PER_BLK * 8 // self.element.bits
        if self.tile_shape.column % self.blk:
            raise ConfigError(
                f"TileOneBlkColumnBroadcastMul: COLUMN ({self.tile_shape.column}) must be a multiple of the "
                f"{self.blk}-element block"
            )

    def __call__(self, out: LocalTensor, in0: LocalTensor, in1: LocalTensor, rows: int | None = None) -> None:
        """``rows`` (a simulator hint): only the first ``rows`` rows of ``out`` will ever be read; the others
        are left as they are. The checks and the event still cover the whole tile."""
        r, c = self.tile_shape
        b = self.blk
        if out.computes:
            v = r if rows is None or not 0 <= rows < r else rows
            blocks = in1.view(r * b)[:v * b].reshape(v, 1, b)
            x, o = in0.view(r * c)[:v * c].reshape(v, c // b, b), out.view(r * c)[:v * c].reshape(v, c // b, b)
            with np.errstate(all="ignore"):  # the vector unit raises nothing (stale tail columns may overflow)
                if x.dtype == blocks.dtype == o.dtype:  # written in place (numpy buffers any overlap of out and in0)
                    np.multiply(x, blocks, out=o)
                else:
                    o[:] = x * blocks
        else:  # timing-only: the same checks, no bytes
            _checks((in1, r * b), (in0, r * c), (out, r * c))
        _emit(out, "TileOneBlkColumnBroadcastMul", r * c, ((in0, r * c), (in1, r * b)), ((out, r * c),))


class TileCast:
    """CATLASS ``Epilogue::Tile::TileCast<ArchTag, DstType, SrcType, TileShape>``: Ascend C ``Cast`` over the
    whole tile with ``round_mode`` (RINT by default)."""

    def __init__(self, arch, dst_type, src_type, tile_shape, round_mode: RoundMode = RoundMode.RINT):
        self.arch = get_arch(arch)
        self.dst = dst_type.element if isinstance(dst_type, GemmType) else get_dtype(dst_type)
        self.src = src_type.element if isinstance(src_type, GemmType) else get_dtype(src_type)
        self.tile_shape = _tile_shape("TileCast", tile_shape)
        self.round_mode = RoundMode(round_mode)

    def __call__(self, out: LocalTensor, src: LocalTensor) -> None:
        if out.dtype != self.dst or src.dtype != self.src:
            raise ConfigError(
                f"TileCast: assembled for {self.src} -> {self.dst}, called with {src.dtype} -> {out.dtype}"
            )
        vector_cast(out, src, self.round_mode, self.tile_shape.count)
