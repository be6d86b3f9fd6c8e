"""Kernel layer: whole-device algorithms (one module per CATLASS kernel) and the DeviceGemm adapter."""

from catlass_py.kernel.device_gemm import DeviceGemm
from catlass_py.kernel.grouped_matmul_slice_m_per_token_dequant_multistage_workspace import (
    GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace,
)

__all__ = ["DeviceGemm", "GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace"]
