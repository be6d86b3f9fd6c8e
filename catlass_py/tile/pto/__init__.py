"""PTO-ISA tile instructions and the Ascend 950 cube extensions on the simulated core.

Counterparts: PTO (``hw-native-sys/pto-isa``) ``Tile``/``TASSIGN``, ``TLOAD``/``TSTORE``, ``TMOV`` (all overload
families incl. X->ZZ and the Ascend 950 UB -> L1 move), ``TEXTRACT[_FP]`` / ``TINSERT[_FP]`` (every form),
``TQUANT`` (MX ND / DN with OCP and NV scales, INT8), ``TDEQUANT``, ``TFILLPAD[_INPLACE|_EXPAND]``,
``TGET_SCALE_ADDR``, ``SET_QUANT_SCALAR``/``SET_QUANT_VECTOR``, ``TPUSH``/``TPOP``, ``TMATMUL[_ACC|_BIAS|_MX]``,
and Ascend C ``Mmad``/``MmadMx`` with ``MmadBitModeParams``. Every instruction publishes its pipe and the bytes it
reads and writes (tile regions, GM, special registers) for the pipe model. PTO layout names map to CATLASS layouts
(PTO/CANN "NZ" is CATLASS ``zN``, "ZN" is ``nZ``; see :mod:`catlass_py.tile.pto.tile`).
"""

from catlass_py.tile.pto.fixpipe import DEFAULT_OPTIONS, FixpipeOptions, LayoutMode, ReluPreMode, fixpipe_apply, pre_quant_mode
from catlass_py.tile.pto.load_store import MX_FORMATS, MxGmStack, mx_gm_layout, mx_gm_tensor, tload, tstore
from catlass_py.tile.pto.matmul import tmatmul, tmatmul_acc, tmatmul_bias, tmatmul_mx, tmatmul_mx_acc
from catlass_py.tile.pto.mmad_bitmode import MmadBitModeParams, mmad, mmad_mx
from catlass_py.tile.pto.mx_mmad import scale_a_layout, scale_b_layout
from catlass_py.tile.pto.quant_reg import (
    get_quant_scalar,
    quant_scalar_word,
    saturating,
    set_ctrl,
    set_quant_pre,
    set_quant_scalar,
    set_quant_vector,
)
from catlass_py.tile.pto.tile import (
    FRACTAL_AB,
    FRACTAL_C,
    FRACTAL_MX,
    BLayout,
    CompactMode,
    PadCustom,
    PadValue,
    SLayout,
    Tile,
    TileType,
    pad_custom,
    pto_layout,
    tile_acc,
    tile_left,
    tile_left_scale,
    tile_right,
    tile_right_scale,
)
from catlass_py.tile.pto.tmov import AccToVecMode, STPhase, tmov, tmov_zz, tmov_zz_tmp_bytes
from catlass_py.tile.pto.textract import textract, textract_2xnz, tinsert
from catlass_py.tile.pto.tfillpad import TFillPadMode, tfillpad, tget_scale_addr
from catlass_py.tile.pto.tquant import MxQuantAlg, QuantType, tdequant, tquant, tquant_int8
from catlass_py.tile.pto.tpushpop import FixpipeParams, TPipe, tpop, tpush

__all__ = [
    "DEFAULT_OPTIONS",
    "FRACTAL_AB",
    "FRACTAL_C",
    "FRACTAL_MX",
    "MX_FORMATS",
    "AccToVecMode",
    "BLayout",
    "CompactMode",
    "FixpipeOptions",
    "FixpipeParams",
    "LayoutMode",
    "MmadBitModeParams",
    "MxGmStack",
    "MxQuantAlg",
    "PadCustom",
    "PadValue",
    "QuantType",
    "ReluPreMode",
    "SLayout",
    "STPhase",
    "TFillPadMode",
    "TPipe",
    "Tile",
    "TileType",
    "fixpipe_apply",
    "get_quant_scalar",
    "mmad",
    "mmad_mx",
    "mx_gm_layout",
    "mx_gm_tensor",
    "pad_custom",
    "pre_quant_mode",
    "pto_layout",
    "quant_scalar_word",
    "saturating",
    "scale_a_layout",
    "scale_b_layout",
    "set_ctrl",
    "set_quant_pre",
    "set_quant_scalar",
    "set_quant_vector",
    "tile_acc",
    "tile_left",
    "tile_left_scale",
    "tile_right",
    "tdequant",
    "textract",
    "textract_2xnz",
    "tfillpad",
    "tget_scale_addr",
    "tile_right_scale",
    "tload",
    "tmatmul",
    "tmatmul_acc",
    "tmatmul_bias",
    "tmatmul_mx",
    "tmatmul_mx_acc",
    "tmov",
    "tmov_zz",
    "tinsert",
    "tmov_zz_tmp_bytes",
    "tpop",
    "tpush",
    "tquant",
    "tquant_int8",
    "tstore",
]
