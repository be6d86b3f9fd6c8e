"""Kernel layer: whole-device algorithms (one module per CATLASS kernel), the DeviceGemm adapter, and what kernels
are built from: :class:`GemmKernel` (assembly checks, block geometry, BlockMmad calls with callbacks), the
grouped kernels' group-list reads and block dealing (:mod:`catlass_py.kernel.grouped`), and the skeleton of the
workspace + epilogue mix kernels (:class:`WorkspaceEpilogueKernel`)."""

from typing import TYPE_CHECKING

from catlass_py.lazy import lazy_exports

if TYPE_CHECKING:
    from catlass_py.kernel.basic_matmul import BasicMatmul as BasicMatmul
    from catlass_py.kernel.basic_matmul_preload import BasicMatmulPreload as BasicMatmulPreload
    from catlass_py.kernel.basic_matmul_tla import BasicMatmulTla as BasicMatmulTla
    from catlass_py.kernel.batched_matmul import BatchedMatmul as BatchedMatmul
    from catlass_py.kernel.device_gemm import DeviceGemm as DeviceGemm
    from catlass_py.kernel.fa_infer import FAInferKernel as FAInferKernel
    from catlass_py.kernel.gemm_kernel import GemmKernel as GemmKernel
    from catlass_py.kernel.grouped_matmul import GroupedMatmul as GroupedMatmul
    from catlass_py.kernel.grouped_matmul_slice_k import GroupedMatmulSliceK as GroupedMatmulSliceK, MemFill as MemFill
    from catlass_py.kernel.grouped_matmul_slice_k_per_token_dequant import (
        GroupedMatmulSliceKPerTokenDequant as GroupedMatmulSliceKPerTokenDequant,
    )
    from catlass_py.kernel.grouped_matmul_slice_m import GroupedMatmulSliceM as GroupedMatmulSliceM
    from catlass_py.kernel.grouped_matmul_slice_m_per_token_dequant import (
        GroupedMatmulSliceMPerTokenDequant as GroupedMatmulSliceMPerTokenDequant,
    )
    from catlass_py.kernel.grouped_matmul_slice_m_per_token_dequant_multistage_workspace import (
        GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace as GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace,
    )
    from catlass_py.kernel.matmul_bias import MatmulBias as MatmulBias
    from catlass_py.kernel.matmul_epilogue import (
        MatmulActivation as MatmulActivation,
        MatmulEpilogue as MatmulEpilogue,
    )
    from catlass_py.kernel.mla import MLAKernel as MLAKernel
    from catlass_py.kernel.optimized_matmul import OptimizedMatmul as OptimizedMatmul
    from catlass_py.kernel.optimized_matmul_tla import (
        OptimizedMatmulTla as OptimizedMatmulTla,
        PaddingMatrixBlockNDTla as PaddingMatrixBlockNDTla,
    )
    from catlass_py.kernel.padding import PaddingBuilder as PaddingBuilder
    from catlass_py.kernel.padding_block_nd import PaddingMatrixBlockND as PaddingMatrixBlockND
    from catlass_py.kernel.padding_nz import (
        PaddingMatrixNZ as PaddingMatrixNZ,
        RemovePaddingNDAndCast as RemovePaddingNDAndCast,
    )
    from catlass_py.kernel.padding_tag import PaddingTag as PaddingTag
    from catlass_py.kernel.quant_matmul_full_load_a_tla import QuantMatmulFullLoadATla as QuantMatmulFullLoadATla
    from catlass_py.kernel.sparse_matmul_tla import KernelSparseMatmul as KernelSparseMatmul
    from catlass_py.kernel.quant_matmul_multistage_workspace import (
        QuantMatmulMultiStageWorkspace as QuantMatmulMultiStageWorkspace,
    )
    from catlass_py.kernel.quant_multi_core_splitk_matmul_tla import (
        QuantMultiCoreSplitkMatmulTla as QuantMultiCoreSplitkMatmulTla,
    )
    from catlass_py.kernel.quant_optimized_matmul_tla import QuantOptimizedMatmulTla as QuantOptimizedMatmulTla
    from catlass_py.kernel.single_core_slicek_matmul import SingleCoreSplitkMatmul as SingleCoreSplitkMatmul
    from catlass_py.kernel.splitk_matmul import SplitkMatmul as SplitkMatmul, SplitkReduceAdd as SplitkReduceAdd
    from catlass_py.kernel.streamk_matmul import StreamkMatmul as StreamkMatmul, StreamkReduceAdd as StreamkReduceAdd
    from catlass_py.kernel.strided_batched_matmul_tla import StridedBatchedMatmulTla as StridedBatchedMatmulTla
    from catlass_py.kernel.transpose_quant_batch_matmul import (
        TransposeQuantBatchMatmulKernel as TransposeQuantBatchMatmulKernel,
    )
    from catlass_py.kernel.workspace_epilogue import WorkspaceEpilogueKernel as WorkspaceEpilogueKernel

if not TYPE_CHECKING:  # each name imports its module on first use
    __getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
