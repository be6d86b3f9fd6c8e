"""TileCopy / EpilogueTileCopy bundles and import hygiene of the tile layer."""

import subprocess
import sys

import pytest

from catlass_py.arch import ATLAS_A2 as A2
from catlass_py.errors import ConfigError
from catlass_py.gemm import GemmType
from catlass_py.layout import ColumnMajor, RowMajor, VectorLayout, nZ, zN
from catlass_py.tile import (
    CopyGm2Ub,
    CopyGmToL1,
    CopyGmToL1GMMPTD,
    CopyL0CToGm,
    CopyL1ToL0A,
    CopyL1ToL0B,
    CopyUb2Gm,
    EpilogueTileCopy,
    QuantMode,
    TileCopy,
)


def test_tile_copy_defaults_follow_the_operand_types():
    a, b, c = GemmType("int8", RowMajor), GemmType("int8", ColumnMajor), GemmType("int32", RowMajor)
    tc = TileCopy(A2, a, b, c)
    assert type(tc.copy_gm_to_l1_a) is CopyGmToL1 and tc.copy_gm_to_l1_a.gm_type == a
    assert tc.copy_gm_to_l1_a.layout_dst is zN
    assert type(tc.copy_gm_to_l1_b) is CopyGmToL1 and tc.copy_gm_to_l1_b.layout_dst is nZ
    assert type(tc.copy_l1_to_l0a) is CopyL1ToL0A and tc.copy_l1_to_l0a.layout_src is zN
    assert type(tc.copy_l1_to_l0b) is CopyL1ToL0B and tc.copy_l1_to_l0b.layout_src is nZ
    assert type(tc.copy_l0c_to_gm) is CopyL0CToGm and tc.copy_l0c_to_gm.quant_mode is QuantMode.NoQuant
    assert tc.element_accumulator.name == "int32"
    assert tc.element_a.name == "int8" and tc.element_b.name == "int8"
    assert tc.copy_gm_to_l1_bias is None and tc.copy_l1_to_bt is None
    f = TileCopy(A2, GemmType("float16", RowMajor), GemmType("float16", RowMajor), GemmType("float16", RowMajor))
    assert f.element_accumulator.name == "float32"
    assert f.copy_l0c_to_gm.quant_mode is QuantMode.F322F16


def test_tile_copy_replace_swaps_one_member_only():
    a, c = GemmType("int8", RowMajor), GemmType("int32", RowMajor)
    base = TileCopy(A2, a, a, c)
    ptd = CopyGmToL1GMMPTD(A2, a)
    custom = base.replace(copy_gm_to_l1_a=ptd)
    assert custom.copy_gm_to_l1_a is ptd
    assert type(base.copy_gm_to_l1_a) is CopyGmToL1  # the original is untouched (frozen value)
    for name in ("copy_gm_to_l1_b", "copy_l1_to_l0a", "copy_l1_to_l0b", "copy_l0c_to_gm"):
        assert getattr(custom, name) is getattr(base, name)
    with pytest.raises(ConfigError, match="copy_gm_to_l1_c"):
        base.replace(copy_gm_to_l1_c=ptd)


def test_tile_copy_rejects_impossible_accumulator():
    with pytest.raises(ConfigError):
        TileCopy(A2, GemmType("int8", RowMajor), GemmType("float16", RowMajor), GemmType("int32", RowMajor))


def test_epilogue_tile_copy_defaults_and_replace():
    c = GemmType("int32", RowMajor)
    x = GemmType("bfloat16", VectorLayout)
    y = GemmType("bfloat16", VectorLayout)
    d = GemmType("bfloat16", RowMajor)
    e = EpilogueTileCopy(A2, c, x, y, d)
    assert type(e.copy_gm_to_ub_c) is CopyGm2Ub and e.copy_gm_to_ub_c.gm_type == c
    assert type(e.copy_gm_to_ub_x) is CopyGm2Ub and e.copy_gm_to_ub_x.gm_type == x
    assert type(e.copy_gm_to_ub_y) is CopyGm2Ub and e.copy_gm_to_ub_y.gm_type == y
    assert type(e.copy_ub_to_gm_d) is CopyUb2Gm and e.copy_ub_to_gm_d.gm_type == d
    only_cd = EpilogueTileCopy(A2, c, d_type=d)
    assert only_cd.copy_gm_to_ub_x is None and only_cd.copy_gm_to_ub_y is None
    other = CopyUb2Gm(A2, d)
    r = e.replace(copy_ub_to_gm_d=other)
    assert r.copy_ub_to_gm_d is other and r.copy_gm_to_ub_c is e.copy_gm_to_ub_c
    with pytest.raises(ConfigError):
        e.replace(copy_gm_to_ub_z=other)
    with pytest.raises(ConfigError):
        EpilogueTileCopy(A2, c, x, y)  # d_type is required


@pytest.mark.parametrize("module", ["catlass_py.tile", "catlass_py.gemm", "catlass_py.epilogue",
                                    "catlass_py.tile.mmad", "catlass_py.gemm.block"])
def test_each_layer_imports_first_in_a_fresh_interpreter(module):
    proc = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
