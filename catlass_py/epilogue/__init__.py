"""Epilogue side of CATLASS: dispatch policies, tile swizzles, BlockEpilogue implementations."""

from catlass_py.epilogue.block import (
    BlockEpilogue,
    BlockEpilogueElemWiseNoSource,
    BlockEpilogueElemWiseOneSource,
    BlockEpiloguePerTokenDequant,
    BlockEpiloguePerTokenDequantTla,
    ElemWiseNoSourceParams,
    ElemWiseOneSourceParams,
    PerTokenDequantParams,
    PerTokenDequantTlaParams,
)
from catlass_py.epilogue.dispatch_policy import (
    EpilogueAtlasA2ElemWiseNoSource,
    EpilogueAtlasA2ElemWiseOneSource,
    EpilogueAtlasA2PerTokenDequant,
    EpilogueAtlasA2PerTokenDequantTla,
)
from catlass_py.epilogue.tile_swizzle import EpilogueHorizontalTileSwizzle, EpilogueIdentityTileSwizzle

__all__ = [
    "BlockEpilogue",
    "BlockEpilogueElemWiseNoSource",
    "BlockEpilogueElemWiseOneSource",
    "BlockEpiloguePerTokenDequant",
    "BlockEpiloguePerTokenDequantTla",
    "ElemWiseNoSourceParams",
    "ElemWiseOneSourceParams",
    "EpilogueAtlasA2ElemWiseNoSource",
    "EpilogueAtlasA2ElemWiseOneSource",
    "EpilogueAtlasA2PerTokenDequant",
    "EpilogueAtlasA2PerTokenDequantTla",
    "EpilogueHorizontalTileSwizzle",
    "EpilogueIdentityTileSwizzle",
    "PerTokenDequantParams",
    "PerTokenDequantTlaParams",
]
