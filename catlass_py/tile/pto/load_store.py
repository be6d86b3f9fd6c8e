"""PTO ``TLOAD`` / ``TSTORE``: move a tile's valid region between global memory and a tile.

Counterparts: ``docs/isa/TLOAD.md`` / ``TSTORE.md`` and ``include/pto/cpu/tile_offsets.hpp``
(``MapTileIndicesToGlobalOffset``). The GM side is any CATLASS layout of the region (RowMajor = ND,
ColumnMajor = DN, zN = NZ, ...) or one of the MX scale formats of :func:`mx_gm_layout`. A boxed destination
has the rest of the box grid its region touches filled with zeros (the ND -> NZ DMA pads). ``TSTORE`` from an
Acc tile goes through the fixpipe (cast mode chosen by the dtypes, or scalar / vector quant as ``TMOV``).
"""

from __future__ import annotations

import numpy as np

from catlass_py.arch.memory import GlobalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.layout import ColumnMajor, RowMajor, nN, zN, zZ
from catlass_py.numerics.packing import unpack_fp4
from catlass_py.tile._region import gm_check, gm_read, gm_write, region_access
from catlass_py.tile.pto._common import emit, listening, region
from catlass_py.tile.pto.fixpipe import (
    DEFAULT_OPTIONS,
    FixpipeOptions,
    ReluPreMode,
    fixpipe_apply,
    fixpipe_check,
    fixpipe_reads,
    pre_quant_mode,
)
from catlass_py.tile.pto.quant_reg import FPC, QUANT_PRE, point_fpc, set_quant_pre
from catlass_py.tile.pto.tile import PadValue, SLayout, Tile, TileType, pad_element
from catlass_py.tile.pto.tmov import _padded_shape, _padded_write
from catlass_py.tile.quant import QuantMode

MX_FORMATS = ("MX_A_ND", "MX_A_DN", "MX_A_ZZ", "MX_B_ND", "MX_B_DN", "MX_B_NN")


def mx_gm_layout(kind: str, rows: int, cols: int, ld: int | None = None):
    """CATLASS layout of an MX scale region in GM for PTO's MX ``Layout`` values (pto-mx-semantics 4.5).

    Left scales SA (``rows`` = M, ``cols`` = KG = K/32): ``MX_A_ND`` [M][KG] (``ld`` = row stride, default
    ``cols``); ``MX_A_DN`` [KG/2][M][2] (``ld`` = total M); ``MX_A_ZZ`` [M/16][KG/2][16][2] (``ld`` = total KG).
    Right scales SB (``rows`` = KG, ``cols`` = N): ``MX_B_ND`` [KG/2][N][2] (``ld`` = total N);
    ``MX_B_DN`` [N][KG] (``ld`` = total KG); ``MX_B_NN`` [N/16][KG/2][16][2] (``ld`` = total KG).
    """
    kind = kind.upper()
    if kind not in MX_FORMATS:
        raise ArgumentError(f"kind: expected one of {MX_FORMATS}, got {kind!r}")
    rows, cols = int(rows), int(cols)
    kg_even = lambda v: -(-v // 2)  # noqa: E731 - pairs of groups
    if kind == "MX_A_ND":
        return RowMajor(rows, cols, cols if ld is None else ld)
    if kind == "MX_B_DN":
        return ColumnMajor(rows, cols, rows if ld is None else ld)
    if kind == "MX_A_DN":
        ld = rows if ld is None else ld
        return zN(rows, cols, (1, rows, 2, kg_even(cols)), (1, 2, 1, 2 * ld))
    if kind == "MX_B_ND":
        ld = cols if ld is None else ld
        return nN(rows, cols, (2, kg_even(rows), 1, cols), (1, 2 * ld, 1, 2))
    if kind == "MX_A_ZZ":
        ld = cols if ld is None else ld
        return zZ(rows, cols, (16, -(-rows // 16), 2, kg_even(cols)), (2, ld * 16, 1, 32))
    ld = rows if ld is None else ld  # MX_B_NN
    return nN(rows, cols, (2, kg_even(rows), 16, -(-cols // 16)), (1, 32, 2, ld * 16))


class MxGmStack:
    """A PTO ``GlobalTensor<e8m0, Shape<N0, N1, N2, 16, 2>, Stride<s0, s1, 32, 2, 1>, Layout::MX_A_ZZ / MX_B_NN>``
    with ``N0 > 1``: ``count`` scale regions ``stride0`` elements apart, each one ``part`` (a CATLASS layout). TLOAD
    stitches them along the tile's rows (MX_A_ZZ) or columns (MX_B_NN), as ``TLoadMxCubeZZ2ZZ`` /
    ``TLoadMxCubeNN2NN`` of ``include/pto/npu/a5/TLoad.hpp`` place slice ``i`` at tile row (column) ``i * part.rows``
    (``i * part.cols``). Built by :func:`mx_gm_tensor`."""

    __slots__ = ("kind", "part", "count", "stride0")

    def __init__(self, kind: str, part, count: int, stride0: int):
        self.kind, self.part, self.count, self.stride0 = kind, part, int(count), int(stride0)

    @property
    def along_rows(self) -> bool:
        return self.kind == "MX_A_ZZ"

    @property
    def rows(self) -> int:
        return self.part.rows * (self.count if self.along_rows else 1)

    @property
    def cols(self) -> int:
        return self.part.cols * (1 if self.along_rows else self.count)

    def slices(self, rows: int, cols: int):
        """``(element offset, tile row0, col0, rows, cols)`` of each slice the region ``[0:rows, 0:cols]`` meets."""
        step = self.part.rows if self.along_rows else self.part.cols
        out = []
        for i in range(self.count):
            lo = i * step
            if self.along_rows and lo < rows:
                out.append((i * self.stride0, lo, 0, min(step, rows - lo), cols))
            elif not self.along_rows and lo < cols:
                out.append((i * self.stride0, 0, lo, rows, min(step, cols - lo)))
        return out

    def __repr__(self):
        return f"MxGmStack({self.kind}, {self.count} x {self.part!r}, stride0={self.stride0})"


def mx_gm_tensor(kind: str, shape, stride):
    """The GM side of a TLOAD of MX scales given as PTO declares it: ``GlobalTensor<e8m0, Shape<5>, Stride<5>,
    Layout::kind>`` (``include/pto/common/pto_tile.hpp``'s ``TileShape2D`` / ``BaseShape2D`` build these).

    ``MX_A_ND`` ``[1, 1, M, KG/2, 2]`` strides ``(.., .., ld, 2, 1)``; ``MX_A_DN`` ``[1, 1, KG/2, M, 2]`` strides
    ``(.., .., 2*ld, 2, 1)``; ``MX_B_ND`` ``[1, 1, KG/2, N, 2]`` strides ``(.., .., 2*ld, 2, 1)``; ``MX_B_DN``
    ``[1, 1, N, KG/2, 2]`` strides ``(.., .., ld, 2, 1)``; ``MX_A_ZZ`` ``[N0, M/16, KG/2, 16, 2]`` and ``MX_B_NN``
    ``[N0, N/16, KG/2, 16, 2]`` strides ``(s0, s1, 32, 2, 1)``. Returns the :func:`mx_gm_layout` of the region, or
    for ZZ / NN with ``N0 > 1`` an :class:`MxGmStack` of them. The checks are TLoadMxCubeCheck's
    (``include/pto/npu/a5/TLoad.hpp``): the ND / DN forms are 3-D (``shape[0] == shape[1] == 1``), the innermost
    dimension is a pair of scales, ZZ / NN boxes are 16 x 2.
    """
    kind = str(kind).upper()
    if kind not in MX_FORMATS:
        raise ArgumentError(f"kind: expected one of {MX_FORMATS}, got {kind!r}")
    try:
        shape = tuple(int(v) for v in shape)
        stride = tuple(int(v) for v in stride)
    except (TypeError, ValueError):
        raise ArgumentError(f"mx_gm_tensor: shape and stride must be 5 integers, got {shape!r}, {stride!r}") from None
    if len(shape) != 5 or len(stride) != 5 or min(shape) < 1 or min(stride) < 0:
        raise ArgumentError(f"mx_gm_tensor: shape and stride must be 5 positive integers, got {shape}, {stride}")
    if shape[4] != 2 or stride[4] != 1 or (stride[3] != 2 and kind not in ("MX_A_ZZ", "MX_B_NN")):
        raise ConfigError(f"TLOAD {kind}: the innermost dimension must be a dense pair of scales (shape[4] == 2, "
                          f"stride[3] == 2, stride[4] == 1), got shape {shape} stride {stride}")
    if kind in ("MX_A_ZZ", "MX_B_NN"):
        if shape[3] != 16 or stride[2:] != (32, 2, 1):
            raise ConfigError(f"TLOAD {kind}: GlobalTensor boxes are 16 x 2 scales, dense (shape[3:] == (16, 2), "
                              f"stride[2:] == (32, 2, 1)), got shape {shape} stride {stride}")
        if stride[1] % 16:
            raise ConfigError(f"TLOAD {kind}: stride[1] ({stride[1]}) must be a whole number of 16-scale rows")
        n0, n1, n2 = shape[:3]
        ld = stride[1] // 16
        part = (mx_gm_layout(kind, 16 * n1, 2 * n2, ld=ld) if kind == "MX_A_ZZ"
                else mx_gm_layout(kind, 2 * n2, 16 * n1, ld=ld))
        return part if n0 == 1 else MxGmStack(kind, part, n0, stride[0])
    if shape[0] != 1 or shape[1] != 1:
        raise ConfigError(f"TLOAD {kind}: the ND / DN scale forms are 3-D (shape[0] == shape[1] == 1), got {shape}")
    d2, d3 = shape[2], shape[3]
    if kind == "MX_A_ND":
        return mx_gm_layout(kind, d2, 2 * d3, ld=stride[2])
    if kind == "MX_B_DN":
        return mx_gm_layout(kind, 2 * d3, d2, ld=stride[2])
    if stride[2] % 2:
        raise ConfigError(f"TLOAD {kind}: stride[2] ({stride[2]}) must step whole scale pairs (even)")
    if kind == "MX_A_DN":
        return mx_gm_layout(kind, d3, 2 * d2, ld=stride[2] // 2)
    return mx_gm_layout(kind, 2 * d2, d3, ld=stride[2] // 2)  # MX_B_ND


def _gm_region(gm: GlobalTensor, layout, rows: int, cols: int, what: str) -> np.ndarray:
    if gm.dtype.packed:
        top = layout.plan(rows, cols, 1).max_offset + 1
        gm.check(top, what=what)
        return layout.read(unpack_fp4(gm.view(top), top), rows, cols)
    return gm_read(gm, layout, rows, cols, what)


def _gm_region_check(gm: GlobalTensor, layout, rows: int, cols: int, what: str, *, write: bool = False) -> None:
    """The bounds checks of :func:`_gm_region` (or of the write of TSTORE) without the bytes (timing-only runs)."""
    if gm.dtype.packed and not write:
        gm.check(layout.plan(rows, cols, 1).max_offset + 1, what=what)
    else:
        gm_check(gm, layout, rows, cols, what, write=write)


def _pad_partial_block(dst: Tile, rows: int, cols: int, *, write: bool = True) -> tuple[int, int]:
    """TLOAD's DMA pad (``TLoadGm2ubNd2nd`` / ``Dn2dn`` of ``include/pto/common/arch/memory/tload_common.hpp``):
    with a PadVal other than Null, each valid row of an ND Vec tile is filled from ``cols`` up to the next
    32-byte boundary with the pad value (each valid column of a DN tile from ``rows``). Returns the padded
    region's shape (``write=False``: only the shape, for timing-only runs)."""
    if dst.loc is not TileType.Vec or dst.pad is PadValue.Null or dst.fmt not in ("ND", "DN") or dst.dtype.packed:
        return rows, cols
    blk = 32 * 8 // dst.dtype.bits
    fill = pad_element(dst.pad, dst.dtype)
    if dst.fmt == "ND":
        end = min(dst.cols, -(-cols // blk) * blk)
        if write and end > cols and rows:
            block = np.broadcast_to(fill, (rows, end - cols))
            dst.layout.write(dst.elements(), np.concatenate([dst.read(rows, cols), block], axis=1))
        return rows, end
    end = min(dst.rows, -(-rows // blk) * blk)
    if write and end > rows and cols:
        block = np.broadcast_to(fill, (end - rows, cols))
        dst.layout.write(dst.elements(), np.concatenate([dst.read(rows, cols), block], axis=0))
    return end, cols


def tload(dst: Tile, src: GlobalTensor, layout) -> None:
    """PTO ``TLOAD(dst, src)``: ``dst(r, c) = src[layout.offset(r, c)]`` over ``dst``'s valid region (a Vec,
    Mat, Bias or Scaling tile; the GM tensor must have the tile's dtype). A boxed destination has the rest of the
    box grid the region touches zero-filled; an ND / DN Vec tile with a PadVal has the rest of each row's (column's)
    32-byte block filled with it. ``layout`` may be an :class:`MxGmStack` (a ZZ / NN scale tensor of
    :func:`mx_gm_tensor` with ``shape[0] > 1``): its slices fill consecutive row (column) ranges. Runs on MTE2."""
    if dst.loc not in (TileType.Vec, TileType.Mat, TileType.Bias, TileType.Scaling):
        raise ConfigError(f"TLOAD: the destination must be a Vec, Mat, Bias or Scaling tile, got {dst.loc.value}")
    if src.dtype != dst.dtype:
        raise ConfigError(f"TLOAD: GM dtype {src.dtype.name} differs from the tile dtype {dst.dtype.name}")
    rows, cols = dst.valid
    if layout.rows < rows or layout.cols < cols:
        raise ArgumentError(f"TLOAD: the GM layout {layout!r} does not cover the tile's {rows}x{cols} valid region")
    computes = dst.computes
    if isinstance(layout, MxGmStack):
        data = np.empty((rows, cols), dtype=dst.dtype.numpy) if computes else None
        gm_reads = []
        for off, r0, c0, r, c in layout.slices(rows, cols):
            if computes:
                data[r0:r0 + r, c0:c0 + c] = _gm_region(src[off], layout.part, r, c, "TLOAD")
            else:  # timing-only: the bounds check, no bytes
                _gm_region_check(src[off], layout.part, r, c, "TLOAD")
            if listening(dst.ctx):
                gm_reads.extend(region_access(src[off], layout.part, r, c))
    elif computes:
        data = _gm_region(src, layout, rows, cols, "TLOAD")
        gm_reads = None
    else:  # timing-only: the bounds check, no bytes
        _gm_region_check(src, layout, rows, cols, "TLOAD")
        data = gm_reads = None
    if not computes:  # the written region's shape only
        if dst.slayout is not SLayout.NoneBox:
            wr, wc = _padded_shape(dst, rows, cols)
        else:
            wr, wc = _pad_partial_block(dst, rows, cols, write=False)
    else:
        if dst.dtype.packed and not dst.dtype.codes:
            data = data.view(dst.dtype.numpy)
        if dst.slayout is not SLayout.NoneBox:
            wr, wc = _padded_write(dst, data)
        else:
            dst.write(data)
            wr, wc = _pad_partial_block(dst, rows, cols)
    ctx = dst.ctx
    if listening(ctx):
        if gm_reads is None:
            gm_reads = region_access(src, layout, rows, cols)
        emit(ctx, Pipe.MTE2, "TLOAD", nbytes=dst.dtype.nbytes(rows * cols), gm_reads=tuple(gm_reads),
             writes=(region(dst, wr, wc),), rows=rows, cols=cols, dst=dst.fmt)


def tstore(dst: GlobalTensor, layout, src: Tile, *, relu: ReluPreMode = ReluPreMode.NoRelu,
           pre_quant_scalar: int | None = None, fp: Tile | None = None,
           options: FixpipeOptions = DEFAULT_OPTIONS) -> None:
    """PTO ``TSTORE(dst, src)``: write ``src``'s valid region to GM through ``layout``. An Acc source passes the
    fixpipe (FIX pipe): cast by the (accumulator, GM) dtypes (``F322F16``, ``F322BF16``, or none for equal types),
    or scalar / vector quant with ``pre_quant_scalar`` / ``fp`` (the modes of ``GetScalarPreQuantModeGm`` /
    ``GetVectorPreQuantModeGm`` in ``include/pto/npu/a5/TStore.hpp``: fp32 -> e4m3 scalar is QF322FP8_PRE);
    ``relu`` applies to the converted value. Vec / Mat sources are stored on MTE3."""
    rows, cols = src.valid
    if layout.rows < rows or layout.cols < cols:
        raise ArgumentError(f"TSTORE: the GM layout {layout!r} does not cover the tile's {rows}x{cols} valid region")
    ctx = src.ctx
    reads, writes = [region(src, rows, cols)], []
    if src.loc is TileType.Acc:
        kind = "scalar" if pre_quant_scalar is not None else "vector" if fp is not None else "cast"
        if pre_quant_scalar is not None and fp is not None:
            raise ConfigError("TSTORE: give either pre_quant_scalar or fp, not both")
        if kind == "cast" and src.dtype == dst.dtype:
            mode = QuantMode.NoQuant
        else:
            mode = pre_quant_mode(src.dtype, dst.dtype, kind, ctx.arch, target="gm")
        if kind == "scalar":
            set_quant_pre(ctx, pre_quant_scalar)
            writes.append(ctx.register_access(QUANT_PRE))
        elif kind == "vector":
            point_fpc(fp)
            writes.append(ctx.register_access(FPC))
        if src.computes:
            data = fixpipe_apply(ctx, src.read(rows, cols), mode, dst.dtype, relu=relu, options=options)
        else:  # timing-only: the register checks, no conversion
            fixpipe_check(ctx, cols, mode, options=options)
            data = None
        pipe, info = Pipe.FIX, {"quant": mode.value}
        if listening(ctx):
            reads.append(fixpipe_reads(ctx, mode, cols))
    else:
        if ReluPreMode(relu) is not ReluPreMode.NoRelu or pre_quant_scalar is not None or fp is not None:
            raise ConfigError("TSTORE: relu and quant forms apply to Acc sources only")
        if src.dtype != dst.dtype:
            raise ConfigError(f"TSTORE: GM dtype {dst.dtype.name} differs from the tile dtype {src.dtype.name}")
        if src.dtype.packed:
            raise ConfigError("TSTORE: 4-bit tiles are stored through a byte (uint8) view of GM")
        data = src.read(rows, cols) if src.computes else None
        pipe, info = Pipe.MTE3, {}
    if data is not None:
        gm_write(dst, layout, data, "TSTORE")
    else:  # timing-only: the checks of the write, no bytes
        _gm_region_check(dst, layout, rows, cols, "TSTORE", write=True)
    if listening(ctx):
        emit(ctx, pipe, "TSTORE", nbytes=dst.dtype.nbytes(rows * cols), reads=tuple(reads), writes=tuple(writes),
             gm_writes=region_access(dst, layout, rows, cols), rows=rows, cols=cols, **info)


__all__ = ["MX_FORMATS", "MxGmStack", "mx_gm_layout", "mx_gm_tensor", "tload", "tstore"]
