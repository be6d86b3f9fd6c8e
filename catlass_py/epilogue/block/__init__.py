"""BlockEpilogue implementations."""

from catlass_py.epilogue.block.block_epilogue import BlockEpilogue
from catlass_py.epilogue.block.per_token_dequant import BlockEpiloguePerTokenDequant, PerTokenDequantParams

__all__ = ["BlockEpilogue", "BlockEpiloguePerTokenDequant", "PerTokenDequantParams"]
