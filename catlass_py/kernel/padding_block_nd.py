"""``PADDING_BLOCK_ND``: the operand padding prologue of ``OptimizedMatmul`` (CATLASS ``PaddingMatrixBlockND`` in
``gemm/kernel/padding_matmul.hpp``; examples 06 and 26).

A GM operand whose leading dimension is not a multiple of 512 bytes (or is >= 65536 elements) makes the
GM -> L1 DMA slow, so the vector cores first copy it into a workspace laid out as a grid of L1-tile sized
blocks, each block row-major (``PaddingRowMajor``; ``PaddingColumnMajor`` for a column-major operand); every
L1 tile the cube then loads is one block with a short stride. (``PaddingTag`` is in
:mod:`catlass_py.kernel.padding_tag`, ``PaddingBuilder`` in :mod:`catlass_py.kernel.padding`, the NZ padding in
:mod:`catlass_py.kernel.padding_nz`.)
"""

from __future__ import annotations

import numpy as np

from catlass_py.arch.memory import GlobalTensor
from catlass_py.arch.pipes import HardEvent, Pipe
from catlass_py.arch.spec import get_arch
from catlass_py.errors import ConfigError
from catlass_py.gemm.coord import ceil_div, round_up
from catlass_py.gemm.gemm_type import GemmType
from catlass_py.integers import is_int
from catlass_py.kernel.padding_tag import PaddingTag
from catlass_py.layout import ColumnMajor, PaddingColumnMajor, PaddingRowMajor, RowMajor
from catlass_py.numerics import dtypes as dt
from catlass_py.tile._region import gm_check, gm_region_access, gm_write
from catlass_py.tile.copy_gm_ub import CopyGm2Ub

BYTE_PER_BLK = 32
BUFFER_NUM = 2
STRIDE_LIMIT = 65536


class PaddingMatrixBlockND:
    """CATLASS ``PaddingMatrixBlockND<ArchTag, Element, LayoutIn, LayoutOut, COMPUTE_LENGTH>``.

    Copies a RowMajor (ColumnMajor) matrix into a ``PaddingRowMajor`` (``PaddingColumnMajor``) workspace on all
    vector cores: the rows (columns) - "tiles" - are split evenly over the AIVs, the first ``tiles % aivNum``
    AIVs taking one more; each AIV moves its tiles GM -> UB -> GM through two UB buffers of
    ``COMPUTE_LENGTH`` elements (default 96 KiB), several short tiles per trip or one long tile over several
    trips. A tile lands in the workspace as chunks of one block width, ``blockRows * blockCols`` elements
    apart; the last chunk is written whole, so the padding columns of the last block receive whatever
    followed the tile in UB (they are never read). Calling the assembled object with an AIV's resource gives
    the per-core instance, called as ``padding(dst, src, layout_dst, layout_src)``.
    """

    padding_tag = PaddingTag.PADDING_BLOCK_ND

    def __init__(self, arch, element, layout_in: type, compute_length: int | None = None):
        self.arch = get_arch(arch)
        self.element = dt.get_dtype(element)
        what = "PaddingMatrixBlockND"
        if layout_in not in (RowMajor, ColumnMajor):
            name = getattr(layout_in, "__name__", layout_in)
            raise ConfigError(f"{what}: LayoutIn must be RowMajor or ColumnMajor, got {name}")
        self.layout_in = layout_in
        self.layout_out = PaddingRowMajor if layout_in is RowMajor else PaddingColumnMajor
        if compute_length is None:
            compute_length = 96 * 1024 * 8 // self.element.bits
        if not is_int(compute_length) or compute_length <= 0:
            raise ConfigError(f"{what}: COMPUTE_LENGTH must be a positive int, got {compute_length!r}")
        compute_length = int(compute_length)
        need = BUFFER_NUM * self.element.nbytes(compute_length)
        if need > self.arch.ub_size:
            raise ConfigError(f"{what}: {BUFFER_NUM} buffers of COMPUTE_LENGTH={compute_length} {self.element} need "
                              f"{need} bytes but {self.arch.name} UB has {self.arch.ub_size} "
                              "(BUFFER_NUM * COMPUTE_LENGTH * sizeof(Element) <= UB_SIZE)")
        if (compute_length * self.element.bits) % (BYTE_PER_BLK * 8):
            raise ConfigError(f"{what}: COMPUTE_LENGTH={compute_length} must fill whole 32-byte blocks")
        self.compute_length = compute_length
        self.copy_gm_to_ub = CopyGm2Ub(self.arch, GemmType(self.element, RowMajor))

    def get_workspace_layout(self, layout, row_align: int, col_align: int):
        """CATLASS ``GetWorkspaceLayout``: ``LayoutOut(rows, cols, rowAlign, colAlign)``."""
        return self.layout_out(layout.rows, layout.cols, row_align, col_align)

    def get_workspace_size(self, rows: int, cols: int, row_align: int, col_align: int) -> int:
        """CATLASS ``GetWorkspaceSize``: ``roundup(rows, rowAlign) * roundup(cols, colAlign) * sizeof`` bytes."""
        return self.element.nbytes(round_up(rows, row_align) * round_up(cols, col_align))

    def __call__(self, resource) -> "_PaddingBlockND":
        return _PaddingBlockND(self, resource)

    def __repr__(self) -> str:
        return (f"PaddingMatrixBlockND({self.element}, {self.layout_in.__name__} -> {self.layout_out.__name__}, "
                f"COMPUTE_LENGTH={self.compute_length})")


def _compute_layout_src(layout) -> RowMajor:
    """CATLASS ``GetPaddingComputeLayout`` of the source: a row-major view whose rows are the tiles."""
    if isinstance(layout, RowMajor):
        return RowMajor(layout.rows, layout.cols, layout.stride[0])
    return RowMajor(layout.cols, layout.rows, layout.stride[1])


def _compute_layout_dst(layout) -> PaddingRowMajor:
    """CATLASS ``GetPaddingComputeLayout`` of the destination, in the same tile-as-row view."""
    s = layout.shape
    if isinstance(layout, PaddingRowMajor):
        return PaddingRowMajor(s[0] * s[1], s[2] * s[3], s[0], s[2])
    return PaddingRowMajor(s[2] * s[3], s[0] * s[1], s[2], s[0])


class _PaddingBlockND:
    def __init__(self, spec: PaddingMatrixBlockND, resource):
        self.spec = spec
        self.ctx = resource.ctx
        e = spec.element
        self.buffers = [resource.ub_buf.get_buffer_by_byte(e, e.nbytes(i * spec.compute_length))
                        for i in range(BUFFER_NUM)]
        self.buffer_index = 0

    def _ub_to_gm(self, dst: GlobalTensor, ub, ub_offset: int, chunks: int, chunk_len: int, chunk_stride: int) -> None:
        """``CopyUb2Gm`` of ``chunks`` bursts of ``chunk_len`` elements: consecutive in UB (CATLASS's source stride
        rounds down to 0 blocks), ``chunk_stride`` apart in GM. UB bytes past the end of UB read as poison. One
        PIPE_MTE3 instruction event reading the UB elements (up to the end of UB) and writing the bursts."""
        count = chunks * chunk_len
        layout = RowMajor(chunks, chunk_len, chunk_stride)
        if ub.computes:
            flat = ub.view()[ub_offset:ub_offset + count]
            if flat.size < count:
                pad = np.empty(count - flat.size, flat.dtype)
                pad.view(np.uint8)[:] = 0xFF
                flat = np.concatenate([flat, pad])
            gm_write(dst, layout, flat.reshape(chunks, chunk_len), "PaddingMatrixBlockND")
        else:  # timing-only: the same checks, no bytes
            gm_check(dst, layout, chunks, chunk_len, "PaddingMatrixBlockND", write=True)
        ctx = self.ctx
        if ctx.bus.instructions:
            in_ub = max(0, min(count, ub.count - ub_offset))
            ctx.emit(Pipe.MTE3, "CopyUb2Gm", nbytes=self.spec.element.nbytes(count),
                     gm_writes=gm_region_access(dst, layout, chunks, chunk_len),
                     local_reads=(ub.access(ub_offset, in_ub),) if in_ub else (),
                     info={"rows": chunks, "cols": chunk_len})

    def __call__(self, dst: GlobalTensor, src: GlobalTensor, layout_dst, layout_src) -> None:
        spec, ctx = self.spec, self.ctx
        csrc = _compute_layout_src(layout_src)
        cdst = _compute_layout_dst(layout_dst)
        block_cols, block_stride = cdst.shape[2], cdst.stride[3]
        aiv_num = ctx.block_num * ctx.sub_block_num
        aiv_id = ctx.block_idx
        tiles_num, tile_len = csrc.rows, csrc.cols
        c0 = BYTE_PER_BLK * 8 // spec.element.bits
        round_tile_len = round_up(tile_len, c0)
        tiles_per_aiv, remain = divmod(tiles_num, aiv_num)
        if aiv_id < remain:
            tiles_per_aiv += 1
        first = aiv_id * tiles_per_aiv + (0 if aiv_id < remain else remain)
        length = spec.compute_length
        ctx.set_flag(HardEvent.MTE3_MTE2, 0)
        ctx.set_flag(HardEvent.MTE3_MTE2, 1)
        if round_tile_len > length:
            # Long tiles: one tile over several trips of COMPUTE_LENGTH elements.
            loops_per_tile = ceil_div(tile_len, length)
            for loop in range(tiles_per_aiv * loops_per_tile):
                tile, part = divmod(loop, loops_per_tile)
                row, col = first + tile, part * length
                actual = min(length, tile_len - col)
                buf, b = self.buffers[self.buffer_index], self.buffer_index
                ctx.wait_flag(HardEvent.MTE3_MTE2, b)
                # One UB row (CATLASS's ubLayout {1, actual}; the pitch of a single row is irrelevant).
                spec.copy_gm_to_ub(buf, src[csrc.offset(row, col)], RowMajor(1, actual, round_up(actual, c0)),
                                   csrc.get_tile_layout(1, actual))
                ctx.set_flag(HardEvent.MTE2_MTE3, b)
                ctx.wait_flag(HardEvent.MTE2_MTE3, b)
                self._ub_to_gm(dst[cdst.offset(row, col)], buf, 0, ceil_div(actual, block_cols), block_cols, block_stride)
                ctx.set_flag(HardEvent.MTE3_MTE2, b)
                self.buffer_index = (b + 1) % BUFFER_NUM
        else:
            # Short tiles: several per trip, each at a 32-byte aligned UB row.
            tiles_per_loop = length // round_tile_len
            for loop in range(ceil_div(tiles_per_aiv, tiles_per_loop)):
                tile0 = loop * tiles_per_loop
                count = min(tiles_per_loop, tiles_per_aiv - tile0)
                buf, b = self.buffers[self.buffer_index], self.buffer_index
                ctx.wait_flag(HardEvent.MTE3_MTE2, b)
                spec.copy_gm_to_ub(buf, src[csrc.offset(first + tile0, 0)], RowMajor(count, tile_len, round_tile_len),
                                   csrc.get_tile_layout(count, tile_len))
                ctx.set_flag(HardEvent.MTE2_MTE3, b)
                ctx.wait_flag(HardEvent.MTE2_MTE3, b)
                for i in range(count):
                    self._ub_to_gm(dst[cdst.offset(first + tile0 + i, 0)], buf, i * round_tile_len,
                                   ceil_div(tile_len, block_cols), block_cols, block_stride)
                ctx.set_flag(HardEvent.MTE3_MTE2, b)
                self.buffer_index = (b + 1) % BUFFER_NUM
        ctx.wait_flag(HardEvent.MTE3_MTE2, 0)
        ctx.wait_flag(HardEvent.MTE3_MTE2, 1)


def is_need_padding(layout, align: int) -> bool:
    """CATLASS examples' ``IsNeedPadding(layout, align)`` (``examples/common/helper.hpp``): the leading dimension
    is not a multiple of ``align`` elements, or is >= 65536 (too long a stride for one DMA). Fractal layouts
    never need it."""
    if isinstance(layout, RowMajor):
        ld = layout.stride[0]
    elif isinstance(layout, ColumnMajor):
        ld = layout.stride[1]
    else:
        return False
    return ld >= STRIDE_LIMIT or ld % align != 0


__all__ = ["PaddingMatrixBlockND", "is_need_padding"]
