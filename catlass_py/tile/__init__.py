"""Tile layer: one hardware instruction (or a short burst) on one tile, and the copy bundles."""

from typing import TYPE_CHECKING

from catlass_py.lazy import lazy_exports

if TYPE_CHECKING:
    from catlass_py.tile.copy_bias import CopyGmToL1Bias, CopyL1ToBT
    from catlass_py.tile.copy_gm_to_l1 import CopyGmToL1, CopyGmToL1GMMPTD
    from catlass_py.tile.copy_gm_ub import CopyGm2Ub, CopyUb2Gm
    from catlass_py.tile.copy_l0c_to_gm import CopyL0CToGm
    from catlass_py.tile.copy_l1_to_l0 import CopyL1ToL0A, CopyL1ToL0B
    from catlass_py.tile.copy_tla import (
        CopyGmToL1Tla,
        CopyL0CToGmTla,
        CopyL1ToL0ATla,
        CopyL1ToL0BTla,
        PackedTileCopyTla,
        TileMmadTla,
    )
    from catlass_py.tile.mmad import TileMmad
    from catlass_py.tile.quant import QuantMode, ScaleGranularity
    from catlass_py.tile.tile_copy import EpilogueTileCopy, ReluTileCopy, TileCopy
    from catlass_py.tile.vector import (
        TileBroadcastOneBlk,
        TileCast,
        TileOneBlkColumnBroadcastMul,
        TileRowBroadcastMul,
        duplicate,
        vector_cast,
    )
    from catlass_py.tile.atomic import AtomicCopyL0CToGm, set_atomic_add, set_atomic_none
    from catlass_py.tile.vector_elementwise import (
        TileElemWiseAdd,
        TileElemWiseGelu,
        TileElemWiseMul,
        TileElemWiseSilu,
    )

if not TYPE_CHECKING:  # each name imports its module on first use
    __getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
