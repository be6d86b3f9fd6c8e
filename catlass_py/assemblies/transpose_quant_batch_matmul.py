"""The pypto-gym MXFP8 batch matmul (seed 004) on Ascend 950: ``TransposeQuantBatchMatmulKernel`` with the seed's tile
shapes. Used by ``examples/transpose_quant_batch_matmul.py`` and :mod:`catlass_py.ops.transpose_quant_batch_matmul`.
"""

from __future__ import annotations

from typing import Annotated

from catlass_py.arch import ASCEND_950
from catlass_py.assemblies.settings import Element, Flag, TileShape, mapping
from catlass_py.kernel.transpose_quant_batch_matmul import PERM_DN, PERM_ND, TransposeQuantBatchMatmulKernel


Perm = Annotated[tuple, mapping({"012": PERM_ND, "021": PERM_DN})]
"""x2's permutation: ``012`` ([B, K, N]) or ``021`` ([B, N, K])."""


def assemble(*, in_dtype: Element = "float8_e4m3fn", out_dtype: Element = "bfloat16", perm_x2: Perm = PERM_ND,
             tile_shape: TileShape = (256, 256, 128), arch=ASCEND_950,
             saturation: Flag = True) -> TransposeQuantBatchMatmulKernel:
    """The kernel: 256 x 256 output blocks, K steps of 128 (the seed's m/n/k tile shapes: ``tile_shape`` = M x N x
    K), one MX matmul per step; ``saturation`` is the fixpipe's CTRL[48] mode."""
    return TransposeQuantBatchMatmulKernel(in_dtype, out_dtype, perm_x2, tile_shape, arch, saturation=saturation)


__all__ = ["assemble"]
