"""CATLASS ``Gemm::Kernel::GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace`` (example 10's kernel;
``gemm/kernel/grouped_matmul_slice_m_per_token_dequant_multistage_workspace.hpp``).

A mix kernel. The cube core of every AI core computes int32 blocks of C = A_g @ B_g into its own ring of
``workspace_stages`` slots in a GM workspace; the two vector cores of the same AI core dequantise each block
into D. All blocks of all groups form one global sequence dealt round-robin over the AI cores.

Ring handshake per AI core and workspace slot s (flags AicFinishStore[s] = 2s, AivFinishCompute[s] = 2s+1):

======================  ==========================================  ===================================
who                     when                                        flag operation
======================  ==========================================  ===================================
AIC, block b >= stages  right before b's fixpipe (inside BlockMmad)  wait AivFinishCompute[s]
AIC, every block        right after b's fixpipe                      set AicFinishStore[s] (mode 2)
AIV, every block        before reading slot s                        wait AicFinishStore[s]
AIV, every block        after its D stores                           set AivFinishCompute[s] (mode 2)
AIC, the end            after synchronize_block, oldest slot first   wait AivFinishCompute of the last
                                                                     min(blocks, stages) blocks
======================  ==========================================  ===================================

Each row is one method (``aic_wait_slot_free``, ``aic_set_slot_stored``, ``aiv_wait_slot_stored``,
``aiv_set_slot_free``, ``aic_drain_slot``) of the skeleton both core programs come from
(:class:`~catlass_py.kernel.workspace_epilogue.WorkspaceEpilogueKernel`, shared with example 12's kernel), so
that a subclass can drop exactly one synchronisation point without copying the loops.
"""

from __future__ import annotations

from dataclasses import dataclass

from catlass_py.arch.memory import GlobalTensor
from catlass_py.gemm.coord import GemmCoord
from catlass_py.kernel.workspace_epilogue import SLICE_M, GroupedPerTokenDequantKernel


@dataclass(frozen=True)
class GroupedMatmulSliceMPerTokenDequantArguments:
    """Host-side ``Arguments``: problem (m, n, k) over all groups, group count, AI cores, GM tensors."""

    problem_shape: GemmCoord
    problem_count: int
    aic_core_num: int
    ptr_group_list: GlobalTensor
    ptr_a: GlobalTensor
    ptr_b: GlobalTensor
    ptr_scale: GlobalTensor
    ptr_per_token_scale: GlobalTensor
    ptr_d: GlobalTensor


class GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace(GroupedPerTokenDequantKernel):
    """CATLASS ``GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace<BlockMmad, BlockEpilogue,
    BlockScheduler, WORKSPACE_STAGES, ElementGroupList>``: int8 grouped matmul split along M with per-channel
    and per-token dequantisation, through a per-AI-core ring of int32 workspace slots (see module doc)."""

    Arguments = GroupedMatmulSliceMPerTokenDequantArguments
    group_walk = SLICE_M

    def __init__(self, block_mmad, block_epilogue, block_scheduler, workspace_stages: int = 2,
                 element_group_list="int64"):
        super().__init__(block_mmad, block_epilogue, block_scheduler, workspace_stages=workspace_stages,
                         element_group_list=element_group_list)


__all__ = ["GroupedMatmulSliceMPerTokenDequantArguments", "GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace"]
