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
from catlass_py.tile._region import gm_access, gm_check, gm_read, gm_write
from catlass_py.tile.pto.fixpipe import (
    DEFAULT_OPTIONS,
    FixpipeOptions,
    ReluPreMode,
    fixpipe_apply,
    fixpipe_check,
    pre_quant_mode,
)
from catlass_py.tile.pto.quant_reg import set_quant_pre, set_quant_vector
from catlass_py.tile.pto.tile import SLayout, Tile, TileType
from catlass_py.tile.pto.tmov import _padded_write
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


def tload(dst: Tile, src: GlobalTensor, layout) -> None:
    """PTO ``TLOAD(dst, src)``: ``dst(r, c) = src[layout.offset(r, c)]`` over ``dst``'s valid region (a Vec,
    Mat, Bias or Scaling tile; the GM tensor must have the tile's dtype)."""
    if dst.loc not in (TileType.Vec, TileType.Mat, TileType.Bias, TileType.Scaling):
        raise ConfigError(f"TLOAD: the destination must be a Vec, Mat, Bias or Scaling tile, got {dst.loc.value}")
    if src.dtype != dst.dtype:
        raise ConfigError(f"TLOAD: GM dtype {src.dtype.name} differs from the tile dtype {dst.dtype.name}")
    rows, cols = dst.valid
    if layout.rows < rows or layout.cols < cols:
        raise ArgumentError(f"TLOAD: the GM layout {layout!r} does not cover the tile's {rows}x{cols} valid region")
    if dst.computes:
        data = _gm_region(src, layout, rows, cols, "TLOAD")
        if dst.dtype.packed and not dst.dtype.codes:
            data = data.view(dst.dtype.numpy)
        if dst.slayout is not SLayout.NoneBox:
            _padded_write(dst, data)
        else:
            dst.write(data)
    else:  # timing-only: the bounds check, no bytes
        _gm_region_check(src, layout, rows, cols, "TLOAD")
    ctx = dst.ctx
    if ctx is not None and ctx.bus.instructions:
        ctx.emit(Pipe.MTE2, "TLOAD", nbytes=dst.dtype.nbytes(rows * cols),
                 gm_reads=(gm_access(src, layout, rows, cols),), info={"rows": rows, "cols": cols, "dst": dst.fmt})


def tstore(dst: GlobalTensor, layout, src: Tile, *, relu: ReluPreMode = ReluPreMode.NoRelu,
           pre_quant_scalar: int | None = None, fp: Tile | None = None,
           options: FixpipeOptions = DEFAULT_OPTIONS) -> None:
    """PTO ``TSTORE(dst, src)``: write ``src``'s valid region to GM through ``layout``. An Acc source passes the
    fixpipe: cast by the (accumulator, GM) dtypes (``F322F16``, ``F322BF16``, or none for equal types), or
    scalar / vector quant with ``pre_quant_scalar`` / ``fp``; ``relu`` applies to the converted value."""
    rows, cols = src.valid
    if layout.rows < rows or layout.cols < cols:
        raise ArgumentError(f"TSTORE: the GM layout {layout!r} does not cover the tile's {rows}x{cols} valid region")
    if src.loc is TileType.Acc:
        ctx = src.ctx
        kind = "scalar" if pre_quant_scalar is not None else "vector" if fp is not None else "cast"
        if pre_quant_scalar is not None and fp is not None:
            raise ConfigError("TSTORE: give either pre_quant_scalar or fp, not both")
        if kind == "cast" and src.dtype == dst.dtype:
            mode = QuantMode.NoQuant
        else:
            mode = pre_quant_mode(src.dtype, dst.dtype, kind, ctx.arch)
        if kind == "scalar":
            set_quant_pre(ctx, pre_quant_scalar)
        elif kind == "vector":
            set_quant_vector(fp)
        if src.computes:
            data = fixpipe_apply(ctx, src.read(rows, cols), mode, dst.dtype, relu=relu, options=options)
        else:  # timing-only: the register checks, no conversion
            fixpipe_check(ctx, cols, mode, options=options)
            data = None
        pipe, info = Pipe.FIX, {"quant": mode.value}
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
    ctx = src.ctx
    if ctx is not None and ctx.bus.instructions:
        ctx.emit(pipe, "TSTORE", nbytes=dst.dtype.nbytes(rows * cols), gm_writes=(gm_access(dst, layout, rows, cols),),
                 info={"rows": rows, "cols": cols, **info})


__all__ = ["MX_FORMATS", "mx_gm_layout", "tload", "tstore"]
