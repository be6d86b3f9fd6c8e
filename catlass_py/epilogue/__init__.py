"""Epilogue side of CATLASS: dispatch policies, tile swizzles, BlockEpilogue implementations."""

from catlass_py.epilogue.block import BlockEpilogue, BlockEpiloguePerTokenDequant, PerTokenDequantParams
from catlass_py.epilogue.dispatch_policy import EpilogueAtlasA2PerTokenDequant
from catlass_py.epilogue.tile_swizzle import EpilogueHorizontalTileSwizzle, EpilogueIdentityTileSwizzle

__all__ = [
    "BlockEpilogue",
    "BlockEpiloguePerTokenDequant",
    "EpilogueAtlasA2PerTokenDequant",
    "EpilogueHorizontalTileSwizzle",
    "EpilogueIdentityTileSwizzle",
    "PerTokenDequantParams",
]
