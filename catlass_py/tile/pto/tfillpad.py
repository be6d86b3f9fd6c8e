"""PTO ``TFILLPAD`` (with its ``InPlace`` / ``Expand`` modes) and ``TGET_SCALE_ADDR``.

Counterparts: ``docs/isa/TFILLPAD.md``, ``TFILLPAD_INPLACE.md``, ``TFILLPAD_EXPAND.md``, ``TGET_SCALE_ADDR.md`` and
``include/pto/npu/a5/TFillPad.hpp`` / ``TGetScaleAddr.hpp`` of ``hw-native-sys/pto-isa``.
"""

from __future__ import annotations

import enum

import numpy as np

from catlass_py.arch.pipes import Pipe
from catlass_py.errors import ConfigError
from catlass_py.tile.pto._common import arch_of, emit, is950, listening, region
from catlass_py.tile.pto.tile import MX_BUFFER_RATIO, CompactMode, PadValue, Tile, TileType, pad_element


class TFillPadMode(enum.Enum):
    """PTO ``TFillPadMode``."""

    Normal = 0
    InPlace = 1
    Expand = 2


def tfillpad(dst: Tile, src: Tile, mode: TFillPadMode = TFillPadMode.Normal) -> None:
    """PTO ``TFILLPAD[_INPLACE|_EXPAND](dst, src)``: copy ``src``'s valid region and fill the rest with ``dst``'s PadVal.

    Vec tiles (``TFillPad`` of TFillPad.hpp, on V), with ``VR x VC = src``'s valid region:

    * rows ``[0, VR)``: elements ``[0, VC)`` copied (``Normal`` / ``Expand``; ``InPlace`` leaves them, dst being src),
      elements ``[VC, dst.Cols)`` set to the pad value;
    * rows ``[VR, dst.ValidRow)``: every element of the row (``dst.Cols`` of them, i.e. the static width) set.

    Checks: same element width, 1 / 2 / 4-byte types, a PadVal other than Null; ``Normal`` / ``InPlace`` need equal
    static shapes, ``Expand`` a destination at least as large. ``InPlace`` needs ``dst`` and ``src`` on the same bytes.

    Mat (L1) NZ tiles (``TFillPad_cube``, the cube's matrix fill on MTE2), pad Zero or Null: with ``VR x VC = dst``'s
    valid region, rows ``[VR, Rows)`` of the column blocks up to ``ceil(VC / C0)`` (or only up to ``ceil16(VR)``
    with ``CompactMode.RowAlignedPadding``) and every column block from ``ceil(VC / C0)`` on are zeroed.

    On a core of a timing-only launch (:attr:`Tile.computes` False) both make the same checks and publish the same
    event (the same written regions), and read or write no tile bytes.
    """
    what = {TFillPadMode.Normal: "TFILLPAD", TFillPadMode.InPlace: "TFILLPAD_INPLACE",
            TFillPadMode.Expand: "TFILLPAD_EXPAND"}[TFillPadMode(mode)]
    mode = TFillPadMode(mode)
    arch_of(what, dst, src)
    if dst.loc is TileType.Mat:
        _fill_cube(dst, src, what)
        return
    if dst.loc is not TileType.Vec or src.loc is not TileType.Vec:
        raise ConfigError(f"{what}: fills Vec tiles (or Mat NZ tiles), got {src.loc.value} -> {dst.loc.value}")
    if dst.pad is PadValue.Null:
        raise ConfigError(f"{what}: dst vecTile pad value must not be Null")
    if dst.dtype.bits != src.dtype.bits:
        raise ConfigError(f"{what}: src and dst data type is different ({src.dtype.name} vs {dst.dtype.name})")
    if dst.dtype.bits not in (8, 16, 32) or dst.dtype.packed:
        raise ConfigError(f"{what}: invalid data type {dst.dtype.name} (1-, 2- or 4-byte types)")
    if dst.fmt != "ND" or src.fmt != "ND":
        raise ConfigError(f"{what}: fills row-major (ND) Vec tiles, got {src.fmt} -> {dst.fmt}")
    if mode is TFillPadMode.Expand:
        if dst.rows < src.rows or dst.cols < src.cols:
            raise ConfigError(f"{what}: Dst vecTile Rows/Cols must be greater or equal to src vecTile "
                              f"({dst.rows}x{dst.cols} < {src.rows}x{src.cols})")
    elif (dst.rows, dst.cols) != (src.rows, src.cols):
        raise ConfigError(f"{what}: Dst/Src vecTile Rows/Cols must be the same ({dst.rows}x{dst.cols} vs "
                          f"{src.rows}x{src.cols})")
    if mode is TFillPadMode.InPlace and (dst.tensor.arena is not src.tensor.arena
                                         or dst.tensor.byte_offset != src.tensor.byte_offset):
        raise ConfigError(f"{what}: the in-place form fills the source's own bytes; dst and src must be one tile")
    vr, vc = src.valid
    dvr = dst.valid_row
    if dvr < vr:
        raise ConfigError(f"{what}: the destination's valid rows ({dvr}) are fewer than the source's ({vr})")
    computes = dst.computes  # a timing-only core moves and fills no bytes
    reads, writes = [], []
    if mode is not TFillPadMode.InPlace and vr and vc:
        if computes:
            data = src.read(vr, vc)
            if data.dtype != dst.dtype.numpy:
                data = data.view(dst.dtype.numpy)
            dst.write(data)
        reads.append(region(src, vr, vc))
        writes.append(region(dst, vr, vc))
    if computes and dvr:
        pad = pad_element(dst.pad, dst.dtype)
        full = dst.read(dvr, dst.cols)
        full[:vr, vc:] = pad[0]
        full[vr:dvr, :] = pad[0]
        dst.write(full)
    if vr and dst.cols > vc:
        writes.append(region(dst, vr, dst.cols - vc, col0=vc))
    if dvr > vr:
        writes.append(region(dst, dvr - vr, dst.cols, row0=vr))
    ctx = dst.ctx
    if listening(ctx):
        emit(ctx, Pipe.V, what, nbytes=dst.dtype.nbytes(dvr * dst.cols), reads=tuple(reads), writes=tuple(writes),
             src_valid=(vr, vc), dst_valid=dst.valid)


def _fill_cube(dst: Tile, src: Tile, what: str) -> None:
    if dst.fmt != "NZ":
        raise ConfigError(f"{what}: TFillPad Dst matTile now only support NZ layout, got {dst.fmt}")
    if dst.pad not in (PadValue.Zero, PadValue.Null):
        raise ConfigError(f"{what}: TFillPad dst matTile pad value only support Zero or Null, got {dst.pad}")
    if dst.dtype.bits not in (4, 8, 16, 32):
        raise ConfigError(f"{what}: TFillPad type must be b4/b8/b16/b32, got {dst.dtype.name}")
    vr, vc = dst.valid
    ic = dst.inner[1]
    avc = min(dst.cols, -(-vc // ic) * ic)
    computes = dst.computes  # a timing-only core zeroes no bytes
    zero = np.zeros(1, np.uint8)[0]
    flat = dst.elements() if computes else None
    writes = []
    row_end = dst.rows if dst.compact is not CompactMode.RowAlignedPadding else min(dst.rows, -(-vr // 16) * 16)
    if row_end > vr and avc:
        if computes:
            r = np.arange(vr, row_end)[:, None]
            c = np.arange(0, avc)[None, :]
            flat[np.asarray(dst.layout.offset(r, c))] = zero
        writes.append(region(dst, row_end - vr, avc, row0=vr))
    if dst.compact is not CompactMode.RowAlignedPadding and avc < dst.cols:
        if computes:
            r = np.arange(0, dst.rows)[:, None]
            c = np.arange(avc, dst.cols)[None, :]
            flat[np.asarray(dst.layout.offset(r, c))] = zero
        writes.append(region(dst, dst.rows, dst.cols - avc, col0=avc))
    if computes and dst.dtype.packed:
        dst._store_elements(flat)
    ctx = dst.ctx
    if listening(ctx):
        emit(ctx, Pipe.MTE2, what, nbytes=dst.nbytes, writes=tuple(writes), dst_valid=(vr, vc))


def tget_scale_addr(dst: Tile, src: Tile) -> Tile:
    """PTO ``TGET_SCALE_ADDR(dst, src)`` (Ascend 950): bind the MX scale tile ``dst`` at ``address(src) >> 4`` of the
    scale buffer paired with ``src``'s (a Left tile's scales live in L0A_MX, a Right tile's in L0B_MX;
    ``SHIFT_MX_ADDR`` = 4). A scalar address computation: no data moves; the instruction is published on S.
    Returns ``dst``."""
    what = "TGET_SCALE_ADDR"
    if not isinstance(src, Tile) or not isinstance(dst, Tile):
        raise ConfigError(f"{what}: both src and dst must be Tile instances")
    arch = arch_of(what, src)
    if not is950(arch):
        raise ConfigError(f"{what}: exists on Ascend 950 only (no A2/A3 implementation), not on {arch.name}")
    pairs = {TileType.Left: TileType.ScaleLeft, TileType.Right: TileType.ScaleRight}
    if pairs.get(src.loc) is not dst.loc:
        raise ConfigError(f"{what}: a {src.loc.value} tile's scales are a "
                          f"{pairs[src.loc].value if src.loc in pairs else 'ScaleLeft / ScaleRight'} tile, got "
                          f"{dst.loc.value}")
    off = src.tensor.byte_offset
    if off % MX_BUFFER_RATIO:
        raise ConfigError(f"{what}: the source address {off} is not a multiple of {MX_BUFFER_RATIO}")
    ctx = src.ctx
    dst.assign(ctx, off // MX_BUFFER_RATIO)
    if listening(ctx):
        emit(ctx, Pipe.S, what, src_address=off, scale_address=off // MX_BUFFER_RATIO)
    return dst


__all__ = ["TFillPadMode", "tfillpad", "tget_scale_addr"]
