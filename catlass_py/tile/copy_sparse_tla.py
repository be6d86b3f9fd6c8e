"""The tile operations of the 4:2 sparse TLA matmul (CATLASS example 41): the copies of
``Gemm::Tile::SparseTileCopyTla`` and the sparse Mmad.

CATLASS ``gemm/tile/tile_copy.hpp`` bundles, for ``BlockMmadSparseTla``, ``TileCopySparseTla`` GM -> L1 copies
(``gemm/tile/atlasa2/copy_gm_to_l1.hpp``), the L1 -> L0A load (``copy_l1_to_l0a.hpp``), ``CopyL1ToL0BSparseTla``
(``copy_l1_to_l0b.hpp``, Ascend C ``LoadDataWithSparse``) and ``CopyL0CToGmSparseTla`` (``copy_l0c_to_gm.hpp``);
the block calls Ascend C ``MmadWithSparse`` itself. The 4:2 format is :mod:`catlass_py.sparse`'s.

=========================  ======================================================================================
operation (pipe)           what it moves
=========================  ======================================================================================
GM -> L1 A (MTE2)          RowMajor -> zN ND2NZ of ``nValue = min(dst rows in fractals, src rows - coord row)``
                           rows and ``dValue = min(dst cols in fractals, src cols - coord col)`` columns, the
                           source being the whole A from the block's pointer (CATLASS's formula: rows past the
                           block are read when they exist, past the end of A they are an out-of-bounds read)
GM -> L1 B (MTE2)          ColumnMajor -> nZ ND2NZ of the dense tile (:class:`~catlass_py.tile.copy_tla.CopyGmToL1Tla`)
GM -> L1 index (MTE2)      nZ -> nZ: per 8-byte row of fractals, the destination's column fractals (``blockLen``
                           bytes) from the source's coordinate; the layouts are ``int32``-element nZ (8 x 16
                           fractals) over bytes
L1 -> L0A (MTE1)           zN -> zZ (``LoadData`` 3D v2), the destination's origin shape in whole fractals
L1 -> L0B (MTE1)           ``LoadDataWithSparse``: the dense nZ tile (whole 512-byte fractals) into L0B and, beside
                           it, the index bytes at ``offset / 4`` of the L1 index tile
                           (:attr:`~catlass_py.arch.memory.LocalArena.sparse_index`)
Mmad (M)                   ``MmadWithSparse``: C (+)= A @ B, B rebuilt from the dense values and their indices
L0C -> GM (FIX)            fixpipe of ``min(L0C rows in fractals, dst rows - coord row)`` x ``min(L0C cols in
                           fractals, dst cols - coord col)``, dst being the whole C from the block's pointer
=========================  ======================================================================================

Where L0B keeps the indices is not documented; here they travel with the dense bytes they describe (the
instruction declares the L0B bytes it writes, the Mmad the L0B bytes it reads, so a race on the indices is a race
on those bytes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from catlass_py.arch.pipes import Pipe
from catlass_py.arch.spec import get_arch
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.integers import offset_runs
from catlass_py.tile.copy_tla import (
    CopyGmToL1Tla,
    CopyL0CToGmTla,
    CopyL1ToL0ATla,
    _device,
    _emit,
    _mode_extent,
    _region,
    _round,
    accesses,
    check_gather,
    check_scatter,
    gather,
    is_layout_kind,
    scatter,
)
from catlass_py.tla import Tensor, make_layout_tag

#: the index tiles are nZ layouts of 4-byte elements over bytes (fractals of 8 bytes x 16 columns)
INDEX_LAYOUT_DTYPE = "int32"


def _extent(t: Tensor) -> tuple:
    """The extent of each top-level mode of a tensor's layout (the whole fractals of a fractal layout)."""
    return tuple(_mode_extent(m) for m in t.layout.shape)


class CopyGmToL1SparseTla(CopyGmToL1Tla):
    """CATLASS ``TileCopySparseTla<AtlasA2, GM tensor, L1 tensor>`` (``gemm/tile/atlasa2/copy_gm_to_l1.hpp``), the
    GM -> L1 copies of the sparse matmul (see the module): ``('RowMajor', 'zN')`` for A, ``('ColumnMajor', 'nZ')``
    for the dense B, ``('nZ', 'nZ')`` for the index (``element`` uint8, layouts of ``int32``-sized nZ fractals).
    One MTE2 instruction event."""

    op_name = "CopyGmToL1SparseTla"
    _PAIRS = {("RowMajor", "zN"), ("ColumnMajor", "nZ"), ("nZ", "nZ")}

    def __call__(self, dst: Tensor, src: Tensor) -> None:
        kind = (self.layout_src, self.layout_dst)
        if kind == ("ColumnMajor", "nZ"):
            self._copy(dst, src, tuple(src.origin_shape))
        elif kind == ("RowMajor", "zN"):
            self._copy_clipped(dst, src)
        else:
            self._copy_index(dst, src)

    def _copy_clipped(self, dst: Tensor, src: Tensor) -> None:
        what = self.op_name
        _device(dst, what, "the destination", ("L1",))
        _device(src, what, "the source", ("GM",))
        for t, kind, name in ((src, "RowMajor", "source"), (dst, "zN", "destination")):
            if not is_layout_kind(self.element, t.layout, kind):
                raise ConfigError(f"{what}: the {name} layout {t.layout} is not {kind}")
        dst_rows, dst_cols = _extent(dst)
        src_rows, src_cols = _extent(src)
        row, col = (int(v) for v in src.coord)
        rows, cols = min(dst_rows, src_rows - row), min(dst_cols, src_cols - col)  # nValue, dValue
        land = (rows, _round(cols, self.element.c0))
        if dst.builtin.computes:
            data = gather(src, (rows, cols), what)
            if land != data.shape:  # ND2NZ zero-fills each row to a whole 32-byte chunk
                full = np.zeros(land, data.dtype)
                full[:, :cols] = data
                data = full
            scatter(dst, land, data, what)
        else:  # timing-only: the same checks, no bytes
            check_gather(src, (rows, cols), what)
            check_scatter(dst, land, what)
        _emit(dst.builtin.ctx, Pipe.MTE2, what, nbytes=self.element.nbytes(rows * cols),
              gm_reads=accesses(src, (rows, cols)), local_writes=accesses(dst, land),
              info={"rows": rows, "cols": cols, "dmas": 1})

    def _copy_index(self, dst: Tensor, src: Tensor) -> None:
        what = self.op_name + " (index)"
        _device(dst, what, "the destination", ("L1",))
        _device(src, what, "the source", ("GM",))
        for t, name in ((src, "source"), (dst, "destination")):
            if not is_layout_kind(INDEX_LAYOUT_DTYPE, t.layout, "nZ"):
                raise ConfigError(f"{what}: the {name} layout {t.layout} is not nZ of 8 x 16 fractals")
        extent = _extent(dst)  # nburst rows of fractals, blockLen = the destination's column fractals
        if dst.builtin.computes:
            scatter(dst, extent, gather(src, extent, what), what)
        else:  # timing-only: the same checks, no bytes
            check_gather(src, extent, what)
            check_scatter(dst, extent, what)
        _emit(dst.builtin.ctx, Pipe.MTE2, self.op_name, nbytes=extent[0] * extent[1],
              gm_reads=accesses(src, extent), local_writes=accesses(dst, extent),
              info={"rows": extent[0], "cols": extent[1], "index": True})


class CopyL1ToL0ASparseTla(CopyL1ToL0ATla):
    """CATLASS ``TileCopySparseTla<AtlasA2, L1 tensor, L0A tensor>`` (``copy_l1_to_l0a.hpp``): zN -> zZ through
    ``LoadData`` 3D v2 (``LoadData3DParamsV2Pro``), the destination's origin shape in whole fractals from the
    source's coordinate; one MTE1 instruction event."""

    op_name = "CopyL1ToL0ASparseTla"
    sources = ("zN",)


class CopyL1ToL0BSparseTla:
    """CATLASS ``CopyL1ToL0BSparseTla<AtlasA2, ElementA, L1 tensor, L0B tensor, L1 index tensor>`` (nZ in, nZ out;
    ``copy_l1_to_l0b.hpp``): one Ascend C ``LoadDataWithSparse`` of the destination's origin shape in whole
    fractals (``repeatTimes = kC0 * nFraC0`` fractals of 512 bytes, contiguous from the source's coordinate) and,
    for every 512 bytes of dense weights, the 128 index bytes at ``offset >> 2`` of the index tile (the index
    tensor's data, its coordinate unused, as in CATLASS). L0B receives the dense bytes and, beside them, their
    indices (:attr:`~catlass_py.arch.memory.LocalArena.sparse_index`). One MTE1 instruction event reading the
    dense and the index bytes of L1, writing the dense bytes of L0B."""

    op_name = "LoadDataWithSparse"

    def __init__(self, arch, element_a="int8"):
        self.arch = get_arch(arch)
        self.element = get_dtype(element_a)
        if self.element.name != "int8":
            raise ConfigError(f"CopyL1ToL0BSparseTla: LoadDataWithSparse moves int8 weights, got {self.element}")

    def __call__(self, dst: Tensor, src: Tensor, idx: Tensor) -> None:
        what = self.op_name
        _device(dst, what, "the destination", ("L0B",))
        _device(src, what, "the source", ("L1",))
        _device(idx, what, "the index", ("L1",))
        for t, name, dtype in ((src, "source", self.element), (dst, "destination", self.element),
                               (idx, "index", INDEX_LAYOUT_DTYPE)):
            if not is_layout_kind(dtype, t.layout, "nZ"):
                raise ConfigError(f"{what}: the {name} layout {t.layout} is not nZ")
        extent = _extent(dst)  # whole fractals move
        computes = dst.builtin.computes
        if computes:
            scatter(dst, extent, gather(src, extent, what), what)
        else:  # timing-only: the same checks, no bytes
            check_gather(src, extent, what)
            check_scatter(dst, extent, what)
        # the index bytes: dense byte o of the source tile (from its data pointer) has its index at byte o >> 2 of
        # the index tile's data; in L0B at arena byte (destination byte) >> 2
        s_off, s_base, _, _, _ = _region(src.layout, src.coord, extent)
        d_off, d_base, _, _, _ = _region(dst.layout, dst.coord, extent)
        s_abs = s_off.ravel() + (src.offset + s_base)
        d_abs = d_off.ravel() + (dst.offset + d_base + dst.builtin.byte_offset)
        if ((s_abs - d_abs) % 4).any():
            raise ConfigError(f"{what}: the source and destination bytes are not 4-byte aligned alike, so the index "
                              f"bytes cannot follow them")
        head = s_abs % 4 == 0
        idx_bytes = s_abs[head] // 4
        if computes:
            try:
                values = idx.data[idx.offset:][idx_bytes]
            except IndexError:
                values = None
        else:  # timing-only: the bounds check of the index bytes, no bytes
            values = () if not idx_bytes.size or idx.offset + int(idx_bytes.max()) < idx.data.shape[0] else None
        if values is None:
            raise ConfigError(f"{what}: the index bytes of the tile reach past the end of the index tensor "
                              f"{idx.builtin!r}")
        if computes:
            dst.builtin.arena.sparse_index[d_abs[head] // 4] = values
        ctx = dst.builtin.ctx
        if ctx is not None and ctx.bus.instructions:
            idx_runs = offset_runs(idx_bytes)
            idx_reads = tuple(idx.builtin.access(s + idx.offset, n, d, c) for s, n, d, c in idx_runs)
            ctx.emit(Pipe.MTE1, what, nbytes=extent[0] * extent[1] + idx_bytes.size,
                     local_reads=accesses(src, extent) + idx_reads, local_writes=accesses(dst, extent),
                     info={"rows": extent[0], "cols": extent[1], "index_bytes": int(idx_bytes.size)})


class TileMmadSparse:
    """Ascend C ``MmadWithSparse`` as CATLASS's ``BlockMmadSparseTla`` issues it: ``C = A @ B`` (``init_c``) or
    ``C += A @ B`` on the first m rows and n columns of L0C, A the first k columns of L0A (zZ), B the 4:2 sparse
    ``k x n`` matrix whose dense ``k/2 x n`` values sit in L0B (nZ) with their indices beside them: the j-th
    dense value of column c stands at row ``4 * (j // 2) + j % 2 + index`` of B. int8 x int8 accumulates exactly
    in int32 (wrapping). An index of 3 (invalid, or L0B bytes no ``LoadDataWithSparse`` wrote) is an
    :class:`ArgumentError` (an invalid operand of the instruction). m, n, k <= 4095; k a multiple of 8 (whole
    groups of four).

    The instruction event reads the (m x k) region of L0A and the (k/2 x n) region of L0B and writes the (m x n)
    region of L0C (reading it first when accumulating); its ``flops`` count the MACs of the dense depth,
    ``2 * m * n * k / 2``: the cube's sparse mode runs k/2 deep (its actual rate is not documented)."""

    op_name = "MmadWithSparse"

    def __init__(self, arch):
        self.arch = get_arch(arch)

    def __call__(self, l0c, l0a, l0b, m: int, n: int, k: int, init_c: bool = True, unit_flag: int = 0) -> None:
        from catlass_py.tile.copy_tla import make_tensor
        from catlass_py.tla import make_layout_l0c

        what = self.op_name
        limit = self.arch.mmad_max_mnk
        if not (0 <= m <= limit and 0 <= n <= limit and 0 <= k <= limit):
            raise ConfigError(f"{what}: m, n, k must be in 0..{limit}, got m={m}, n={n}, k={k}")
        if k % 8:
            raise ConfigError(f"{what}: k = {k} must be a multiple of 8 (whole groups of four, two per index byte)")
        for t, pos, dtype in ((l0c, "L0C", "int32"), (l0a, "L0A", "int8"), (l0b, "L0B", "int8")):
            if getattr(t, "position", None) != pos or t.dtype.name != dtype:
                raise ConfigError(f"{what}: expected a {dtype} tensor in {pos}, got {t!r}")
        if m == 0 or n == 0 or k == 0:
            return
        half = k // 2
        ta = make_tensor(l0a, make_layout_tag("int8", "zZ", m, k))
        tb = make_tensor(l0b, make_layout_tag("int8", "nZ", half, n))
        tc = make_tensor(l0c, make_layout_l0c(m, n))
        if l0c.computes:
            self._compute(ta, tb, tc, l0b, m, n, k, init_c)
        else:  # timing-only: the same bounds checks, no bytes (the indices are values: not checked)
            check_gather(ta, (m, k), what)
            check_gather(tb, (half, n), what)
            if not init_c:
                check_gather(tc, (m, n), what)
            check_scatter(tc, (m, n), what)
        ctx = l0c.ctx
        if ctx is not None and ctx.bus.instructions:
            c_region = accesses(tc, (m, n))
            reads = accesses(ta, (m, k)) + accesses(tb, (half, n)) + (() if init_c else c_region)
            ctx.emit(Pipe.M, what, flops=m * n * k, nbytes=m * k + half * n, local_reads=reads,
                     local_writes=c_region, unit_flag=unit_flag,
                     info={"m": m, "n": n, "k": k, "init_c": init_c, "dtype": "int8", "sparse": True})

    def _compute(self, ta, tb, tc, l0b, m: int, n: int, k: int, init_c: bool) -> None:
        what = self.op_name
        half = k // 2
        a = gather(ta, (m, k), what)
        dense = gather(tb, (half, n), what)
        off, base, _, _, _ = _region(tb.layout, tb.coord, (half, n))
        where = off + (tb.offset + base + l0b.byte_offset)                 # arena bytes of the dense values
        code = (l0b.arena.sparse_index[where >> 2] >> ((where & 3) << 1).astype(np.uint8)) & 3
        if (code == 3).any():
            r, c = (int(v) for v in np.argwhere(code == 3)[0])
            raise ArgumentError(f"{what}: the index of dense value ({r}, {c}) of L0B is 3 (no element of its group): "
                              f"an invalid index, or L0B bytes no LoadDataWithSparse loaded")
        slot = np.arange(half)[:, None]
        row = 4 * (slot // 2) + slot % 2 + code                              # [k/2, n] rows of B
        cols = np.broadcast_to(np.arange(n), (half, n))
        b = np.zeros((k, n), np.int16)
        b[row[0::2], cols[0::2]] = dense[0::2]
        b[row[1::2], cols[1::2]] += dense[1::2]                              # one element of A may serve twice
        acc = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.int64).astype(np.int32)  # exact: < 2**53
        if init_c:
            scatter(tc, (m, n), acc, what)
        else:
            scatter(tc, (m, n), (gather(tc, (m, n), what).astype(np.int64) + acc).astype(np.int32), what)


class CopyL0CToGmSparseTla(CopyL0CToGmTla):
    """CATLASS ``CopyL0CToGmSparseTla<AtlasA2, L0C tensor, GM tensor>`` (RowMajor destination, NO_QUANT;
    ``copy_l0c_to_gm.hpp``): the fixpipe store of ``mSize = min(L0C rows in fractals, dst rows - coord row)`` x
    ``nSize = min(L0C cols in fractals, dst cols - coord col)`` from the source at its coordinate, the
    destination being the whole C seen from the block's pointer (CATLASS's formula: past a block's last row or
    column it stores whole fractals of the accumulator while C extends that far). One FIX instruction event."""

    op_name = "Fixpipe"

    def __init__(self, arch, element_accumulator="int32", element_c="int32"):
        super().__init__(arch, element_accumulator, element_c, "RowMajor")

    def __call__(self, dst: Tensor, src: Tensor, unit_flag: int = 0, **_: Any) -> None:
        what = "CopyL0CToGmSparseTla"
        _device(dst, what, "the destination", ("GM",))
        _device(src, what, "the source", ("L0C",))
        if not is_layout_kind(self.element_c, dst.layout, "RowMajor"):
            raise ConfigError(f"{what}: the destination layout {dst.layout} is not RowMajor")
        src_rows, src_cols = _extent(src)
        dst_rows, dst_cols = _extent(dst)
        m = min(src_rows, dst_rows - int(dst.coord[0]))
        n = min(src_cols, dst_cols - int(dst.coord[1]))
        from catlass_py.tile.quant import fixpipe_convert, m1_scale

        if src.builtin.computes:
            acc = gather(src, (m, n), what)
            out = fixpipe_convert(acc, self.quant_mode, self.element_c, scale=m1_scale(self.scale_word), relu=False)
            scatter(dst, (m, n), out, what)
        else:  # timing-only: the same checks, no bytes
            check_gather(src, (m, n), what)
            check_scatter(dst, (m, n), what)
        ctx = src.builtin.ctx
        if ctx is not None and ctx.bus.instructions:
            ctx.emit(Pipe.FIX, self.op_name, nbytes=self.element_c.nbytes(m * n), gm_writes=accesses(dst, (m, n)),
                     local_reads=accesses(src, (m, n)), unit_flag=unit_flag,
                     info={"m": m, "n": n, "quant": self.quant_mode.value, "relu": False})


@dataclass(frozen=True)
class SparseTileCopyTla:
    """CATLASS ``Gemm::Tile::SparseTileCopyTla<ArchTag, ElementA, LayoutTagA, ElementB, LayoutTagB, ElementC,
    LayoutTagC>`` (``gemm/tile/tile_copy.hpp``): the copies of ``BlockMmadSparseTla`` (``copy_gm_to_l1_a``,
    ``copy_gm_to_l1_b``, ``copy_gm_to_l1_b_idx``, ``copy_l1_to_l0a``, ``copy_l1_to_l0b``, ``copy_l0c_to_gm``) and the
    layout tags in L1 (A zN, B and its index nZ) and L0 (zZ, nZ). Only the specialisations CATLASS has: int8 A
    RowMajor (an L1 nZ A has no L1 -> L0A sparse copy), int8 B ColumnMajor (the dense k/2 x n matrix), C RowMajor
    int32."""

    arch: Any
    element_a: Any = "int8"
    layout_tag_a: Any = "RowMajor"
    element_b: Any = "int8"
    layout_tag_b: Any = "ColumnMajor"
    element_c: Any = "int32"
    layout_tag_c: Any = "RowMajor"

    def __post_init__(self):
        from catlass_py.gemm.helper import element_accumulator
        from catlass_py.tile.copy_tla import L1_LAYOUT, tag_name

        sa = object.__setattr__
        arch = get_arch(self.arch)
        sa(self, "arch", arch)
        for name in ("element_a", "element_b", "element_c"):
            sa(self, name, get_dtype(getattr(self, name)))
        for name in ("layout_tag_a", "layout_tag_b", "layout_tag_c"):
            sa(self, name, tag_name(getattr(self, name)))
        if self.layout_tag_a != "RowMajor":
            raise ConfigError(f"SparseTileCopyTla: LayoutTagA must be RowMajor (its L1 layout "
                              f"{L1_LAYOUT.get(self.layout_tag_a)} has no TileCopySparseTla to L0A zZ), got "
                              f"{self.layout_tag_a}")
        if self.layout_tag_b != "ColumnMajor":
            raise ConfigError(f"SparseTileCopyTla: Only support MatrixB transpose (LayoutTagB ColumnMajor, the dense "
                              f"k/2 x n matrix; BlockMmadSparseTla's static_assert), got {self.layout_tag_b}")
        if self.layout_tag_c != "RowMajor":
            raise ConfigError(f"SparseTileCopyTla: LayoutTagC must be RowMajor (CopyL0CToGmSparseTla), got "
                              f"{self.layout_tag_c}")
        if self.element_a.name != "int8" or self.element_b.name != "int8":
            raise ConfigError(f"SparseTileCopyTla: the sparse copies move int8 A and B (LoadDataWithSparse), got "
                              f"{self.element_a} and {self.element_b}")
        acc = element_accumulator(self.element_a, self.element_b, arch)
        sa(self, "element_accumulator", acc)
        sa(self, "layout_tag_l1a", "zN")
        sa(self, "layout_tag_l1b", L1_LAYOUT[self.layout_tag_b])
        sa(self, "layout_tag_l1b_idx", self.layout_tag_l1b)  # the same selector as B's (nZ)
        sa(self, "layout_tag_l0a", "zZ")
        sa(self, "layout_tag_l0b", "nZ")
        sa(self, "copy_gm_to_l1_a", CopyGmToL1SparseTla(arch, self.element_a, "RowMajor", "zN"))
        sa(self, "copy_gm_to_l1_b", CopyGmToL1SparseTla(arch, self.element_b, "ColumnMajor", "nZ"))
        sa(self, "copy_gm_to_l1_b_idx", CopyGmToL1SparseTla(arch, "uint8", "nZ", "nZ"))
        sa(self, "copy_l1_to_l0a", CopyL1ToL0ASparseTla(arch, self.element_a, "zN"))
        sa(self, "copy_l1_to_l0b", CopyL1ToL0BSparseTla(arch, self.element_a))
        sa(self, "copy_l0c_to_gm", CopyL0CToGmSparseTla(arch, acc, self.element_c))


__all__ = [
    "CopyGmToL1SparseTla",
    "CopyL0CToGmSparseTla",
    "CopyL1ToL0ASparseTla",
    "CopyL1ToL0BSparseTla",
    "INDEX_LAYOUT_DTYPE",
    "SparseTileCopyTla",
    "TileMmadSparse",
]
