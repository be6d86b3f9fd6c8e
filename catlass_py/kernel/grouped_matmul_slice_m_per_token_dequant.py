"""CATLASS ``Gemm::Kernel::GroupedMatmulSliceMPerTokenDequant`` (example 07's kernel,
``gemm/kernel/grouped_matmul_slice_m_per_token_dequant.hpp``).

int8 grouped matmul split along M with per-channel x per-token dequantisation, like example 10, but with a
*full-size* workspace: C of every group is stored at its own place in a GM buffer of ``m * n`` elements (no
ring), so the cube core never waits for the vector cores to free a slot. The only synchronisation is one
flag with back-pressure (``CrossCoreFlagWithReverse``, flag 0, reverse flag 1):

==========  =====================================================  =========================================
who         when                                                   flag operation
==========  =====================================================  =========================================
AIC         right after each block's fixpipe (BlockMmad callback)   set 0 (mode 2, PIPE_FIX); every 15th: wait 1
AIV         inside the epilogue, before reading a block (k > 0)     wait 0; every 15th: set 1 (mode 2, MTE3)
==========  =====================================================  =========================================

Blocks of all groups form one sequence dealt round robin over the AI cores (``startCoreIdx`` rotation), as
in example 10. A group with ``k == 0`` blocks (only possible if the whole problem has k == 0) issues no cube
work and no flag; the epilogue then writes zeros without waiting. The loops on both core types are the
skeleton's (:class:`~catlass_py.kernel.workspace_epilogue.WorkspaceEpilogueKernel`, full-size workspace).
"""

from __future__ import annotations

from dataclasses import dataclass

from catlass_py.arch.memory import GlobalTensor
from catlass_py.gemm.coord import GemmCoord
from catlass_py.kernel.workspace_epilogue import SLICE_M, GroupedPerTokenDequantKernel


@dataclass(frozen=True)
class GroupedMatmulSliceMPerTokenDequantMoeArguments:
    """Host-side ``Arguments{problemShape, problemCount, ptrGroupList, ptrA, ptrB, ptrScale, ptrPerTokenScale,
    ptrD}``."""

    problem_shape: GemmCoord
    problem_count: int
    ptr_group_list: GlobalTensor
    ptr_a: GlobalTensor
    ptr_b: GlobalTensor
    ptr_scale: GlobalTensor
    ptr_per_token_scale: GlobalTensor
    ptr_d: GlobalTensor


class GroupedMatmulSliceMPerTokenDequant(GroupedPerTokenDequantKernel):
    """CATLASS ``GroupedMatmulSliceMPerTokenDequant<BlockMmad, BlockEpilogue, BlockScheduler,
    ElementGroupList>`` (example 07, "MoE"): groups slice the rows of A [m, k]; B is [G, k, n]; scales
    [G, n] and [m]; D [m, n] (rows past ``groupList[G-1]`` untouched). Full-size int32 workspace (see module
    doc); an async BlockMmad must take one callback (``MmadAtlasA2PreloadAsync``)."""

    Arguments = GroupedMatmulSliceMPerTokenDequantMoeArguments
    group_walk = SLICE_M

    def __init__(self, block_mmad, block_epilogue, block_scheduler, element_group_list="int64"):
        super().__init__(block_mmad, block_epilogue, block_scheduler, element_group_list=element_group_list)

    def get_workspace_size(self, args) -> int:
        """``m * n * sizeof(ElementGroupList)`` bytes (the C++ sizes the int32 C buffer with the group-list
        element: 8 bytes per element for int64 lists, twice what is used)."""
        m, n, _ = args.problem_shape
        return m * n * self.element_group_list.nbytes(1)


__all__ = ["GroupedMatmulSliceMPerTokenDequant", "GroupedMatmulSliceMPerTokenDequantMoeArguments"]
