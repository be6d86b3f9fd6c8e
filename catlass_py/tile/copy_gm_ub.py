"""GM <-> UB copies of the vector cores (CATLASS ``epilogue/tile/copy_gm_to_ub.hpp``, ``copy_ub_to_gm.hpp``;
MTE2 in, MTE3 out).

Each copy is one instruction event: ``CopyGm2Ub`` on ``PIPE_MTE2`` reads the GM region and writes its rows at
the UB row pitch; ``CopyUb2Gm`` on ``PIPE_MTE3`` reads those UB rows and writes the GM region.
"""

from __future__ import annotations

from catlass_py.arch.memory import GlobalTensor, LocalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.arch.spec import get_arch
from catlass_py.errors import AlignmentError, ConfigError
from catlass_py.gemm.gemm_type import GemmType
from catlass_py.layout import RowMajor, VectorLayout
from catlass_py.tile._region import (
    gm_check,
    gm_local_copy,
    gm_read,
    gm_region_access,
    gm_write,
    local_check,
    local_read,
    local_write,
    region_access,
    span_access,
)


def _check_layout(op: str, gm_type: GemmType) -> None:
    if gm_type.layout not in (RowMajor, VectorLayout):
        raise ConfigError(f"{op}: GM layout must be RowMajor or VectorLayout, got {gm_type.layout.__name__}")


def _check_ub_pitch(op: str, layout, gm_type: GemmType) -> None:
    # DataCopyPad places every UB row on a 32-byte boundary: the UB row pitch must be whole 32-byte blocks.
    if isinstance(layout, RowMajor) and (layout.stride[0] * gm_type.element.bits) % 256:
        raise AlignmentError(
            f"{op}: UB row pitch {layout.stride[0]} {gm_type.element} elements is not a whole number of 32-byte blocks"
        )


def _check_dtypes(op: str, gm_type: GemmType, gm: GlobalTensor, ub: LocalTensor, direction: str) -> None:
    # Like the cube's copies: a copy moves elements of its GemmType's element and never converts them.
    element = gm_type.element
    if (gm.dtype is not element and gm.dtype != element) or (ub.dtype is not element and ub.dtype != element):
        src, dst = (f"GM {gm.dtype}", f"UB {ub.dtype}") if direction == "in" else (f"UB {ub.dtype}", f"GM {gm.dtype}")
        raise ConfigError(f"{op}: assembled for {element} elements, called with {src} -> {dst} (a copy moves "
                          f"elements and never converts them; cast first)")


class CopyGm2Ub:
    """CATLASS ``Epilogue::Tile::CopyGm2Ub<ArchTag, GemmType<E, RowMajor | VectorLayout>>`` (``DataCopyPad``).

    RowMajor: ``rows`` bursts of ``cols`` elements; each lands at the start of a UB row of pitch
    ``layout_dst.ldm`` (a whole number of 32-byte blocks); the rest of the row keeps its old contents.
    VectorLayout: one burst of ``layout_src.shape[0]`` elements to UB offset 0 (the UB layout is ignored,
    as in CATLASS where ``VectorLayout::MakeLayoutInUb`` is a dummy). Both tensors must hold ``gm_type``'s
    element (:class:`ConfigError` otherwise: a copy never converts).
    """

    def __init__(self, arch, gm_type: GemmType):
        self.arch = get_arch(arch)
        _check_layout("CopyGm2Ub", gm_type)
        self.gm_type = gm_type

    def __call__(self, dst: LocalTensor, src: GlobalTensor, layout_dst, layout_src) -> None:
        _check_dtypes("CopyGm2Ub", self.gm_type, src, dst, "in")
        compute = dst.computes
        if isinstance(layout_src, VectorLayout):
            n = layout_src.shape[0]
            if compute:
                if n and n <= dst.count and not dst.dtype.packed:  # gathered straight into UB (GM checked first)
                    gm_read(src, layout_src, n, None, "CopyGm2Ub", out=dst.view(n))
                else:
                    data = gm_read(src, layout_src, n, None, "CopyGm2Ub") if n else src.view(0)
                    dst.view(n)[:] = data
            else:  # timing-only: the same checks, no bytes
                gm_check(src, layout_src, n, None, "CopyGm2Ub")
                dst.check(n)
            rows, cols = 1, n
        else:
            _check_ub_pitch("CopyGm2Ub", layout_dst, self.gm_type)
            rows, cols = layout_src.rows, layout_src.cols
            if rows and cols:
                if compute:
                    if not gm_local_copy(dst, layout_dst, src, layout_src, rows, cols, to_gm=False):
                        local_write(dst, layout_dst, gm_read(src, layout_src, rows, cols, "CopyGm2Ub"), "CopyGm2Ub")
                else:
                    gm_check(src, layout_src, rows, cols, "CopyGm2Ub")
                    local_check(dst, layout_dst, rows, cols, "CopyGm2Ub", write=True)
        ctx = dst.ctx
        if ctx is not None and ctx.bus.instructions:
            local = ctx.bus.local_accesses
            if isinstance(layout_src, VectorLayout):
                ub = (span_access(dst, cols),) if cols and local else ()
                gm = gm_region_access(src, layout_src, cols)
            else:
                ub = region_access(dst, layout_dst, rows, cols) if local else ()
                gm = gm_region_access(src, layout_src, rows, cols)
            ctx.emit(Pipe.MTE2, "CopyGm2Ub", nbytes=self.gm_type.element.nbytes(rows * cols),
                     gm_reads=gm, local_writes=ub, info={"rows": rows, "cols": cols})


class CopyUb2Gm:
    """CATLASS ``Epilogue::Tile::CopyUb2Gm<ArchTag, GemmType<E, RowMajor | VectorLayout>>`` (``DataCopyPad``):
    writes exactly ``rows x cols`` elements (byte-granular, no overrun) from UB rows of pitch
    ``layout_src.ldm``; VectorLayout: one burst from UB offset 0. Both tensors must hold ``gm_type``'s element."""

    def __init__(self, arch, gm_type: GemmType):
        self.arch = get_arch(arch)
        _check_layout("CopyUb2Gm", gm_type)
        self.gm_type = gm_type

    def __call__(self, dst: GlobalTensor, src: LocalTensor, layout_dst, layout_src) -> None:
        _check_dtypes("CopyUb2Gm", self.gm_type, dst, src, "out")
        compute = src.computes
        if isinstance(layout_dst, VectorLayout):
            n = layout_dst.shape[0]
            if n:
                if compute:
                    gm_write(dst, layout_dst, src.view(n), "CopyUb2Gm")
                else:  # timing-only: the same checks, no bytes
                    src.check(n)
                    gm_check(dst, layout_dst, n, None, "CopyUb2Gm", write=True)
            rows, cols = 1, n
        else:
            _check_ub_pitch("CopyUb2Gm", layout_src, self.gm_type)
            rows, cols = layout_dst.rows, layout_dst.cols
            if rows and cols:
                if compute:
                    if not gm_local_copy(src, layout_src, dst, layout_dst, rows, cols, to_gm=True):
                        gm_write(dst, layout_dst, local_read(src, layout_src, rows, cols, "CopyUb2Gm"), "CopyUb2Gm")
                else:
                    local_check(src, layout_src, rows, cols, "CopyUb2Gm")
                    gm_check(dst, layout_dst, rows, cols, "CopyUb2Gm", write=True)
        ctx = src.ctx
        if ctx is not None and ctx.bus.instructions:
            local = ctx.bus.local_accesses
            if isinstance(layout_dst, VectorLayout):
                ub = (span_access(src, cols),) if cols and local else ()
                gm = gm_region_access(dst, layout_dst, cols)
            else:
                ub = region_access(src, layout_src, rows, cols) if local else ()
                gm = gm_region_access(dst, layout_dst, rows, cols)
            ctx.emit(Pipe.MTE3, "CopyUb2Gm", nbytes=self.gm_type.element.nbytes(rows * cols),
                     gm_writes=gm, local_reads=ub, info={"rows": rows, "cols": cols})
