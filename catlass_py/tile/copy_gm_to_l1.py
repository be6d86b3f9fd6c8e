"""GM -> L1 copies (CATLASS ``gemm/tile/atlasa2/copy_gm_to_l1.hpp``, MTE2 pipe).

Each copy is one instruction event on ``PIPE_MTE2`` that reads the GM bytes the DMA fetches (the tile
through the source layout, whole 32-byte panels for a fractal source, the whole chunks of a single-row
GMMPTD load) and writes the L1 bytes it lands in (the tile padded to whole 32-byte chunks).
"""

from __future__ import annotations

import numpy as np

from catlass_py.arch.memory import GlobalTensor, LocalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.arch.spec import get_arch
from catlass_py.errors import CapacityError, ConfigError
from catlass_py.gemm.coord import round_up
from catlass_py.gemm.gemm_type import GemmType
from catlass_py.gemm.helper import l1_type as _l1_type
from catlass_py.layout import ColumnMajor, PaddingColumnMajor, PaddingRowMajor, RowMajor, nZ, zN
from catlass_py.tile._region import (
    _flat_length,
    _max_offset,
    gm_check,
    gm_copy_plan,
    gm_local_copy,
    gm_read,
    gm_region_access,
    local_check,
    local_write,
    pad_cols,
    pad_rows,
    region_access,
    span_access,
)

STRIDE_LIMIT = 65536  # CATLASS STRIDE_LIMIT: larger source strides fall back to one DMA per row

_SUPPORTED = {(RowMajor, zN), (ColumnMajor, nZ), (zN, zN), (nZ, nZ), (PaddingRowMajor, zN), (PaddingColumnMajor, nZ)}


def _fits(layout_dst, rows: int, cols: int, what: str) -> None:
    if rows > layout_dst.rows or cols > layout_dst.cols:
        raise CapacityError(
            f"{what}: a {rows}x{cols} tile does not fit the L1 layout {layout_dst!r} "
            f"({layout_dst.rows}x{layout_dst.cols})"
        )


class CopyGmToL1:
    """CATLASS ``Gemm::Tile::CopyGmToL1<ArchTag, GmType[, L1Type]>``: one operand tile GM -> L1.

    ===================  ===================================================================================
    RowMajor -> zN       ND->NZ DMA: ``L1[zN(r, c)] = A[r, c]``; the last 32-byte chunk of every written row
                         is zero-filled; rows past the tile keep their old L1 contents
    ColumnMajor -> nZ    the same with rows and columns swapped (the zero fill pads the rows)
    zN -> zN, nZ -> nZ   strided copy of whole 32-byte column (row) panels
    PaddingRowMajor      the RowMajor ND->NZ copy of the tile with ``ldm = stride[0]`` (the block width): the
    -> zN (Padding       tile must lie inside one padded block, as the padding kernels arrange; likewise
    ColumnMajor -> nZ)   ColumnMajor with ``ldm = stride[2]``
    ===================  ===================================================================================
    """

    op_name = "CopyGmToL1"

    def __init__(self, arch, gm_type: GemmType, l1_type: GemmType | None = None):
        self.arch = get_arch(arch)
        self.gm_type = gm_type
        self.l1_type = l1_type if l1_type is not None else _l1_type(gm_type)
        if (gm_type.layout, self.l1_type.layout) not in _SUPPORTED:
            raise ConfigError(
                f"{type(self).__name__}: no GM->L1 copy from {gm_type.layout.__name__} to "
                f"{self.l1_type.layout.__name__} (supported: RowMajor->zN, ColumnMajor->nZ, zN->zN, nZ->nZ)"
            )
        self.layout_src = gm_type.layout
        self.layout_dst = self.l1_type.layout
        self.c0 = gm_type.element.c0

    def __call__(self, dst: LocalTensor, src: GlobalTensor, layout_dst, layout_src) -> None:
        ctx = dst.ctx
        replay = None
        if ctx is not None and (not ctx.bus.instructions or ctx.bus.templates):
            # Nobody checks the instruction's accesses (no observer of instructions, or only observers that time
            # them): a copy whose geometry (this copy, the L1 slot and layout, the GM layout and dtype) already
            # went through the single-view path below repeats its copy, after the one check that depends on the
            # pointer (the region ends inside the GM buffer; else the path below raises the error), and
            # publishes the event the path below publishes: to observers that take templates, once per launch and
            # geometry, then as a replay naming the GM region the repeat reads (ObserverBus.replay).
            replay = (self, dst.arena.id, dst.byte_offset, dst.count, dst.dtype.name, layout_dst.__class__,
                      layout_dst._key(), layout_src.__class__, layout_src._key(), src.dtype.name)
            plan = ctx.tile_cache.get(replay)
            shared = None
            if ctx.bus.templates and ctx._editor is None:  # (an editor counts every instruction a core issues)
                proven, captured = self._proven(ctx)
                shared = (dst.arena.name, *replay[2:])  # the geometry on any core of the launch
                if plan is None and not dst.computes:
                    plan = proven.get(shared)
            if plan is not None and plan[4] < _flat_length(src.dtype, src.size):  # gm_check's bound
                lv, shape, strides, dtype, _, event = plan
                if lv is not None:  # (None: a timing-only core's plan, checks and event only)
                    np.copyto(lv, np.ndarray(shape, dtype, buffer=src.buffer.raw, offset=src.byte_offset,
                                             strides=strides))
                bus = ctx.bus
                if bus.instructions:
                    region = None
                    if shared is not None:  # the event as a template relative to the tile's GM region (its pointer)
                        region = ((src.buffer.id, src.byte_offset),)
                        key = (self, *shared)
                        if key in captured:
                            bus.replay(ctx.core, key, [], gm=region)
                            return
                        bus.capture_begin(ctx.core)
                    read_layout, read_rows, read_cols, nbytes, writes, info = event
                    ctx.emit(Pipe.MTE2, self.op_name, nbytes=nbytes,
                             gm_reads=gm_region_access(src, read_layout, read_rows, read_cols),
                             local_writes=writes, info=info)
                    if region is not None and bus.capture_end(ctx.core, key, region):
                        captured.add(key)
                return
        what = type(self).__name__
        rows, cols = layout_src.rows, layout_src.cols
        if isinstance(layout_src, PaddingRowMajor):  # Nd2Nz with srcDValue = stride(0) (CATLASS)
            layout_src = RowMajor(rows, cols, layout_src.stride[0])
        elif isinstance(layout_src, PaddingColumnMajor):  # Nd2Nz with srcDValue = stride(2)
            layout_src = ColumnMajor(rows, cols, layout_src.stride[2])
        _fits(layout_dst, rows, cols, what)
        compute = dst.computes
        if compute and self._whole_chunks(layout_src, rows, cols):
            # No zero fill: the tile moves as is, GM view -> L1 view in one copy when both are single views.
            _, shape, dmas, read = self._gather(src, layout_src, rows, cols, what, False)
            layout_l1 = layout_dst.get_tile_layout(*shape)
            if not gm_local_copy(dst, layout_l1, src, layout_src, rows, cols, to_gm=False):
                local_write(dst, layout_l1, self._gather(src, layout_src, rows, cols, what)[0], what)
            elif replay is not None and read == (layout_src, rows, cols):
                plan = gm_copy_plan(dst, layout_l1, src, layout_src, rows, cols)
                itemsize = 1 if src.dtype.packed else src.dtype.numpy.itemsize
                if plan is not None and plan[4] == _max_offset(layout_src, rows, cols, itemsize):
                    # its bounds check is the one _gather made: the same top
                    event = (layout_src, rows, cols, self.gm_type.element.nbytes(rows * cols),
                             region_access(dst, layout_l1, *shape), {"rows": rows, "cols": cols, "dmas": dmas})
                    ctx.tile_cache[replay] = (*plan, event)
        else:
            data, shape, dmas, read = self._gather(src, layout_src, rows, cols, what, compute)
            # The zero fill of the last 32-byte chunk may reach into the layout's padding columns.
            layout_l1 = layout_dst.get_tile_layout(*shape)
            if compute:
                local_write(dst, layout_l1, data, what)
            else:  # timing-only: the same checks, no bytes
                local_check(dst, layout_l1, *shape, what, write=True)
                if replay is not None and read == (layout_src, rows, cols) and self._whole_chunks(layout_src, rows,
                                                                                                   cols):
                    # a plain DMA's checks beside the GM bound and its event depend on the geometry alone: the
                    # path above repeats them from here (its bound: the largest GM offset the region reads)
                    itemsize = 1 if src.dtype.packed else src.dtype.numpy.itemsize
                    event = (layout_src, rows, cols, self.gm_type.element.nbytes(rows * cols),
                             region_access(dst, layout_l1, *shape), {"rows": rows, "cols": cols, "dmas": dmas})
                    ctx.tile_cache[replay] = (None, None, None, None, _max_offset(layout_src, rows, cols, itemsize),
                                              event)
                    if shared is not None:  # the other cores of the launch that only time repeat it too
                        proven[shared] = ctx.tile_cache[replay]
        ctx = dst.ctx
        if ctx is not None and ctx.bus.instructions:
            read_layout, read_rows, read_cols = read
            ctx.emit(
                Pipe.MTE2, self.op_name, nbytes=self.gm_type.element.nbytes(rows * cols),
                gm_reads=(gm_region_access(src, read_layout, read_rows, read_cols) if read_layout is not None
                          else (span_access(src, read_rows),)),
                local_writes=region_access(dst, layout_l1, *shape),
                info={"rows": rows, "cols": cols, "dmas": dmas},
            )

    def _proven(self, ctx) -> tuple[dict, set]:
        """What the launch's cores share when every observer of instructions takes templates: the timing-only
        plans of the geometries a core ran through the checking path, by the L1 arena's name and offset instead of
        the arena (every core's arenas have the launch arch's sizes, so the checks one core made hold on another),
        which a core that only times repeats; and the geometries whose event a core captured as a template, which
        any core then replays (its L1 access stands for the core's own: observers that take templates time GM
        reads, not L1 writes)."""
        return ctx.launch_shared("proven GM->L1 copies", self, lambda: ({}, set()))

    def _whole_chunks(self, layout_src, rows: int, cols: int) -> bool:
        """Whether the copy is the plain ND->NZ (DN->ZN) DMA of a tile of whole 32-byte chunks (nothing to
        zero-fill): the region lands in L1 exactly as it is in GM."""
        if layout_src.__class__ is RowMajor:
            return rows > 0 and cols > 0 and cols % self.c0 == 0
        if layout_src.__class__ is ColumnMajor:
            return rows > 0 and cols > 0 and rows % self.c0 == 0
        return False

    def _gather(self, src, layout_src, rows, cols, what, compute=True) -> tuple:
        """``(data, shape, dmas, read)``: the region as it lands in L1 (with the zero fill; None when not
        ``compute``-ing, i.e. on a timing-only core, which makes the same checks without reading GM), its
        (rows, cols) in L1, the number of DMA instructions issued and what was read from GM: ``(layout, rows,
        cols)`` of a region, or ``(None, n, 0)`` for ``n`` contiguous elements from the pointer."""
        if rows == 0 or cols == 0:
            data = np.zeros((rows, cols), self.gm_type.element.numpy) if compute else None
            return data, (rows, cols), 0, (None, 0, 0)
        fetch = gm_read if compute else gm_check
        if isinstance(layout_src, RowMajor):
            data = fetch(src, layout_src, rows, cols, what)
            width = round_up(cols, self.c0)
            return ((pad_cols(data, width) if compute else None), (rows, width),
                    (rows if layout_src.stride[0] >= STRIDE_LIMIT else 1), (layout_src, rows, cols))
        if isinstance(layout_src, ColumnMajor):
            data = fetch(src, layout_src, rows, cols, what)
            height = round_up(rows, self.c0)
            return ((pad_rows(data, height) if compute else None), (height, cols),
                    (cols if layout_src.stride[1] >= STRIDE_LIMIT else 1), (layout_src, rows, cols))
        # zN -> zN / nZ -> nZ move whole 32-byte panels (the panel's padding travels with it): widen the
        # source tile layout (same strides) so that the padding columns (rows) of the last panel are addressable.
        if isinstance(layout_src, zN):
            wide = layout_src.get_tile_layout(rows, round_up(cols, self.c0))
        else:
            wide = layout_src.get_tile_layout(round_up(rows, self.c0), cols)
        return (fetch(src, wide, wide.rows, wide.cols, what), (wide.rows, wide.cols), 1,
                (wide, wide.rows, wide.cols))


class CopyGmToL1GMMPTD(CopyGmToL1):
    """CATLASS ``Gemm::Tile::CopyGmToL1GMMPTD<AtlasA2, GemmType<E, RowMajor>>``: the GM->L1 loader of
    grouped-matmul per-token-dequant for operand A, whose tiles often have a single row.

    ======================  ==============================================================================
    rows == 1               plain DataCopy of ``ceil(cols, C0)`` whole 32-byte chunks of the row into row 0
                            of consecutive L1 panels; the last chunk is NOT zero-filled: it carries the GM
                            bytes that follow the row (harmless: Mmad ignores K beyond its k). Bytes past
                            the end of the GM allocation read as the poison pattern 0xFF.
    cols == ldm == C0       one contiguous DataCopy of ``rows * C0`` elements (a one-panel zN is row-major)
    otherwise               the standard ND->NZ copy of :class:`CopyGmToL1`
    ======================  ==============================================================================
    """

    op_name = "CopyGmToL1GMMPTD"

    def __init__(self, arch, gm_type: GemmType, l1_type: GemmType | None = None):
        if gm_type.layout is not RowMajor:
            raise ConfigError(f"CopyGmToL1GMMPTD copies RowMajor operands only, got {gm_type.layout.__name__}")
        super().__init__(arch, gm_type, l1_type)

    def _whole_chunks(self, layout_src, rows: int, cols: int) -> bool:
        return rows != 1 and super()._whole_chunks(layout_src, rows, cols)  # a single row has its own DMA

    def _gather(self, src, layout_src, rows, cols, what, compute=True):
        if rows == 1 and cols > 0:
            width = round_up(cols, self.c0)
            size = src.size  # elements from the row start to the end of the allocation
            if size < cols:  # the row itself must lie in GM; only the last chunk's overhang may not
                gm_read(src, layout_src, rows, cols, what) if compute else gm_check(src, layout_src, rows, cols, what)
            take = min(width, size)
            data = None
            if compute:
                row = src.view()
                data = np.empty((1, width), dtype=row.dtype)
                data[0, :take] = row[:take]
                if take < width:
                    data[0, take:].view(np.uint8)[:] = 0xFF
            return data, (1, width), 1, (None, take, 0)
        if cols == self.c0 and layout_src.stride[0] == self.c0:
            data = gm_read(src, layout_src, rows, cols, what) if compute else gm_check(src, layout_src, rows, cols, what)
            return data, (rows, cols), 1, (layout_src, rows, cols)
        return super()._gather(src, layout_src, rows, cols, what, compute)
