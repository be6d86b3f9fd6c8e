"""CATLASS ``Gemm::Kernel::MatmulActivation`` (examples 27/28, ``gemm/kernel/matmul_activation.hpp``).

Same block loop and flag handshake as :mod:`catlass_py.kernel.matmul_epilogue` (the C++ files are twins);
the epilogue is the no-source element-wise one (GELU, SiLU, ...) reading fp32 C from the workspace.
"""

from catlass_py.kernel.matmul_epilogue import MatmulActivation, MatmulActivationArguments, MatmulEpilogueParams

__all__ = ["MatmulActivation", "MatmulActivationArguments", "MatmulEpilogueParams"]
