"""Ascend C ``DataCopy`` / ``DataCopyPad`` between global memory and UB or L1, in the parameter forms CATLASS's
attention kernels use (``epilogue/block/block_epilogue_online_softmax_no_mask.hpp``,
``block_epilogue_rescale_o_no_split_row.hpp``, ``block_epilogue_mla_*.hpp``, and the ``ndNum`` overload of
``Gemm::Tile::CopyGmToL1`` in ``gemm/tile/atlasa2/copy_gm_to_l1.hpp``).

=======================  ======  ==========================================================================
call                     pipe    bytes moved
=======================  ======  ==========================================================================
``data_copy_gm_to_ub``   MTE2    ``DataCopy(ub, gm, DataCopyParams)``: ``blockCount`` bursts of ``blockLen``
                                 32-byte blocks; ``srcStride`` / ``dstStride`` blocks of gap after each
``data_copy_ub_to_gm``   MTE3    the same from UB to GM
``data_copy_pad_gm_to_   MTE2    ``DataCopyPad(ub, gm, DataCopyExtParams)``: ``blockCount`` bursts of
ub``                             ``blockLen`` *bytes*; GM gap ``srcStride`` bytes, each burst starts a new
                                 32-byte block in UB, plus ``dstStride`` blocks of gap; bytes of the last
                                 block after the burst keep their contents (``isPad = false``)
``data_copy_pad_ub_to_   MTE3    the reverse: UB bursts 32-byte aligned with ``srcStride`` blocks of gap, GM
gm``                             gap ``dstStride`` bytes; exactly ``blockLen`` bytes per burst reach GM
``data_copy_nd2nz``      MTE2    ``DataCopy(l1, gm, Nd2NzParams)``: ``ndNum`` row-major matrices of ``nValue``
                                 rows x ``dValue`` elements into zN panels (element ``(i, j, c)`` lands at
                                 ``i*dstNzMatrixStride + j*dstNzNStride*C0 + (c//C0)*dstNzC0Stride*C0 + c%C0``);
                                 the tail of each row's last 32-byte chunk is zero-filled
=======================  ======  ==========================================================================

Each call is one instruction event that declares the GM and on-chip bytes it reads and writes. On a core of a
timing-only launch (``LaunchParams(numerics=False)``) the copies make the same bounds checks and publish the same
events without moving a byte; ``GetValue`` still reads GM (the sequence lengths and block tables it reads steer
the control flow and are real data in a timing-only run too).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from catlass_py.arch.memory import GlobalTensor, LocalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.errors import AlignmentError, ConfigError, OutOfBoundsError
from catlass_py.integers import offset_runs
from catlass_py.tile.ascendc_vector import DataCopyParams

BLOCK = 32


@dataclass(frozen=True)
class DataCopyExtParams:
    """Ascend C ``DataCopyExtParams(blockCount, blockLen, srcStride, dstStride, rsv)`` of ``DataCopyPad``
    (``blockLen`` and the GM-side stride in bytes, the UB-side stride in 32-byte blocks)."""

    block_count: int = 1
    block_len: int = 0
    src_stride: int = 0
    dst_stride: int = 0
    rsv: int = 0


@dataclass(frozen=True)
class Nd2NzParams:
    """Ascend C ``Nd2NzParams``: ``ndNum`` matrices of ``nValue`` rows x ``dValue`` elements, ``srcDValue``
    elements between source rows, ``srcNdMatrixStride`` between source matrices; destination strides
    ``dstNzC0Stride`` / ``dstNzNStride`` (32-byte blocks) and ``dstNzMatrixStride`` (elements)."""

    nd_num: int = 1
    n_value: int = 0
    d_value: int = 0
    src_nd_matrix_stride: int = 0
    src_d_value: int = 0
    dst_nz_c0_stride: int = 0
    dst_nz_n_stride: int = 0
    dst_nz_matrix_stride: int = 0


@lru_cache(maxsize=2048)
def _bursts(count: int, length: int, pitch: int) -> np.ndarray:
    idx = np.arange(count, dtype=np.int64)[:, None] * pitch + np.arange(length, dtype=np.int64)[None, :]
    idx.flags.writeable = False
    return idx


@lru_cache(maxsize=2048)
def _runs(count: int, length: int, pitch: int) -> tuple:
    if count == 0 or length == 0:
        return ()
    if count == 1 or pitch == length:
        return ((0, count * length if pitch == length else length, 0, 1),)
    return ((0, length, pitch, count),)


def _acc(t, count: int, length: int, pitch: int) -> tuple:
    return tuple(t.access(*r) for r in _runs(count, length, pitch))


def _elems(t, nbytes: int, what: str) -> int:
    if (nbytes * 8) % t.dtype.bits:
        raise AlignmentError(f"{what}: {nbytes} bytes is not a whole number of {t.dtype} elements")
    return nbytes * 8 // t.dtype.bits


def _ub(op: str, t) -> None:
    if not isinstance(t, LocalTensor) or t.position != "UB":
        raise ConfigError(f"{op}: the local operand must be a UB tensor, got {t!r}")


def _gm_view(gm: GlobalTensor, extent: int, op: str, write: bool) -> np.ndarray:
    try:
        return gm.view(extent, write=write)
    except OutOfBoundsError as exc:
        raise OutOfBoundsError(f"{op}: {exc}") from None


def _gm_check(gm: GlobalTensor, extent: int, op: str, write: bool) -> None:
    """The checks of :func:`_gm_view` without the bytes (timing-only cores)."""
    try:
        gm.check(extent, write=write)
    except OutOfBoundsError as exc:
        raise OutOfBoundsError(f"{op}: {exc}") from None


def _move(op: str, pipe: Pipe, dst, src, count: int, length: int, dst_pitch: int, src_pitch: int) -> None:
    """``count`` bursts of ``length`` elements between GM and UB; pitches in elements."""
    i_s, i_d = _bursts(count, length, src_pitch), _bursts(count, length, dst_pitch)
    gm_is_src = isinstance(src, GlobalTensor)
    local = dst if gm_is_src else src
    if i_d.size and not local.computes:  # timing-only: the checks, no bytes
        ext_s, ext_d = int(i_s.max()) + 1, int(i_d.max()) + 1
        if gm_is_src:
            _gm_check(src, ext_s, op, False)
            dst.check(ext_d)
        else:
            src.check(ext_s)
            _gm_check(dst, ext_d, op, True)
    elif i_d.size:
        ext_s, ext_d = int(i_s.max()) + 1, int(i_d.max()) + 1
        sv = _gm_view(src, ext_s, op, False) if gm_is_src else src.view(ext_s)
        dv = _gm_view(dst, ext_d, op, True) if not gm_is_src else dst.view(ext_d)
        dv[i_d] = sv[i_s]
    ctx = local.ctx
    if ctx is not None and ctx.bus.instructions:
        r, w = _acc(src, count, length, src_pitch), _acc(dst, count, length, dst_pitch)
        kw = {"gm_reads": r, "local_writes": w} if gm_is_src else {"local_reads": r, "gm_writes": w}
        ctx.emit(pipe, op, nbytes=src.dtype.nbytes(count * length), info={"bursts": count}, **kw)


def data_copy_gm_to_ub(dst: LocalTensor, src: GlobalTensor, params: DataCopyParams) -> None:
    """Ascend C ``DataCopy(ubTensor, gmTensor, DataCopyParams)`` (MTE2)."""
    _ub("DataCopy", dst)
    e = BLOCK * 8 // dst.dtype.bits
    n = params.block_len * e
    _move("DataCopy", Pipe.MTE2, dst, src, params.block_count, n, n + params.dst_stride * e,
          n + params.src_stride * e)


def data_copy_ub_to_gm(dst: GlobalTensor, src: LocalTensor, params: DataCopyParams) -> None:
    """Ascend C ``DataCopy(gmTensor, ubTensor, DataCopyParams)`` (MTE3)."""
    _ub("DataCopy", src)
    e = BLOCK * 8 // src.dtype.bits
    n = params.block_len * e
    _move("DataCopy", Pipe.MTE3, dst, src, params.block_count, n, n + params.dst_stride * e,
          n + params.src_stride * e)


def data_copy_pad_gm_to_ub(dst: LocalTensor, src: GlobalTensor, params: DataCopyExtParams) -> None:
    """Ascend C ``DataCopyPad(ubTensor, gmTensor, DataCopyExtParams, DataCopyPadExtParams{false, 0, 0, 0})``
    (MTE2)."""
    _ub("DataCopyPad", dst)
    n = _elems(dst, params.block_len, "DataCopyPad")
    ub_pitch = -(-params.block_len // BLOCK) * BLOCK + params.dst_stride * BLOCK
    _move("DataCopyPad", Pipe.MTE2, dst, src, params.block_count, n, _elems(dst, ub_pitch, "DataCopyPad"),
          n + _elems(dst, params.src_stride, "DataCopyPad"))


def data_copy_pad_ub_to_gm(dst: GlobalTensor, src: LocalTensor, params: DataCopyExtParams) -> None:
    """Ascend C ``DataCopyPad(gmTensor, ubTensor, DataCopyExtParams)`` (MTE3)."""
    _ub("DataCopyPad", src)
    n = _elems(src, params.block_len, "DataCopyPad")
    ub_pitch = -(-params.block_len // BLOCK) * BLOCK + params.src_stride * BLOCK
    _move("DataCopyPad", Pipe.MTE3, dst, src, params.block_count, n, n + _elems(src, params.dst_stride, "DataCopyPad"),
          _elems(src, ub_pitch, "DataCopyPad"))


@lru_cache(maxsize=1024)
def _nd2nz_index(p: Nd2NzParams, c0: int) -> tuple[np.ndarray, np.ndarray, int]:
    """(source element offsets (nd, n, d), destination offsets (nd, n, d_padded), padded width)."""
    width = -(-p.d_value // c0) * c0
    i = np.arange(p.nd_num, dtype=np.int64)[:, None, None]
    j = np.arange(p.n_value, dtype=np.int64)[None, :, None]
    c = np.arange(width, dtype=np.int64)[None, None, :]
    dst = i * p.dst_nz_matrix_stride + j * p.dst_nz_n_stride * c0 + (c // c0) * p.dst_nz_c0_stride * c0 + c % c0
    cs = np.arange(p.d_value, dtype=np.int64)[None, None, :]
    src = i * p.src_nd_matrix_stride + j * p.src_d_value + cs
    src.flags.writeable = False
    dst.flags.writeable = False
    return src, dst, width


@lru_cache(maxsize=1024)
def _index_runs(key: tuple, which: int) -> tuple:
    return offset_runs(_nd2nz_index(*key)[which])


def gm_get_value(ctx, gm: GlobalTensor, index: int) -> int:
    """Ascend C ``GlobalTensor::GetValue(index)``: one scalar read of GM on PIPE_S (an int)."""
    value = _gm_view(gm, index + 1, "GetValue", False)[index]
    if ctx is not None and ctx.bus.instructions:
        ctx.emit(Pipe.S, "GetValue", gm_reads=(gm.access(index, 1),))
    return value.item()


def data_copy_nd2nz(dst: LocalTensor, src: GlobalTensor, params: Nd2NzParams) -> None:
    """Ascend C ``DataCopy(l1Tensor, gmTensor, Nd2NzParams)`` (MTE2): see the module docstring."""
    if not isinstance(dst, LocalTensor) or dst.position != "L1":
        raise ConfigError(f"DataCopy(Nd2NzParams): the destination must be an L1 tensor, got {dst!r}")
    c0 = dst.dtype.c0
    i_s, i_d, width = _nd2nz_index(params, c0)
    if i_s.size and not dst.computes:  # timing-only: the checks, no bytes
        _gm_check(src, int(i_s.max()) + 1, "DataCopy(Nd2NzParams)", False)
        dst.check(int(i_d.max()) + 1)
    elif i_s.size:
        vals = _gm_view(src, int(i_s.max()) + 1, "DataCopy(Nd2NzParams)", False)[i_s]
        if width != params.d_value:
            vals = np.concatenate([vals, np.zeros(vals.shape[:2] + (width - params.d_value,), vals.dtype)], axis=2)
        dst.view(int(i_d.max()) + 1)[i_d] = vals
    ctx = dst.ctx
    if ctx is not None and ctx.bus.instructions:
        key = (params, c0)
        ctx.emit(Pipe.MTE2, "DataCopyNd2Nz", nbytes=src.dtype.nbytes(int(i_s.size)),
                 gm_reads=tuple(src.access(*r) for r in _index_runs(key, 0)) or (src.access(0, 0),),
                 local_writes=tuple(dst.access(*r) for r in _index_runs(key, 1)),
                 info={"nd_num": params.nd_num, "rows": params.n_value, "cols": params.d_value})


__all__ = [
    "DataCopyExtParams",
    "DataCopyParams",
    "Nd2NzParams",
    "data_copy_gm_to_ub",
    "data_copy_nd2nz",
    "data_copy_pad_gm_to_ub",
    "data_copy_pad_ub_to_gm",
    "data_copy_ub_to_gm",
    "gm_get_value",
]
