"""Tile layer: one hardware instruction (or a short burst) on one tile, and the copy bundles."""

from catlass_py.tile.copy_gm_to_l1 import CopyGmToL1, CopyGmToL1GMMPTD
from catlass_py.tile.copy_gm_ub import CopyGm2Ub, CopyUb2Gm
from catlass_py.tile.copy_l0c_to_gm import CopyL0CToGm
from catlass_py.tile.copy_l1_to_l0 import CopyL1ToL0A, CopyL1ToL0B
from catlass_py.tile.mmad import TileMmad
from catlass_py.tile.quant import QuantMode, ScaleGranularity
from catlass_py.tile.tile_copy import EpilogueTileCopy, TileCopy
from catlass_py.tile.vector import (
    TileBroadcastOneBlk,
    TileCast,
    TileOneBlkColumnBroadcastMul,
    TileRowBroadcastMul,
    duplicate,
    vector_cast,
)

__all__ = [
    "CopyGm2Ub",
    "CopyGmToL1",
    "CopyGmToL1GMMPTD",
    "CopyL0CToGm",
    "CopyL1ToL0A",
    "CopyL1ToL0B",
    "CopyUb2Gm",
    "EpilogueTileCopy",
    "QuantMode",
    "ScaleGranularity",
    "TileBroadcastOneBlk",
    "TileCast",
    "TileCopy",
    "TileMmad",
    "TileOneBlkColumnBroadcastMul",
    "TileRowBroadcastMul",
    "duplicate",
    "vector_cast",
]
