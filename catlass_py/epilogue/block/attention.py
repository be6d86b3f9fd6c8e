"""The attention BlockEpilogues (CATLASS examples 19 and 23), registered with
:func:`~catlass_py.epilogue.block.BlockEpilogue` under their policies
(:mod:`catlass_py.epilogue.dispatch_policy_attention`)."""

from __future__ import annotations

from catlass_py.epilogue.block.block_epilogue import register_block_epilogue
from catlass_py.epilogue.block.mla_fd_rescale_o import BlockEpilogueMLAFDRescaleO
from catlass_py.epilogue.block.mla_rescale_o import BlockEpilogueMLARescaleO
from catlass_py.epilogue.block.mla_softmax import BlockEpilogueMLASoftmax
from catlass_py.epilogue.block.online_softmax_no_mask import BlockEpilogueOnlineSoftmax
from catlass_py.epilogue.block.rescale_o_no_split_row import BlockEpilogueRescaleO
from catlass_py.epilogue.dispatch_policy_attention import (
    EpilogueAtlasA2MLAFDRescaleO,
    EpilogueAtlasA2MLARescaleO,
    EpilogueAtlasA2MLASoftmax,
    EpilogueAtlasA2OnlineSoftmax,
    EpilogueAtlasA2RescaleO,
)

register_block_epilogue(EpilogueAtlasA2OnlineSoftmax, BlockEpilogueOnlineSoftmax)
register_block_epilogue(EpilogueAtlasA2RescaleO, BlockEpilogueRescaleO)
register_block_epilogue(EpilogueAtlasA2MLASoftmax, BlockEpilogueMLASoftmax)
register_block_epilogue(EpilogueAtlasA2MLARescaleO, BlockEpilogueMLARescaleO)
register_block_epilogue(EpilogueAtlasA2MLAFDRescaleO, BlockEpilogueMLAFDRescaleO)

__all__ = ["BlockEpilogueMLAFDRescaleO", "BlockEpilogueMLARescaleO", "BlockEpilogueMLASoftmax",
           "BlockEpilogueOnlineSoftmax", "BlockEpilogueRescaleO"]
