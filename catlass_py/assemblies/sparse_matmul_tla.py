"""CATLASS example 41 sparse_matmul_tla (``examples/41_sparse_matmul_tla/sparse_matmul_tla.cpp``):
``KernelSparseMatmul`` with ``BlockMmadSparseTla<SparseMatmulMultiBlockOnKAxis<AtlasA2, false>>`` (int8 A RowMajor,
the dense int8 B ColumnMajor with its NZ index, int32 C RowMajor; L1 128 x 256 x 128, L0 128 x 256 x 64),
``SparseTileCopyTla`` and ``BlockSchedulerIterateK``, no epilogue; assembled step by step like the C++.

Used by ``examples/41_sparse_matmul_tla.py`` and :mod:`catlass_py.ops.sparse_matmul_tla`.
"""

from __future__ import annotations

from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.settings import Policy, TileShape
from catlass_py.gemm import GemmShape, SparseMatmulMultiBlockOnKAxis
from catlass_py.gemm.block import BlockMmadSparseTla, BlockSchedulerIterateK
from catlass_py.kernel.sparse_matmul_tla import KernelSparseMatmul
from catlass_py.tile.copy_sparse_tla import SparseTileCopyTla

L1_TILE = GemmShape(128, 256, 128)
L0_TILE = GemmShape(128, 256, 64)


def assemble(arch=ATLAS_A2, *, dispatch_policy: Policy | None = None, l1_tile: TileShape = L1_TILE,
             l0_tile: TileShape = L0_TILE):
    """Build the kernel like the C++ example; the keywords swap the dispatch policy
    (``SparseMatmulMultiBlockOnKAxis``) and the ``L1TileShape`` / ``L0TileShape``."""
    # 1. Dispatch policy: SparseMatmulMultiBlockOnKAxis<ArchTag, false>.
    if dispatch_policy is None:
        dispatch_policy = SparseMatmulMultiBlockOnKAxis(False, arch=arch)
    # 2. Tile shapes: Shape<_128, _256, _128> in L1, Shape<_128, _256, _64> in L0.
    l1, l0 = GemmShape(*l1_tile), GemmShape(*l0_tile)
    # 3. SparseTileCopyTla<ArchTag, int8_t, RowMajor, int8_t, ColumnMajor, int32_t, RowMajor>.
    tile_copy = SparseTileCopyTla(arch, "int8", "RowMajor", "int8", "ColumnMajor", "int32", "RowMajor")
    # 4. BlockMmadSparseTla<DispatchPolicy, L1TileShape, L0TileShape, int8_t, int8_t, int32_t, void, TileCopy>.
    block_mmad = BlockMmadSparseTla(dispatch_policy, l1, l0, "int8", "int8", "int32", None, tile_copy)
    # 5. BlockSchedulerIterateK<ProblemShape, L1TileShape, L0TileShape>; no epilogue.
    block_scheduler = BlockSchedulerIterateK(l1, l0)
    # 6. Kernel.
    return KernelSparseMatmul(block_mmad, None, block_scheduler)


__all__ = ["L0_TILE", "L1_TILE", "assemble"]
