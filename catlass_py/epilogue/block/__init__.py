"""BlockEpilogue implementations."""

from catlass_py.epilogue.block.block_epilogue import BlockEpilogue, register_block_epilogue
from catlass_py.epilogue.block.elemwise import (
    BlockEpilogueElemWiseNoSource,
    BlockEpilogueElemWiseOneSource,
    ElemWiseNoSourceParams,
    ElemWiseOneSourceParams,
)
from catlass_py.epilogue.block.per_token_dequant import BlockEpiloguePerTokenDequant, PerTokenDequantParams
from catlass_py.epilogue.block.per_token_dequant_tla import BlockEpiloguePerTokenDequantTla, PerTokenDequantTlaParams

from catlass_py.epilogue.dispatch_policy import EpilogueAtlasA2ElemWiseNoSource, EpilogueAtlasA2ElemWiseOneSource

register_block_epilogue(EpilogueAtlasA2ElemWiseOneSource, BlockEpilogueElemWiseOneSource)
register_block_epilogue(EpilogueAtlasA2ElemWiseNoSource, BlockEpilogueElemWiseNoSource)

from catlass_py.epilogue.block import attention  # noqa: E402,F401  (registers the attention epilogues)

__all__ = [
    "BlockEpilogue",
    "BlockEpilogueElemWiseNoSource",
    "BlockEpilogueElemWiseOneSource",
    "BlockEpiloguePerTokenDequant",
    "BlockEpiloguePerTokenDequantTla",
    "ElemWiseNoSourceParams",
    "ElemWiseOneSourceParams",
    "PerTokenDequantParams",
    "PerTokenDequantTlaParams",
    "register_block_epilogue",
]
