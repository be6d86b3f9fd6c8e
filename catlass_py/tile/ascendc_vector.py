"""Ascend C vector instructions in their level-0 form (mask register + repeat parameters), on UB tensors.

These are the instructions CATLASS's attention epilogues issue (``epilogue/block/
block_epilogue_online_softmax_no_mask.hpp``, ``block_epilogue_rescale_o_no_split_row.hpp``,
``block_epilogue_mla_*.hpp``): ``Add``/``Sub``/``Mul``/``Div``/``Max``/``Min``, ``Muls``/``Adds``, ``Exp``,
``Cast``, ``BlockReduceMax``/``BlockReduceSum``, ``WholeReduceMax``/``WholeReduceSum``, ``Brcb``,
``Duplicate`` and the UB -> UB ``DataCopy``. Each call is one instruction event on ``PIPE_V`` that declares
the UB bytes it reads and writes.

Addressing (Ascend C "基础API / 矢量计算 / 通用说明", the ``<T, false>`` overloads that take repeat parameters):
one *repeat* processes 256 bytes of the widest operand type as 8 *data blocks* of 32 bytes. Element ``j`` of
repeat ``r`` of an operand with ``E`` elements per block lives at element offset::

    r * repStride * E + (j // E) * blkStride * E + j % E

(strides in data blocks). Element ``j`` takes part iff bit ``j`` of the 128-bit vector mask is set
(``SetVectorMask<T>(maskHigh, maskLow)``: bit ``j`` of ``maskLow`` for ``j < 64``, bit ``j - 64`` of
``maskHigh`` above). The mask is per-core state kept in ``ctx.registers['VECTOR_MASK']``; like the other
special registers that instructions sample when the scalar unit issues them, it is not declared as an
access. Launches start with the full mask.

Numerics:

==========================  =================================================================================
instruction                 model
==========================  =================================================================================
Add Sub Mul Div Max Min     one IEEE operation in the element type, round to nearest even (numpy float32 /
Muls Adds                   float16; for float16 numpy computes in float32 and rounds once more, which is exact
                            for + - * / since float32 carries more than 2p + 2 bits); bfloat16 is computed in
                            float32 and rounded once to bfloat16
Exp                         numpy's float32 ``exp`` (the vector unit's approximation is not documented)
Cast                        :func:`catlass_py.numerics.rounding.cast` with the instruction's ``RoundMode``
                            (``CAST_NONE`` of fp32 -> fp16 rounds to nearest even, ``CAST_RINT`` likewise)
BlockReduceSum              per data block, a pairwise tree over its ``E`` elements (masked-out elements add
WholeReduceSum              0): ``((e0+e1)+(e2+e3))+((e4+e5)+(e6+e7))``; ``WholeReduceSum`` sums the 8 block
                            results the same way. The order inside the unit is not documented: this is an
                            assumption; every partial sum is rounded to the element type
BlockReduceMax              exact (max needs no rounding); masked-out elements do not take part
WholeReduceMax
==========================  =================================================================================

A data block whose elements are all masked out produces no result: ``BlockReduce*`` leaves that output element
as it was (CATLASS never reads it: ``SetBlockReduceMask`` masks the same positions out of the next reduction).

On a core of a timing-only launch (``LaunchParams(numerics=False)``, ``LocalTensor.computes`` False) every
instruction makes the same operand and capacity checks and publishes the same event, and skips the numbers
(``GetValue`` returns 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from catlass_py.arch.memory import LocalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.errors import ConfigError
from catlass_py.integers import offset_runs
from catlass_py.numerics import dtypes as dt
from catlass_py.numerics.rounding import RoundMode, cast as _cast

BYTES_PER_REPEAT = 256
BYTES_PER_BLOCK = 32
BLOCKS_PER_REPEAT = 8
MAX_REPEAT = 255
FULL_MASK = (1 << 128) - 1
MASK_REGISTER = "VECTOR_MASK"


# -- parameters -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BinaryRepeatParams:
    """Ascend C ``BinaryRepeatParams(dstBlkStride, src0BlkStride, src1BlkStride, dstRepStride, src0RepStride,
    src1RepStride)`` (data blocks of 32 bytes)."""

    dst_blk_stride: int = 1
    src0_blk_stride: int = 1
    src1_blk_stride: int = 1
    dst_rep_stride: int = 8
    src0_rep_stride: int = 8
    src1_rep_stride: int = 8


@dataclass(frozen=True)
class UnaryRepeatParams:
    """Ascend C ``UnaryRepeatParams(dstBlkStride, srcBlkStride, dstRepStride, srcRepStride)``."""

    dst_blk_stride: int = 1
    src_blk_stride: int = 1
    dst_rep_stride: int = 8
    src_rep_stride: int = 8


@dataclass(frozen=True)
class BrcbRepeatParams:
    """Ascend C ``BrcbRepeatParams(dstBlkStride, dstRepStride)``."""

    dst_blk_stride: int = 1
    dst_rep_stride: int = 8


@dataclass(frozen=True)
class DataCopyParams:
    """Ascend C ``DataCopyParams(blockCount, blockLen, srcStride, dstStride)``: ``block_count`` bursts of
    ``block_len`` data blocks (32 bytes), gaps of ``src_stride`` / ``dst_stride`` data blocks between them."""

    block_count: int = 1
    block_len: int = 0
    src_stride: int = 0
    dst_stride: int = 0


# -- the mask register ------------------------------------------------------------------------------------
def set_vector_mask(ctx, mask_high: int, mask_low: int) -> None:
    """Ascend C ``SetVectorMask<T>(maskHigh, maskLow)`` (``uint64_t`` words; ``(uint64_t)-1`` is all ones)."""
    ctx.registers[MASK_REGISTER] = ((int(mask_high) & (2**64 - 1)) << 64) | (int(mask_low) & (2**64 - 1))


def reset_vector_mask(ctx) -> None:
    """``SetVectorMask<int8_t>((uint64_t)-1, (uint64_t)-1)``."""
    ctx.registers[MASK_REGISTER] = FULL_MASK


def vector_mask(ctx) -> int:
    """The 128-bit mask register of the core (full at launch)."""
    return ctx.registers.get(MASK_REGISTER, FULL_MASK)


def set_mask_count_prefix(ctx, n: int) -> None:
    """The mask that selects elements ``0 .. n-1`` of a repeat (``n <= 128``)."""
    if not 0 <= n <= 128:
        raise ConfigError(f"vector mask: prefix length must be in 0..128, got {n}")
    ctx.registers[MASK_REGISTER] = (1 << n) - 1 if n else 0


# -- element addressing -----------------------------------------------------------------------------------
@lru_cache(maxsize=4096)
def _mask_bits(mask: int, n: int) -> np.ndarray:
    """The ``n`` low bits of ``mask`` as a bool array (bit j at index j)."""
    bits = np.array([(mask >> j) & 1 for j in range(n)], dtype=bool)
    bits.flags.writeable = False
    return bits


@lru_cache(maxsize=4096)
def _lanes(mask: int, n: int) -> tuple:
    """Positions j < n of a repeat whose mask bit is set."""
    return tuple(np.flatnonzero(_mask_bits(mask, n)).tolist())


@lru_cache(maxsize=8192)
def _index(repeat: int, lanes: tuple, epb: int, blk: int, rep: int) -> np.ndarray:
    """Element offsets (repeat, lane) of an operand with ``epb`` elements per block."""
    lane = np.asarray(lanes, dtype=np.int64)
    per_lane = (lane // epb) * blk * epb + lane % epb
    idx = np.arange(repeat, dtype=np.int64)[:, None] * (rep * epb) + per_lane[None, :]
    idx.flags.writeable = False
    return idx


def _elements_per_block(t: LocalTensor) -> int:
    return BYTES_PER_BLOCK * 8 // t.dtype.bits


def _check_ub(op: str, *tensors: LocalTensor) -> None:
    for t in tensors:
        if not isinstance(t, LocalTensor) or t.position != "UB":
            where = t.position if isinstance(t, LocalTensor) else type(t).__name__
            raise ConfigError(f"{op}: operands must be UB tensors, got {where}")


def _check_repeat(op: str, repeat: int) -> None:
    if isinstance(repeat, bool) or not isinstance(repeat, (int, np.integer)) or not 0 <= repeat <= MAX_REPEAT:
        raise ConfigError(f"{op}: repeatTimes must be an int in 0..{MAX_REPEAT}, got {repeat!r}")


def _view_for(t: LocalTensor, idx: np.ndarray) -> np.ndarray:
    need = int(idx.max()) + 1 if idx.size else 0
    return t.view(need)


def _check_for(t: LocalTensor, idx: np.ndarray) -> None:
    """The capacity check of :func:`_view_for` without the bytes (timing-only cores)."""
    t.check(int(idx.max()) + 1 if idx.size else 0)


def element_runs(idx: np.ndarray) -> list[tuple[int, int, int, int]]:
    """Compress element offsets into ``(start, length, stride, count)`` runs (equal-length runs at a constant
    stride form one entry): :func:`catlass_py.integers.offset_runs` as a list."""
    return list(offset_runs(idx))


@lru_cache(maxsize=16384)
def _runs(key: tuple, builder) -> tuple:
    return offset_runs(builder(*key))


def accesses(t: LocalTensor, key: tuple, builder=None) -> tuple:
    """The bytes of ``t`` at the element offsets ``builder(*key)`` (default :func:`_index`) as MemAccess records.
    The runs are cached by the structural ``key``, so repeated instructions cost one dictionary lookup."""
    runs = _runs(key, builder or _index)
    return tuple(t.access(s, ln, st, c) for s, ln, st, c in runs)


def _emit(dst: LocalTensor, op: str, reads: tuple, writes: tuple, elements: int, info=None) -> None:
    """Publish the instruction; ``reads`` / ``writes`` are ``(tensor, key[, builder])`` operand descriptions,
    turned into MemAccess records only when an observer listens."""
    ctx = dst.ctx
    if ctx is not None and ctx.bus.instructions:
        ctx.emit(Pipe.V, op, flops=elements, nbytes=dst.dtype.nbytes(elements),
                 local_reads=sum((accesses(*r) for r in reads), ()),
                 local_writes=sum((accesses(*w) for w in writes), ()), info=info)


def _lanes_per_repeat(*tensors: LocalTensor) -> int:
    return BYTES_PER_REPEAT * 8 // max(t.dtype.bits for t in tensors)


def _current_lanes(ctx, n: int) -> tuple:
    return _lanes(vector_mask(ctx) & ((1 << n) - 1), n)


def _round_to(values: np.ndarray, t: LocalTensor) -> np.ndarray:
    if t.dtype == dt.BFLOAT16:
        return _cast(values.astype(np.float32), dt.BFLOAT16, RoundMode.RINT)
    return values.astype(t.dtype.numpy)


def _compute_view(values: np.ndarray, t: LocalTensor) -> np.ndarray:
    return values.astype(np.float32) if t.dtype == dt.BFLOAT16 else values


def _scalar(t: LocalTensor, value):
    return np.float32(value) if t.dtype == dt.BFLOAT16 else np.asarray(value).astype(t.dtype.numpy)[()]


# -- element-wise -----------------------------------------------------------------------------------------
_BINARY = {
    "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide,
    "Max": np.maximum, "Min": np.minimum,
}


def _binary(op: str, dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, repeat: int,
            params: BinaryRepeatParams) -> None:
    _check_ub(op, dst, src0, src1)
    _check_repeat(op, repeat)
    if not (dst.dtype == src0.dtype == src1.dtype):
        raise ConfigError(f"{op}: operands must share one dtype, got {dst.dtype}, {src0.dtype}, {src1.dtype}")
    lanes = _current_lanes(dst.ctx, _lanes_per_repeat(dst))
    epb = _elements_per_block(dst)
    k_d = (repeat, lanes, epb, params.dst_blk_stride, params.dst_rep_stride)
    k_0 = (repeat, lanes, epb, params.src0_blk_stride, params.src0_rep_stride)
    k_1 = (repeat, lanes, epb, params.src1_blk_stride, params.src1_rep_stride)
    i_d, i_0, i_1 = _index(*k_d), _index(*k_0), _index(*k_1)
    if i_d.size and not dst.computes:  # timing-only: the checks, no numbers
        for t, i in ((src0, i_0), (src1, i_1), (dst, i_d)):
            _check_for(t, i)
    elif i_d.size:
        a = _compute_view(_view_for(src0, i_0)[i_0], dst)
        b = _compute_view(_view_for(src1, i_1)[i_1], dst)
        with np.errstate(all="ignore"):
            res = _BINARY[op](a, b)
        _view_for(dst, i_d)[i_d] = _round_to(res, dst)
    _emit(dst, op, ((src0, k_0), (src1, k_1)), ((dst, k_d),), i_d.size,
          {"dtype": dst.dtype.name, "repeat": repeat})


def vadd(dst, src0, src1, repeat: int, params: BinaryRepeatParams = BinaryRepeatParams()) -> None:
    """Ascend C ``Add<T, false>(dst, src0, src1, mask, repeatTimes, repeatParams)``: ``dst = src0 + src1``."""
    _binary("Add", dst, src0, src1, repeat, params)


def vsub(dst, src0, src1, repeat: int, params: BinaryRepeatParams = BinaryRepeatParams()) -> None:
    """Ascend C ``Sub<T, false>``: ``dst = src0 - src1``."""
    _binary("Sub", dst, src0, src1, repeat, params)


def vmul(dst, src0, src1, repeat: int, params: BinaryRepeatParams = BinaryRepeatParams()) -> None:
    """Ascend C ``Mul<T, false>``: ``dst = src0 * src1``."""
    _binary("Mul", dst, src0, src1, repeat, params)


def vdiv(dst, src0, src1, repeat: int, params: BinaryRepeatParams = BinaryRepeatParams()) -> None:
    """Ascend C ``Div<T, false>``: ``dst = src0 / src1`` (IEEE division)."""
    _binary("Div", dst, src0, src1, repeat, params)


def vmax(dst, src0, src1, repeat: int, params: BinaryRepeatParams = BinaryRepeatParams()) -> None:
    """Ascend C ``Max<T, false>``: ``dst = max(src0, src1)``."""
    _binary("Max", dst, src0, src1, repeat, params)


def vmin(dst, src0, src1, repeat: int, params: BinaryRepeatParams = BinaryRepeatParams()) -> None:
    """Ascend C ``Min<T, false>``: ``dst = min(src0, src1)``."""
    _binary("Min", dst, src0, src1, repeat, params)


def _unary(op: str, fn, dst: LocalTensor, src: LocalTensor, repeat: int, params: UnaryRepeatParams,
           info=None) -> None:
    _check_ub(op, dst, src)
    _check_repeat(op, repeat)
    lanes = _current_lanes(dst.ctx, _lanes_per_repeat(dst, src))
    k_d = (repeat, lanes, _elements_per_block(dst), params.dst_blk_stride, params.dst_rep_stride)
    k_s = (repeat, lanes, _elements_per_block(src), params.src_blk_stride, params.src_rep_stride)
    i_d, i_s = _index(*k_d), _index(*k_s)
    if i_d.size and not dst.computes:  # timing-only: the checks, no numbers
        _check_for(src, i_s)
        _check_for(dst, i_d)
    elif i_d.size:
        with np.errstate(all="ignore"):
            res = fn(_view_for(src, i_s)[i_s])
        _view_for(dst, i_d)[i_d] = res
    _emit(dst, op, ((src, k_s),), ((dst, k_d),), i_d.size, info)


def _same(op: str, dst: LocalTensor, src: LocalTensor) -> None:
    if dst.dtype != src.dtype:
        raise ConfigError(f"{op}: operands must share one dtype, got {dst.dtype} and {src.dtype}")


def vmuls(dst, src, scalar, repeat: int, params: UnaryRepeatParams = UnaryRepeatParams()) -> None:
    """Ascend C ``Muls<T, false>(dst, src, scalar, mask, repeatTimes, repeatParams)``: ``dst = src * scalar``
    (the scalar converted to the element type first)."""
    _same("Muls", dst, src)
    s = _scalar(dst, scalar)
    _unary("Muls", lambda v: _round_to(_compute_view(v, dst) * s, dst), dst, src, repeat, params,
           {"dtype": dst.dtype.name, "repeat": repeat, "scalar": float(scalar)})


def vadds(dst, src, scalar, repeat: int, params: UnaryRepeatParams = UnaryRepeatParams()) -> None:
    """Ascend C ``Adds<T, false>``: ``dst = src + scalar``."""
    _same("Adds", dst, src)
    s = _scalar(dst, scalar)
    _unary("Adds", lambda v: _round_to(_compute_view(v, dst) + s, dst), dst, src, repeat, params,
           {"dtype": dst.dtype.name, "repeat": repeat, "scalar": float(scalar)})


def vexp(dst, src, repeat: int, params: UnaryRepeatParams = UnaryRepeatParams()) -> None:
    """Ascend C ``Exp<T, false>``: ``dst = e ** src``."""
    _same("Exp", dst, src)
    _unary("Exp", lambda v: _round_to(np.exp(_compute_view(v, dst)), dst), dst, src, repeat, params,
           {"dtype": dst.dtype.name, "repeat": repeat})


def vln(dst, src, repeat: int, params: UnaryRepeatParams = UnaryRepeatParams()) -> None:
    """Ascend C ``Ln<T, false>``: ``dst = ln(src)`` (numpy's float32 ``log``)."""
    _same("Ln", dst, src)
    _unary("Ln", lambda v: _round_to(np.log(_compute_view(v, dst)), dst), dst, src, repeat, params,
           {"dtype": dst.dtype.name, "repeat": repeat})


def vcast(dst, src, round_mode: RoundMode, repeat: int, params: UnaryRepeatParams = UnaryRepeatParams()) -> None:
    """Ascend C ``Cast<DstT, SrcT, false>(dst, src, roundMode, mask, repeatTimes, repeatParams)``: one repeat
    converts 256 bytes of the wider type (64 elements for fp32 <-> fp16/bf16)."""
    mode = RoundMode(round_mode)
    _unary("Cast", lambda v: _cast(v, dst.dtype, mode), dst, src, repeat, params,
           {"src": src.dtype.name, "dst": dst.dtype.name, "mode": mode.name, "repeat": repeat})


def duplicate(dst, scalar, repeat: int, dst_blk_stride: int = 1, dst_rep_stride: int = 8) -> None:
    """Ascend C ``Duplicate<T, false>(dst, scalar, mask, repeatTimes, dstBlkStride, dstRepStride)``."""
    _check_ub("Duplicate", dst)
    _check_repeat("Duplicate", repeat)
    lanes = _current_lanes(dst.ctx, _lanes_per_repeat(dst))
    k_d = (repeat, lanes, _elements_per_block(dst), dst_blk_stride, dst_rep_stride)
    i_d = _index(*k_d)
    if i_d.size and not dst.computes:  # timing-only: the check, no numbers
        _check_for(dst, i_d)
    elif i_d.size:
        _view_for(dst, i_d)[i_d] = _scalar(dst, scalar)
    _emit(dst, "Duplicate", (), ((dst, k_d),), i_d.size, {"dtype": dst.dtype.name, "repeat": repeat})


# -- reductions -------------------------------------------------------------------------------------------
def _tree_sum(x: np.ndarray, work) -> np.ndarray:
    """Pairwise sum over the last axis (length a power of two), rounding every partial sum to ``work``."""
    while x.shape[-1] > 1:
        x = (x[..., 0::2] + x[..., 1::2]).astype(work)
    return x[..., 0]


@lru_cache(maxsize=4096)
def _block_out(repeat: int, blocks: tuple, epb_dst: int, dst_rep: int) -> np.ndarray:
    idx = np.arange(repeat, dtype=np.int64)[:, None] * (dst_rep * epb_dst) + np.asarray(blocks, dtype=np.int64)[None, :]
    idx.flags.writeable = False
    return idx


@lru_cache(maxsize=4096)
def _strided(repeat: int, stride: int) -> np.ndarray:
    idx = np.arange(repeat, dtype=np.int64) * stride
    idx.flags.writeable = False
    return idx


def _reduce_source(op: str, dst: LocalTensor, src: LocalTensor, repeat: int, src_blk_stride: int,
                   src_rep_stride: int, fill):
    """(elements per block, mask bits, source key, the (repeat, lanes) values with ``fill`` in masked-out lanes)."""
    _check_ub(op, dst, src)
    _check_repeat(op, repeat)
    _same(op, dst, src)
    epb = _elements_per_block(src)
    n = BLOCKS_PER_REPEAT * epb
    mask = vector_mask(dst.ctx) & ((1 << n) - 1)
    bits = _mask_bits(mask, n)
    lanes = _lanes(mask, n)
    k_s = (repeat, lanes, epb, src_blk_stride, src_rep_stride)
    vals = None
    if repeat and mask and not dst.computes:  # timing-only: the check, no numbers (vals stays None)
        _check_for(src, _index(*k_s))
    elif repeat and mask:
        work = np.float32 if src.dtype == dt.BFLOAT16 else src.dtype.numpy
        vals = np.full((repeat, n), fill, dtype=work)
        i_s = _index(*k_s)
        vals[:, list(lanes)] = _view_for(src, i_s)[i_s].astype(work)
    return epb, bits, k_s, vals


def _block_reduce(op: str, dst: LocalTensor, src: LocalTensor, repeat: int, dst_rep_stride: int,
                  src_blk_stride: int, src_rep_stride: int) -> None:
    fill = 0.0 if op == "BlockReduceSum" else -np.inf
    epb, bits, k_s, vals = _reduce_source(op, dst, src, repeat, src_blk_stride, src_rep_stride, fill)
    bits = bits.reshape(BLOCKS_PER_REPEAT, epb)
    active = tuple(np.flatnonzero(bits.any(axis=1)).tolist())
    k_d = (repeat, active, _elements_per_block(dst), dst_rep_stride)
    if repeat and bits.any() and not dst.computes:
        _check_for(dst, _block_out(*k_d))
    if vals is not None:
        vals = vals.reshape(repeat, BLOCKS_PER_REPEAT, epb)
        with np.errstate(all="ignore"):
            if op == "BlockReduceSum":
                res = _tree_sum(vals, vals.dtype)
            else:
                res = vals.max(axis=-1)
        out = _block_out(*k_d)
        _view_for(dst, out)[out] = _round_to(res[:, list(active)], dst)
    _emit(dst, op, ((src, k_s),), ((dst, k_d, _block_out),), repeat * len(k_s[1]),
          {"dtype": dst.dtype.name, "repeat": repeat})


def block_reduce_sum(dst, src, repeat: int, dst_rep_stride: int, src_blk_stride: int, src_rep_stride: int) -> None:
    """Ascend C ``BlockReduceSum<T, false>(dst, src, repeatTimes, mask, dstRepStride, srcBlkStride,
    srcRepStride)``: the sum of each data block's active elements; one repeat writes 8 consecutive results,
    repeats ``dstRepStride`` data blocks apart."""
    _block_reduce("BlockReduceSum", dst, src, repeat, dst_rep_stride, src_blk_stride, src_rep_stride)


def block_reduce_max(dst, src, repeat: int, dst_rep_stride: int, src_blk_stride: int, src_rep_stride: int) -> None:
    """Ascend C ``BlockReduceMax<T, false>``: the maximum of each data block's active elements."""
    _block_reduce("BlockReduceMax", dst, src, repeat, dst_rep_stride, src_blk_stride, src_rep_stride)


def _whole_reduce(op: str, dst: LocalTensor, src: LocalTensor, repeat: int, dst_rep_stride: int,
                  src_blk_stride: int, src_rep_stride: int) -> None:
    summing = op in ("WholeReduceSum", "RepeatReduceSum")
    epb, bits, k_s, vals = _reduce_source(op, dst, src, repeat, src_blk_stride, src_rep_stride,
                                          0.0 if summing else -np.inf)
    k_d = (repeat, dst_rep_stride)
    wrote = vals is not None or (repeat and bits.any() and not dst.computes)
    if wrote and vals is None:  # timing-only
        _check_for(dst, _strided(*k_d))
    if vals is not None:
        with np.errstate(all="ignore"):
            if summing:
                res = _tree_sum(_tree_sum(vals.reshape(repeat, BLOCKS_PER_REPEAT, epb), vals.dtype), vals.dtype)
            else:
                res = vals.max(axis=-1)
        out = _strided(*k_d)
        _view_for(dst, out)[out] = _round_to(res, dst)
    _emit(dst, op, ((src, k_s),), ((dst, k_d, _strided),) if wrote else (),
          repeat * len(k_s[1]), {"dtype": dst.dtype.name, "repeat": repeat})


def whole_reduce_sum(dst, src, repeat: int, dst_rep_stride: int, src_blk_stride: int, src_rep_stride: int) -> None:
    """Ascend C ``WholeReduceSum<T, false>(dst, src, mask, repeatTimes, dstRepStride, srcBlkStride,
    srcRepStride)``: the sum of each repeat's active elements, one result per repeat, ``dstRepStride``
    elements apart."""
    _whole_reduce("WholeReduceSum", dst, src, repeat, dst_rep_stride, src_blk_stride, src_rep_stride)


def repeat_reduce_sum(dst, src, repeat: int, dst_blk_stride: int, src_blk_stride: int, dst_rep_stride: int,
                      src_rep_stride: int) -> None:
    """Ascend C ``RepeatReduceSum<T, false>(dst, src, repeatTimes, mask, dstBlkStride, srcBlkStride, dstRepStride,
    srcRepStride)``: the sum of each repeat's active elements, one result per repeat, ``dstRepStride`` elements
    apart (summed like :func:`whole_reduce_sum`)."""
    _whole_reduce("RepeatReduceSum", dst, src, repeat, dst_rep_stride, src_blk_stride, src_rep_stride)


def whole_reduce_max(dst, src, repeat: int, dst_rep_stride: int, src_blk_stride: int, src_rep_stride: int) -> None:
    """Ascend C ``WholeReduceMax<T, false>(..., ReduceOrder::ORDER_ONLY_VALUE)``: each repeat's maximum."""
    _whole_reduce("WholeReduceMax", dst, src, repeat, dst_rep_stride, src_blk_stride, src_rep_stride)


# -- count-based (level 2) forms ----------------------------------------------------------------------------
def _count_op(op: str, fn, dst: LocalTensor, srcs: tuple, count: int, info=None) -> None:
    _check_ub(op, dst, *srcs)
    key = (count,)
    if count and not dst.computes:  # timing-only: the checks, no numbers
        for t in (*srcs, dst):
            t.check(count)
    elif count:
        with np.errstate(all="ignore"):
            res = fn(*(s.view(count) for s in srcs))
        dst.view(count)[:] = res
    _emit(dst, op, tuple((s, key, _contiguous) for s in srcs), ((dst, key, _contiguous),), count, info)


def vadd_count(dst, src0, src1, count: int) -> None:
    """Ascend C ``Add(dst, src0, src1, count)`` (level 2: the first ``count`` elements; the mask register is
    left as it was)."""
    if not (dst.dtype == src0.dtype == src1.dtype):
        raise ConfigError(f"Add: operands must share one dtype, got {dst.dtype}, {src0.dtype}, {src1.dtype}")
    _count_op("Add", lambda a, b: _round_to(_compute_view(a, dst) + _compute_view(b, dst), dst), dst, (src0, src1),
              count, {"dtype": dst.dtype.name, "count": count})


def vln_count(dst, src, count: int) -> None:
    """Ascend C ``Ln(dst, src, count)`` (level 2)."""
    _same("Ln", dst, src)
    _count_op("Ln", lambda v: _round_to(np.log(_compute_view(v, dst)), dst), dst, (src,), count,
              {"dtype": dst.dtype.name, "count": count})


def vcast_count(dst, src, round_mode: RoundMode, count: int) -> None:
    """Ascend C ``Cast(dst, src, roundMode, count)`` (level 2)."""
    mode = RoundMode(round_mode)
    _count_op("Cast", lambda v: _cast(v, dst.dtype, mode), dst, (src,), count,
              {"src": src.dtype.name, "dst": dst.dtype.name, "mode": mode.name, "count": count})


def get_value(t: LocalTensor, index: int = 0):
    """Ascend C ``LocalTensor::GetValue(index)``: one scalar read of UB by the scalar unit (PIPE_S)."""
    _check_ub("GetValue", t)
    if not t.computes:  # timing-only: the check; the value is a number nobody computed
        t.check(index + 1)
        value = None
    else:
        value = t.view(index + 1)[index]
    ctx = t.ctx
    if ctx is not None and ctx.bus.instructions:
        ctx.emit(Pipe.S, "GetValue", local_reads=(t.access(index, 1),))
    if value is None:
        return 0
    return value.item() if t.dtype != dt.BFLOAT16 else float(value)


# -- broadcast and copies ---------------------------------------------------------------------------------
@lru_cache(maxsize=1024)
def _brcb_dst(repeat: int, epb: int, blk: int, rep: int) -> np.ndarray:
    blocks = (np.arange(repeat, dtype=np.int64)[:, None] * rep
              + np.arange(BLOCKS_PER_REPEAT, dtype=np.int64)[None, :] * blk)
    idx = blocks[..., None] * epb + np.arange(epb, dtype=np.int64)
    idx.flags.writeable = False
    return idx


@lru_cache(maxsize=4096)
def _contiguous(count: int) -> np.ndarray:
    idx = np.arange(count, dtype=np.int64)
    idx.flags.writeable = False
    return idx


def brcb(dst: LocalTensor, src: LocalTensor, repeat: int, params: BrcbRepeatParams = BrcbRepeatParams()) -> None:
    """Ascend C ``Brcb(dst, src, repeatTimes, BrcbRepeatParams)`` (16/32-bit): each repeat takes 8 consecutive
    source elements and fills one destination data block with each (block ``i`` of repeat ``r`` at
    ``r * dstRepStride + i * dstBlkStride`` data blocks). No mask."""
    _check_ub("Brcb", dst, src)
    _check_repeat("Brcb", repeat)
    if dst.dtype.bits != src.dtype.bits or dst.dtype.bits not in (16, 32):
        raise ConfigError(f"Brcb: 16- or 32-bit operands of one width, got {src.dtype} -> {dst.dtype}")
    epb = _elements_per_block(dst)
    k_s = (repeat * BLOCKS_PER_REPEAT,)
    k_d = (repeat, epb, params.dst_blk_stride, params.dst_rep_stride)
    if repeat and not dst.computes:  # timing-only: the checks, no numbers
        src.check(repeat * BLOCKS_PER_REPEAT)
        _check_for(dst, _brcb_dst(*k_d))
    elif repeat:
        vals = src.view(repeat * BLOCKS_PER_REPEAT)
        if src.dtype.numpy != dst.dtype.numpy:
            vals = vals.view(dst.dtype.numpy)
        out = _brcb_dst(*k_d)
        _view_for(dst, out)[out] = np.repeat(vals.reshape(repeat, BLOCKS_PER_REPEAT)[..., None], epb, axis=-1)
    _emit(dst, "Brcb", ((src, k_s, _contiguous),), ((dst, k_d, _brcb_dst),),
          repeat * BLOCKS_PER_REPEAT * epb, {"repeat": repeat})


@lru_cache(maxsize=1024)
def _bursts(count: int, length: int, pitch: int) -> np.ndarray:
    idx = np.arange(count, dtype=np.int64)[:, None] * pitch + np.arange(length, dtype=np.int64)[None, :]
    idx.flags.writeable = False
    return idx


def copy_ub_to_ub(dst: LocalTensor, src: LocalTensor, params: DataCopyParams) -> None:
    """Ascend C ``DataCopy(dstLocal, srcLocal, DataCopyParams)`` between two UB tensors (run by the vector
    unit, PIPE_V): ``block_count`` bursts of ``block_len`` data blocks with ``src_stride`` / ``dst_stride``
    data blocks of gap."""
    _check_ub("DataCopy", dst, src)
    if dst.dtype.bits != src.dtype.bits:
        raise ConfigError(f"DataCopy: UB -> UB operands must have one width, got {src.dtype} -> {dst.dtype}")
    epb = _elements_per_block(dst)
    burst = params.block_len * epb
    k_s = (params.block_count, burst, (params.block_len + params.src_stride) * epb)
    k_d = (params.block_count, burst, (params.block_len + params.dst_stride) * epb)
    i_s, i_d = _bursts(*k_s), _bursts(*k_d)
    if i_d.size and not dst.computes:  # timing-only: the checks, no numbers
        _check_for(src, i_s)
        _check_for(dst, i_d)
    elif i_d.size:
        vals = _view_for(src, i_s)[i_s]
        if src.dtype.numpy != dst.dtype.numpy:
            vals = vals.view(dst.dtype.numpy)
        _view_for(dst, i_d)[i_d] = vals
    _emit(dst, "DataCopy", ((src, k_s, _bursts),), ((dst, k_d, _bursts),), i_d.size,
          {"blocks": params.block_count})


__all__ = [
    "BinaryRepeatParams",
    "BrcbRepeatParams",
    "DataCopyParams",
    "FULL_MASK",
    "UnaryRepeatParams",
    "accesses",
    "block_reduce_max",
    "block_reduce_sum",
    "brcb",
    "copy_ub_to_ub",
    "duplicate",
    "element_runs",
    "get_value",
    "repeat_reduce_sum",
    "reset_vector_mask",
    "set_mask_count_prefix",
    "set_vector_mask",
    "vadd",
    "vadd_count",
    "vadds",
    "vcast",
    "vcast_count",
    "vdiv",
    "vector_mask",
    "vexp",
    "vln",
    "vln_count",
    "vmax",
    "vmin",
    "vmul",
    "vmuls",
    "vsub",
    "whole_reduce_max",
    "whole_reduce_sum",
]
