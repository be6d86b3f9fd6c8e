"""CATLASS ``Gemm::Kernel::GroupedMatmulSliceKPerTokenDequant`` (example 11's kernel,
``gemm/kernel/grouped_matmul_slice_k_per_token_dequant.hpp``).

int8 grouped matmul split along K: group g multiplies A[:, K_g] (m x k_g; A column-major, so the group's
slab is ``m * k_g`` contiguous elements) by B[K_g, :] (k_g x n, row-major) into C_g, and the vector cores
dequantise C_g with the group's per-channel scale [n] and per-token scale [m] into D_g; D is [G, m, n].
The workspace holds every group's C (``G * m * n`` int32), and the handshake is example 07's
``CrossCoreFlagWithReverse`` pair: the skeleton :class:`~catlass_py.kernel.workspace_epilogue.WorkspaceEpilogueKernel`
with a full-size workspace.

A group with ``k_g == 0`` is the interesting case: the BlockMmad issues nothing for its blocks (no callback,
no flag), and the epilogue, seeing k == 0, writes zeros for them without waiting, so D_g = 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from catlass_py.arch.memory import GlobalTensor
from catlass_py.gemm.coord import GemmCoord
from catlass_py.kernel.workspace_epilogue import SLICE_K, GroupedPerTokenDequantKernel


@dataclass(frozen=True)
class GroupedMatmulSliceKPerTokenDequantArguments:
    """Host-side ``Arguments{problemShape, problemCount, ptrGroupList, ptrA, ptrB, ptrScale, ptrPerTokenScale,
    ptrD}`` (``problem_shape`` = (m, n, total k))."""

    problem_shape: GemmCoord
    problem_count: int
    ptr_group_list: GlobalTensor
    ptr_a: GlobalTensor
    ptr_b: GlobalTensor
    ptr_scale: GlobalTensor
    ptr_per_token_scale: GlobalTensor
    ptr_d: GlobalTensor


class GroupedMatmulSliceKPerTokenDequant(GroupedPerTokenDequantKernel):
    """CATLASS ``GroupedMatmulSliceKPerTokenDequant<BlockMmad, BlockEpilogue, BlockScheduler, ElementGroupList>``
    (example 11): groups slice K (prefix sums over k); D [G, m, n]; an async BlockMmad must take one callback
    (``MmadAtlasA2PreloadAsync``). See the module doc."""

    Arguments = GroupedMatmulSliceKPerTokenDequantArguments
    group_walk = SLICE_K

    def __init__(self, block_mmad, block_epilogue, block_scheduler, element_group_list="int64"):
        super().__init__(block_mmad, block_epilogue, block_scheduler, element_group_list=element_group_list)

    def get_workspace_size(self, args) -> int:
        """``m * n * problemCount * sizeof(uint32)`` bytes."""
        m, n, _ = args.problem_shape
        return m * n * args.problem_count * 4


__all__ = ["GroupedMatmulSliceKPerTokenDequant", "GroupedMatmulSliceKPerTokenDequantArguments"]
