"""Tile layer: one hardware instruction (or a short burst) on one tile, and the copy bundles."""

from typing import TYPE_CHECKING

from catlass_py.lazy import lazy_exports

if TYPE_CHECKING:
    from catlass_py.tile.copy_bias import CopyGmToL1Bias as CopyGmToL1Bias, CopyL1ToBT as CopyL1ToBT
    from catlass_py.tile.copy_gm_to_l1 import CopyGmToL1 as CopyGmToL1, CopyGmToL1GMMPTD as CopyGmToL1GMMPTD
    from catlass_py.tile.copy_gm_ub import CopyGm2Ub as CopyGm2Ub, CopyUb2Gm as CopyUb2Gm
    from catlass_py.tile.copy_l0c_to_gm import CopyL0CToGm as CopyL0CToGm
    from catlass_py.tile.copy_l1_to_l0 import CopyL1ToL0A as CopyL1ToL0A, CopyL1ToL0B as CopyL1ToL0B
    from catlass_py.tile.copy_tla import (
        CopyGmToL1Tla as CopyGmToL1Tla,
        CopyL0CToGmTla as CopyL0CToGmTla,
        CopyL1ToL0ATla as CopyL1ToL0ATla,
        CopyL1ToL0BTla as CopyL1ToL0BTla,
        PackedTileCopyTla as PackedTileCopyTla,
        TileMmadTla as TileMmadTla,
    )
    from catlass_py.tile.mmad import TileMmad as TileMmad
    from catlass_py.tile.quant import QuantMode as QuantMode, ScaleGranularity as ScaleGranularity
    from catlass_py.tile.tile_copy import (
        EpilogueTileCopy as EpilogueTileCopy,
        ReluTileCopy as ReluTileCopy,
        TileCopy as TileCopy,
    )
    from catlass_py.tile.vector import (
        TileBroadcastOneBlk as TileBroadcastOneBlk,
        TileCast as TileCast,
        TileOneBlkColumnBroadcastMul as TileOneBlkColumnBroadcastMul,
        TileRowBroadcastMul as TileRowBroadcastMul,
        duplicate as duplicate,
        vector_cast as vector_cast,
    )
    from catlass_py.tile.atomic import (
        AtomicCopyL0CToGm as AtomicCopyL0CToGm,
        set_atomic_add as set_atomic_add,
        set_atomic_none as set_atomic_none,
    )
    from catlass_py.tile.vector_elementwise import (
        TileElemWise as TileElemWise,
        TileElemWiseAdd as TileElemWiseAdd,
        TileElemWiseGelu as TileElemWiseGelu,
        TileElemWiseMul as TileElemWiseMul,
        TileElemWiseSilu as TileElemWiseSilu,
    )

if not TYPE_CHECKING:  # each name imports its module on first use
    __getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
