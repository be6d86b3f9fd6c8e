"""Vector-core pre- and post-processing of example 34 (CATLASS ``gemm/kernel/padding_matmul.hpp``):
``PaddingMatrixNZ`` (ND -> NZ repacking of an operand into a GM workspace) and ``RemovePaddingNDAndCast``
(copy/cast of an accumulator workspace into C). ``PaddingBuilder(PaddingTag.PADDING_NZ, ...)``
(:mod:`catlass_py.kernel.padding`) builds the :class:`PaddingMatrixNZ` of this module; the block-ND padding is
in :mod:`catlass_py.kernel.padding_block_nd`.

``RemovePaddingNDAndCast`` implements ``NO_PADDING`` (the C copy of example 34); ``PADDING_ND`` raises
:class:`ConfigError`.
"""

from __future__ import annotations

from catlass_py.arch.memory import GlobalTensor, Resource
from catlass_py.arch.pipes import HardEvent, Pipe
from catlass_py.arch.spec import get_arch
from catlass_py.errors import ConfigError
from catlass_py.gemm.coord import MatrixCoord, ceil_div, round_down, round_up
from catlass_py.gemm.gemm_type import GemmType
from catlass_py.integers import is_int
from catlass_py.kernel.padding_tag import PaddingTag
from catlass_py.kernel.reduce_add import cast_mode
from catlass_py.layout import ColumnMajor, RowMajor, nZ, zN
from catlass_py.numerics import dtypes as dt
from catlass_py.tile._region import (
    gm_check,
    gm_region_access,
    gm_write,
    local_check,
    local_read,
    local_write,
    region_access,
)
from catlass_py.tile.copy_gm_ub import CopyGm2Ub, CopyUb2Gm
from catlass_py.tile.vector import vector_cast

BYTE_PER_C0 = 32
BYTE_PER_BLK = 32
C0_NUM_PER_FRACTAL = 16
BLK_NUM_PER_VECTOR_FRACTAL = 8
VNCHW_SIZE = 16
BUFFER_NUM = 2


class PaddingMatrixNZ:
    """Assembled CATLASS ``PaddingMatrixNZ<ArchTag, Element, LayoutIn, LayoutOut, COMPUTE_LENGTH>``: the vector
    cores repack a RowMajor (ColumnMajor) GM matrix into a zN (nZ) GM workspace, so that the cube's GM->L1
    copies become plain panel copies.

    ``CommonND2NZ``: the matrix (a column-major one is handled as its row-major transpose) is cut into tiles
    of 16 rows x ``tileCols`` (a multiple of C0), dealt round robin over all vector cores; each tile goes
    GM -> UB (rows padded to whole 32-byte blocks), UB -> UB into zN order (8 rows per vector repeat), and
    UB -> GM as whole 16-row x C0 fractals, so the workspace's padding rows/columns hold whatever UB held.
    The C++ switches to ``VnchwND2NZ`` (``TransDataTo5HD`` transposes) for tall matrices with an unaligned
    row length (> 1024 rows, row length not a multiple of C0, dense rows); it produces the same workspace
    contents apart from the padding and is modelled here by the same per-tile data movement with the
    Vnchw tile height (a documented simplification of the instruction sequence).
    Check: ``BUFFER_NUM * COMPUTE_LENGTH * sizeof(Element) * 2 <= UB_SIZE``, LayoutIn RowMajor/ColumnMajor.
    """

    padding_tag = PaddingTag.PADDING_NZ

    def __init__(self, arch, element, layout_in: type, compute_length: int | None = None):
        what = "PaddingMatrixNZ"
        self.arch = get_arch(arch)
        self.element = dt.get_dtype(element)
        if layout_in not in (RowMajor, ColumnMajor):
            raise ConfigError(f"{what}: unsupported layout {getattr(layout_in, '__name__', layout_in)} (RowMajor or "
                              f"ColumnMajor)")
        self.layout_in = layout_in
        self.layout_out = zN if layout_in is RowMajor else nZ
        if compute_length is None:
            compute_length = 48 * 1024 // self.element.nbytes(1)
        if not is_int(compute_length) or compute_length < C0_NUM_PER_FRACTAL:
            raise ConfigError(f"{what}: COMPUTE_LENGTH must be an int >= 16, got {compute_length!r}")
        compute_length = int(compute_length)
        need = BUFFER_NUM * compute_length * self.element.nbytes(1) * 2
        if need > self.arch.ub_size:
            raise ConfigError(f"{what}: {BUFFER_NUM} x COMPUTE_LENGTH {compute_length} x {self.element.nbytes(1)} B "
                              f"x 2 "
                              f"= {need} B exceeds UB_SIZE {self.arch.ub_size} (Excedding the UB space!)")
        if self.element.nbytes(compute_length) % BYTE_PER_BLK:
            raise ConfigError(f"{what}: COMPUTE_LENGTH {compute_length} does not fill whole 32-byte blocks")
        self.compute_length = compute_length
        self.c0 = self.element.c0
        self.copy_gm2ub = CopyGm2Ub(self.arch, GemmType(self.element, RowMajor))

    def get_workspace_layout(self, layout):
        """``LayoutOut::MakeLayout<Element>(rows, cols)`` of the input matrix."""
        return self.layout_out.make_layout(self.element, layout.rows, layout.cols)

    def get_workspace_size(self, rows: int, cols: int) -> int:
        """Bytes of the padded workspace: ``roundup(rows, 16) * roundup(cols, C0)`` (row-major input) or
        ``roundup(rows, C0) * roundup(cols, 16)`` (column-major input) elements."""
        if self.layout_in is RowMajor:
            return self.element.nbytes(round_up(rows, C0_NUM_PER_FRACTAL) * round_up(cols, self.c0))
        return self.element.nbytes(round_up(rows, self.c0) * round_up(cols, C0_NUM_PER_FRACTAL))

    def __call__(self, resource: Resource) -> "_PaddingMatrixNZInstance":
        return _PaddingMatrixNZInstance(self, resource)

    def __repr__(self) -> str:
        return f"PaddingMatrixNZ({self.element.name}, {self.layout_in.__name__} -> {self.layout_out.__name__})"


class _PaddingMatrixNZInstance:
    """One vector core's ``PaddingMatrixNZ`` object."""

    def __init__(self, spec: PaddingMatrixNZ, resource: Resource):
        self.spec = spec
        self.ctx = resource.ctx
        ub = resource.ub_buf
        cl, e = spec.compute_length, spec.element
        self.input = [ub.get_buffer_by_byte(e, e.nbytes(2 * i * cl), cl) for i in range(BUFFER_NUM)]
        self.output = [ub.get_buffer_by_byte(e, e.nbytes((2 * i + 1) * cl), cl) for i in range(BUFFER_NUM)]
        self.buffer_index = 0

    def _compute_layouts(self, layout_dst, layout_src):
        """``GetPaddingComputeLayout``: a column-major matrix is repacked as its row-major transpose."""
        e = self.spec.element
        if isinstance(layout_src, ColumnMajor):
            src = RowMajor(layout_src.cols, layout_src.rows, layout_src.stride[1])
            dst = zN.make_layout(e, layout_dst.cols, layout_dst.rows)
        else:
            src, dst = layout_src, layout_dst
        return dst, src

    def __call__(self, dst: GlobalTensor, src: GlobalTensor, layout_dst, layout_src) -> None:
        """Repack the matrix ``src`` (``layout_src``) into the workspace ``dst`` (``layout_dst``)."""
        spec, ctx = self.spec, self.ctx
        cdst, csrc = self._compute_layouts(layout_dst, layout_src)
        rows, cols = csrc.rows, csrc.cols
        vnchw_max = spec.compute_length // VNCHW_SIZE // spec.c0
        cond0 = cols % spec.c0 != 0
        cond1 = cols < vnchw_max and cols != 0
        cond2 = cols < vnchw_max * 2 and cols % 2 == 0
        cond3 = cols < vnchw_max * 4 and cols % 4 == 0
        cond4 = rows > 1024
        cond5 = cols == csrc.stride[0]
        if cond0 and cond4 and (cond1 or cond2 or cond3) and cond5:
            tile_rows, tile_cols = self._vnchw_tile(rows, cols, vnchw_max, spec.c0), cols
        else:
            ref_cols = spec.compute_length // C0_NUM_PER_FRACTAL
            tile_rows = C0_NUM_PER_FRACTAL
            tile_cols = round_up(cols // ceil_div(cols, ref_cols), spec.c0)
        self._nd2nz(dst, src, cdst, csrc, tile_rows, tile_cols)

    @staticmethod
    def _vnchw_tile(rows: int, inner: int, vnchw_max: int, c0: int) -> int:
        """Tile height of the C++ ``VnchwND2NZ`` path (``innerAxisPerCols * 16`` rows)."""
        c0_cols = inner * c0  # transMatrixCols before the halving / quartering
        cond1 = rows > 8192 and inner < vnchw_max
        cond2 = rows > 4096 and inner < vnchw_max * 2 and inner % 2 == 0
        cond3 = rows > 2048 and inner < vnchw_max * 4 and inner % 4 == 0
        if cond2 and not cond1:
            c0_cols //= 2
        elif cond3 and not cond1:
            c0_cols //= 4
        elif not cond1:
            if inner % 4 == 0:
                c0_cols //= 4
            elif inner % 2 == 0:
                c0_cols //= 2
        return (c0_cols // inner) * VNCHW_SIZE

    def _nd2nz(self, dst, src, cdst, csrc, tile_rows, tile_cols) -> None:
        spec, ctx = self.spec, self.ctx
        c0 = spec.c0
        aiv_num = ctx.block_num * ctx.sub_block_num
        rows, cols = csrc.rows, csrc.cols
        row_tiles, col_tiles = ceil_div(rows, tile_rows), ceil_div(cols, tile_cols)
        for e in (0, 1):
            ctx.set_flag(HardEvent.V_MTE2, e)
            ctx.set_flag(HardEvent.MTE3_V, e)
        for loop in range(ctx.block_idx, row_tiles * col_tiles, aiv_num):
            rt, ct = divmod(loop, col_tiles)
            r_act = rows - rt * tile_rows if rt == row_tiles - 1 else tile_rows
            c_act = cols - ct * tile_cols if ct == col_tiles - 1 else tile_cols
            coord = MatrixCoord(rt * tile_rows, ct * tile_cols)
            b = self.buffer_index
            ub_in = RowMajor(r_act, c_act, round_up(c_act, c0))
            ctx.wait_flag(HardEvent.V_MTE2, b)
            spec.copy_gm2ub(self.input[b], src[csrc.offset(*coord)], ub_in, csrc.get_tile_layout(r_act, c_act))
            ctx.set_flag(HardEvent.MTE2_V, b)
            ctx.wait_flag(HardEvent.MTE2_V, b)
            ctx.wait_flag(HardEvent.MTE3_V, b)
            ub_out = zN.make_layout(spec.element, r_act, c_act)
            # UB -> UB Copy: whole groups of 8 rows (one 256-byte repeat per 32-byte column block).
            groups = ceil_div(r_act, BLK_NUM_PER_VECTOR_FRACTAL) * BLK_NUM_PER_VECTOR_FRACTAL
            width = round_up(c_act, c0)
            layout_in = RowMajor(groups, width, width)
            layout_out = ub_out.get_tile_layout(groups, width)
            if ctx.numerics:
                data = local_read(self.input[b], layout_in, groups, width, "Copy (UB->UB)")
                local_write(self.output[b], layout_out, data, "Copy (UB->UB)")
            else:  # timing-only: the same checks, no bytes
                local_check(self.input[b], layout_in, groups, width, "Copy (UB->UB)")
                local_check(self.output[b], layout_out, groups, width, "Copy (UB->UB)", write=True)
            if ctx.bus.instructions:
                ctx.emit(Pipe.V, "Copy", nbytes=spec.element.nbytes(groups * width), flops=0,
                         local_reads=region_access(self.input[b], layout_in, groups, width),
                         local_writes=region_access(self.output[b], layout_out, groups, width),
                         info={"rows": groups, "cols": width})
            ctx.set_flag(HardEvent.V_MTE2, b)
            ctx.set_flag(HardEvent.V_MTE3, b)
            ctx.wait_flag(HardEvent.V_MTE3, b)
            # UB -> GM: whole fractals (roundup(rows, 16) rows of every C0 panel of the tile).
            full = (round_up(r_act, C0_NUM_PER_FRACTAL), width)
            ub_full = ub_out.get_tile_layout(*full)
            gm_tile = dst[cdst.offset(*coord)]
            gm_layout = cdst.get_tile_layout(*full)
            if ctx.numerics:
                panel = local_read(self.output[b], ub_full, *full, "DataCopy (UB->GM)")
                gm_write(gm_tile, gm_layout, panel, "PaddingMatrixNZ")
            else:
                local_check(self.output[b], ub_full, *full, "DataCopy (UB->GM)")
                gm_check(gm_tile, gm_layout, *full, "PaddingMatrixNZ", write=True)
            if ctx.bus.instructions:
                # Whole fractals: roundup(rows, 16) x C0 elements per C0-wide panel, panels stride3 apart in GM.
                ctx.emit(Pipe.MTE3, "DataCopy", nbytes=spec.element.nbytes(full[0] * full[1]),
                         gm_writes=gm_region_access(gm_tile, gm_layout, *full),
                         local_reads=region_access(self.output[b], ub_full, *full),
                         info={"rows": full[0], "cols": full[1]})
            ctx.set_flag(HardEvent.MTE3_V, b)
            ctx.mark("padding_tile", row=coord.row, col=coord.column, rows=r_act, cols=c_act)
            self.buffer_index = 1 - b
        for e in (0, 1):
            ctx.wait_flag(HardEvent.V_MTE2, e)
            ctx.wait_flag(HardEvent.MTE3_V, e)


class RemovePaddingNDAndCast:
    """Assembled CATLASS ``RemovePaddingNDAndCast<PaddingTag, ArchTag, ElementIn, ElementOut, Layout>``: the
    vector cores copy an accumulator workspace (``ElementIn``) into C (``ElementOut``), casting
    (``CAST_NONE`` to half, ``CAST_RINT`` otherwise). Rows are dealt contiguously (the first ``rows % aivs``
    vector cores take one more), several rows per UB load when a row fits ``COMPUTE_LENGTH`` (then each UB
    row starts on a 32-byte boundary), else one row in chunks.
    ``COMPUTE_LENGTH = RoundDown<32>(UB_SIZE / (sizeof(in) [+ sizeof(out)]) / 2)``.
    """

    def __init__(self, padding_tag: PaddingTag, arch, element_in, element_out, layout: type):
        what = "RemovePaddingNDAndCast"
        self.padding_tag = PaddingTag(padding_tag)
        if self.padding_tag is not PaddingTag.NO_PADDING:
            raise ConfigError(f"{what}: only NO_PADDING is implemented in catlass_py, got {self.padding_tag.value}")
        self.arch = get_arch(arch)
        self.element_in, self.element_out = dt.get_dtype(element_in), dt.get_dtype(element_out)
        if layout not in (RowMajor, ColumnMajor):
            raise ConfigError(f"{what}: unsupported layout {getattr(layout, '__name__', layout)}")
        self.layout = layout
        same = self.element_in == self.element_out
        per = self.element_in.nbytes(1) + (0 if same else self.element_out.nbytes(1))
        self.compute_length = round_down(self.arch.ub_size // per // BUFFER_NUM, BYTE_PER_BLK)
        self.ele_num_per_c0 = max(BYTE_PER_C0 // self.element_in.nbytes(1), BYTE_PER_C0 // self.element_out.nbytes(1))
        self.copy_gm2ub = CopyGm2Ub(self.arch, GemmType(self.element_in, RowMajor))
        self.copy_ub2gm = CopyUb2Gm(self.arch, GemmType(self.element_out, RowMajor))

    def get_workspace_size(self, rows: int, cols: int, align: int = 1) -> int:
        """Bytes of the accumulator workspace (``rows * roundup(cols, align)`` elements for RowMajor)."""
        if self.layout is RowMajor:
            return self.element_in.nbytes(rows * round_up(cols, align))
        return self.element_in.nbytes(cols * round_up(rows, align))

    def __call__(self, resource: Resource) -> "_RemovePaddingInstance":
        return _RemovePaddingInstance(self, resource)

    def __repr__(self) -> str:
        return (f"RemovePaddingNDAndCast({self.element_in.name} -> {self.element_out.name}, "
                f"COMPUTE_LENGTH={self.compute_length})")


class _RemovePaddingInstance:
    """One vector core's ``RemovePaddingNDAndCast`` object."""

    def __init__(self, spec: RemovePaddingNDAndCast, resource: Resource):
        self.spec = spec
        self.ctx = resource.ctx
        ub, cl = resource.ub_buf, spec.compute_length
        in_size = spec.element_in.nbytes(cl)
        self.input = [ub.get_buffer_by_byte(spec.element_in, in_size * i, cl) for i in range(BUFFER_NUM)]
        if spec.element_in != spec.element_out:
            out_size = spec.element_out.nbytes(cl)
            self.output = [ub.get_buffer_by_byte(spec.element_out, in_size * BUFFER_NUM + out_size * i, cl)
                           for i in range(BUFFER_NUM)]
        else:
            self.output = self.input
        self.buffer_index = 0

    @staticmethod
    def _compute_layout(layout):
        if isinstance(layout, ColumnMajor):
            return RowMajor(layout.cols, layout.rows, layout.stride[1])
        return RowMajor(layout.rows, layout.cols, layout.stride[0])

    def __call__(self, dst: GlobalTensor, src: GlobalTensor, layout_dst, layout_src,
                 use_single_core: bool = False) -> None:
        spec, ctx = self.spec, self.ctx
        csrc, cdst = self._compute_layout(layout_src), self._compute_layout(layout_dst)
        if use_single_core:
            aiv_num, aiv_id = ctx.sub_block_num, ctx.sub_block_idx
        else:
            aiv_num, aiv_id = ctx.block_num * ctx.sub_block_num, ctx.block_idx
        tiles, tile_len = csrc.rows, csrc.cols
        round_len = round_up(tile_len, spec.ele_num_per_c0)
        per_aiv = tiles // aiv_num + (1 if aiv_id < tiles % aiv_num else 0)
        m_idx = aiv_id * per_aiv + (0 if aiv_id < tiles % aiv_num else tiles % aiv_num)
        cl = spec.compute_length
        cast = spec.element_in != spec.element_out
        mode = cast_mode(spec.element_out)
        for e in (0, 1):
            ctx.set_flag(HardEvent.MTE3_MTE2, e)
        if round_len > cl:
            loops_per_tile = ceil_div(tile_len, cl)
            pieces = [(t, j * cl, min(cl, tile_len - j * cl), 1) for t in range(per_aiv) for j in range(loops_per_tile)]
        else:
            per_loop = cl // round_len
            pieces = [(i, 0, tile_len, min(per_loop, per_aiv - i)) for i in range(0, per_aiv, per_loop)]
        for row, col, length, nrows in pieces:
            b = self.buffer_index
            off = (m_idx + row, col)
            ub = RowMajor(nrows, length, round_up(length, spec.ele_num_per_c0))
            ctx.wait_flag(HardEvent.MTE3_MTE2, b)
            spec.copy_gm2ub(self.input[b], src[csrc.offset(*off)], ub, csrc.get_tile_layout(nrows, length))
            if cast:
                ctx.set_flag(HardEvent.MTE2_V, b)
                ctx.wait_flag(HardEvent.MTE2_V, b)
                vector_cast(self.output[b], self.input[b], mode, nrows * ub.stride[0])
                ctx.set_flag(HardEvent.V_MTE3, b)
                ctx.wait_flag(HardEvent.V_MTE3, b)
            else:
                ctx.set_flag(HardEvent.MTE2_MTE3, b)
                ctx.wait_flag(HardEvent.MTE2_MTE3, b)
            spec.copy_ub2gm(dst[cdst.offset(*off)], self.output[b], cdst.get_tile_layout(nrows, length), ub)
            ctx.set_flag(HardEvent.MTE3_MTE2, b)
            ctx.mark("epilogue_tile", row=off[0], col=off[1], rows=nrows, cols=length, zero=False)
            self.buffer_index = (b + 1) % BUFFER_NUM
        for e in (0, 1):
            ctx.wait_flag(HardEvent.MTE3_MTE2, e)


__all__ = ["PaddingMatrixNZ", "RemovePaddingNDAndCast"]
