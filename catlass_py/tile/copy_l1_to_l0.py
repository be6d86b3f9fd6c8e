"""L1 -> L0A / L0B fractal loads (CATLASS ``gemm/tile/atlasa2/copy_l1_to_l0a.hpp``, ``copy_l1_to_l0b.hpp``;
MTE1 pipe).

The hardware moves whole fractals (``LoadData``, or ``LoadDataWithTranspose`` on 32x32 int8 squares); the
functional effect is that the destination holds the tile, padded to whole fractals, in the L0 layout. The
padding carries whatever L1 held there (zeros from the ND->NZ fill, or stale data). One instruction event on
``PIPE_MTE1`` per load, reading the padded tile's fractals from L1 and writing them to L0A / L0B.
"""

from __future__ import annotations

from catlass_py.arch.memory import LocalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.arch.spec import get_arch
from catlass_py.errors import ConfigError
from catlass_py.gemm.gemm_type import GemmType
from catlass_py.gemm.helper import l0a_layout, l0b_layout
from catlass_py.layout import nZ, zN
from catlass_py.tile._region import (
    local_check,
    local_check_once,
    local_copy,
    local_read,
    local_write,
    region_access,
)


class _CopyL1ToL0:
    op_name = ""
    sources: tuple = ()

    def __init__(self, arch, l1_type: GemmType, l0_layout):
        self.arch = get_arch(arch)
        self.l1_type = l1_type
        if l1_type.layout not in self.sources:
            names = ", ".join(s.__name__ for s in self.sources)
            raise ConfigError(f"{self.op_name}: L1 layout {l1_type.layout.__name__} is not supported (use {names})")
        self.layout_src = l1_type.layout
        self.layout_dst = l0_layout
        self._wide: dict = {}  # L0 tile layout -> (the layout widened to whole fractals, rows, cols)

    def __call__(self, dst: LocalTensor, src: LocalTensor, layout_dst, layout_src, *, data: bool = True) -> None:
        """Load the tile described by ``layout_dst`` (its rows x cols, padded to whole fractals) from
        ``src``, which points at the tile origin inside an L1 buffer laid out as ``layout_src``.

        ``data=False`` (a simulator switch, used by a block that computes the L1 tile's product in one piece:
        ``BlockMmadInstance.mmad_l1_tile``): the instruction, its event and its checks, without moving bytes."""
        if not isinstance(layout_dst, self.layout_dst):
            raise ConfigError(f"{self.op_name}: destination layout must be {self.layout_dst.__name__}, got {layout_dst!r}")
        wide = self._wide.get(layout_dst)
        if wide is None:
            rows, cols = layout_dst.padded_shape
            # Whole fractals move: address the padding too by widening the destination to its padded shape.
            if len(self._wide) >= 1024:
                self._wide.clear()
            wide = self._wide[layout_dst] = (layout_dst.get_tile_layout(rows, cols), rows, cols)
        layout_l0, rows, cols = wide
        if data and dst.computes:
            if not local_copy(dst, layout_l0, src, layout_src, rows, cols):
                local_write(dst, layout_l0, local_read(src, layout_src, rows, cols, self.op_name), self.op_name)
        elif not data:  # the block computes the tile's product itself: the same checks, proved once per geometry
            local_check_once(src, layout_src, rows, cols, self.op_name)
            local_check_once(dst, layout_l0, rows, cols, self.op_name, write=True)
        else:  # timing-only: the same checks, no bytes
            local_check(src, layout_src, rows, cols, self.op_name)
            local_check(dst, layout_l0, rows, cols, self.op_name, write=True)
        ctx = dst.ctx
        if ctx is not None and ctx.bus.instructions:
            ctx.emit(Pipe.MTE1, self.op_name, nbytes=self.l1_type.element.nbytes(rows * cols),
                     local_reads=region_access(src, layout_src, rows, cols),
                     local_writes=region_access(dst, layout_l0, rows, cols), info={"rows": rows, "cols": cols})


class CopyL1ToL0A(_CopyL1ToL0):
    """CATLASS ``Gemm::Tile::CopyL1ToL0A<ArchTag, L1Type>``: zN -> zZ (row-major A) or nZ -> zZ (column-major
    A, transposed on the fly) on Atlas A2; the Ascend 950 L0A layout is zN."""

    op_name = "CopyL1ToL0A"
    sources = (zN, nZ)

    def __init__(self, arch, l1_type: GemmType):
        arch = get_arch(arch)
        super().__init__(arch, l1_type, l0a_layout(arch))


class CopyL1ToL0B(_CopyL1ToL0):
    """CATLASS ``Gemm::Tile::CopyL1ToL0B<ArchTag, L1Type>``: zN -> nZ (row-major B; int8 is transposed as
    32x32 squares) or nZ -> nZ (column-major B)."""

    op_name = "CopyL1ToL0B"
    sources = (zN, nZ)

    def __init__(self, arch, l1_type: GemmType):
        arch = get_arch(arch)
        super().__init__(arch, l1_type, l0b_layout(arch))
