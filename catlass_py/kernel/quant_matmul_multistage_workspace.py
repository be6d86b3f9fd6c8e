"""CATLASS ``Gemm::Kernel::QuantMatmulMultiStageWorkspace`` (example 12's kernel,
``gemm/kernel/quant_matmul_multistage_workspace.hpp``).

The single-problem sibling of example 10's kernel: int8 A @ int8 B -> int32 blocks into a per-AI-core ring
of ``workspace_stages`` slots in a GM workspace; the two vector cores of the same AI core dequantise every
block (per-channel scale x per-token scale) into D. Blocks go round robin over the AI cores
(``loop = core, core + cores, ...``).

Ring handshake per AI core and slot s (flags AicFinishStore[s] = 2s, AivFinishCompute[s] = 2s + 1):

======================  ==========================================  ===================================
who                     when                                        flag operation
======================  ==========================================  ===================================
AIC, block b >= stages  right before b's fixpipe (callback)          wait AivFinishCompute[s]
AIC, every block        right after b's fixpipe (callback)           set AicFinishStore[s] (mode 2)
AIV, every block        before reading slot s                        wait AicFinishStore[s]
AIV, every block        after its D stores                           set AivFinishCompute[s] (mode 2)
AIC, the end            after synchronize_block, oldest slot first   wait the last min(blocks, stages)
======================  ==========================================  ===================================

Both core programs, the ring and its five synchronisation methods (one per row) are the skeleton's,
:class:`~catlass_py.kernel.workspace_epilogue.WorkspaceEpilogueKernel`, shared with example 10's kernel. Any
block epilogue with the skeleton's protocol fits; ``Arguments.epilogue_params`` hands one its own ``Params``
(full-problem pointers and layouts) instead of the per-token-dequant ones built from ``ptr_scale``,
``ptr_per_token_scale`` and ``ptr_d``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catlass_py.arch.memory import GlobalTensor
from catlass_py.errors import ArgumentError
from catlass_py.gemm.coord import GemmCoord
from catlass_py.kernel.workspace_epilogue import ONE_GROUP, WorkspaceEpilogueKernel


@dataclass(frozen=True)
class QuantMatmulArguments:
    """Host-side ``Arguments{problemShape, aicCoreNum, ptrA, ptrB, ptrScale, ptrPerTokenScale, ptrD}``, plus
    ``epilogue_params``: the block epilogue's own ``Params`` (then the three epilogue pointers may be None)."""

    problem_shape: GemmCoord
    aic_core_num: int
    ptr_a: GlobalTensor
    ptr_b: GlobalTensor
    ptr_scale: GlobalTensor | None
    ptr_per_token_scale: GlobalTensor | None
    ptr_d: GlobalTensor | None
    epilogue_params: Any = None


@dataclass(frozen=True)
class QuantMatmulParams:
    """Device-side ``Params`` (``ToUnderlyingArguments``)."""

    problem_shape: GemmCoord
    ptr_a: GlobalTensor
    layout_a: Any
    ptr_b: GlobalTensor
    layout_b: Any
    ptr_scale: GlobalTensor | None
    layout_scale: Any
    ptr_per_token_scale: GlobalTensor | None
    layout_per_token_scale: Any
    ptr_d: GlobalTensor | None
    layout_d: Any
    ptr_workspace: GlobalTensor
    epilogue_params: Any = None


class QuantMatmulMultiStageWorkspace(WorkspaceEpilogueKernel):
    """CATLASS ``QuantMatmulMultiStageWorkspace<BlockMmad, BlockEpilogue, BlockScheduler, WORKSPACE_STAGES>``:
    int8 matmul with per-channel and per-token dequantisation (or any block epilogue with the skeleton's
    protocol) through a per-AI-core ring of int32 workspace slots (see module doc). Assembly checks: the
    skeleton's."""

    Arguments = QuantMatmulArguments
    Params = QuantMatmulParams
    group_walk = ONE_GROUP

    def __init__(self, block_mmad, block_epilogue, block_scheduler, workspace_stages: int = 2):
        super().__init__(block_mmad, block_epilogue, block_scheduler, workspace_stages=workspace_stages)

    def to_underlying_arguments(self, args: QuantMatmulArguments, workspace: GlobalTensor) -> QuantMatmulParams:
        """CATLASS ``ToUnderlyingArguments``: the full-problem layouts."""
        m, n, k = args.problem_shape
        if args.epilogue_params is None:
            missing = [name for name in ("ptr_scale", "ptr_per_token_scale", "ptr_d") if getattr(args, name) is None]
            if missing:
                raise ArgumentError(f"{type(self).__name__}.Arguments: {', '.join(missing)} None and no "
                                    "epilogue_params: the per-token dequant epilogue's operands are needed, or an "
                                    "epilogue of your own takes its Params as epilogue_params=")
        layout_a, layout_b, layout_scale, layout_per_token_scale, layout_d = self.underlying_layouts(m, n, k)
        return QuantMatmulParams(GemmCoord(m, n, k), args.ptr_a, layout_a, args.ptr_b, layout_b, args.ptr_scale,
                                 layout_scale, args.ptr_per_token_scale, layout_per_token_scale, args.ptr_d, layout_d,
                                 workspace, args.epilogue_params)

    def epilogue_params(self, params: QuantMatmulParams, group):
        """``Arguments.epilogue_params`` when given, else the per-token-dequant operands."""
        if params.epilogue_params is not None:
            return params.epilogue_params
        return super().epilogue_params(params, group)


__all__ = ["QuantMatmulArguments", "QuantMatmulMultiStageWorkspace", "QuantMatmulParams"]
