"""The calibration's inputs: the published timings copied into the package (each with its CATLASS source), the
device variants selectable by name, and a source for every cost parameter."""

from __future__ import annotations

import re

import pytest

from catlass_py.arch import (
    ARCH_NAMES,
    ASCEND_910B1,
    ASCEND_910B2,
    ASCEND_910B3,
    ATLAS_A2,
    arch_by_name,
    get_arch,
)
from catlass_py.arch.spec import CostParams
from catlass_py.calibration import FITTED, load_points, select
from catlass_py.calibration.points import ROLES
from catlass_py.errors import ArgumentError

# Timings as printed in the CATLASS repository (hicann/catlass at 0dfcf9d), typed in from the documents, not
# read from the package's data file: tools/tuner/README.md:29-57 (T01, T02), docs/zh/1_Practice/
# 11_matmul_optimization.md:113-150 (T03-T12), examples/34_single_core_splitk_matmul/34_single_splitk_matmul.md
# :247-257 (T13-T16), examples/52_quant_multi_core_splitk_matmul_tla/52_quant_multi_core_splitk_matmul_tla.md
# :37-48 (T17-T28, X01, X02), examples/44_quant_matmul_full_loadA_tla/44_quant_matmul_full_loadA_tla.md:47-59
# (T29, T30, X03-X05; example 44's own column Y01-Y05).
PUBLISHED_US = {
    "T01": 19.38, "T02": 12.74, "T03": 72.5, "T04": 48.6, "T05": 181.4, "T06": 139.6, "T07": 238.8, "T08": 252.4,
    "T09": 36.3, "T10": 15.5, "T11": 40.6, "T12": 35.3, "T13": 261, "T14": 445, "T15": 917, "T16": 1231,
    "T17": 18.64, "T18": 23.23, "T19": 32.97, "T20": 78.52, "T21": 75.39, "T22": 18.11, "T23": 20.67,
    "T24": 21.15, "T25": 20.01, "T26": 23.83, "T27": 34.29, "T28": 51.41, "T29": 33.26, "T30": 38.68,
    "X01": 47.73, "X02": 77.35, "X03": 42.66, "X04": 52.36, "X05": 53.77,
    "Y01": 31.73, "Y02": 37.05, "Y03": 41.96, "Y04": 44.05, "Y05": 52.75,
}


def test_every_point_has_its_published_time_and_a_catlass_source():
    points = {p.id: p for p in load_points()}
    assert {f"T{i:02d}" for i in range(1, 45)} <= set(points)
    for pid, us in PUBLISHED_US.items():
        assert points[pid].published_us == pytest.approx(us, abs=1e-9), pid
    for p in points.values():
        path, lines = p.source.rsplit(":", 1)
        assert re.fullmatch(r"\d+-\d+", lines), p.id
        assert path.endswith(".md") and not path.startswith(("/", "..")), p.id
        assert "shared" not in p.source
        assert p.role in ROLES and p.setup


def test_the_points_simulate_on_the_device_the_source_names():
    points = {p.id: p for p in load_points()}
    assert {points[i].arch for i in ("T13", "T14", "T15", "T16")} == {"Ascend910B2"}  # 910B2, CANN 8.2.RC1
    assert {points[i].arch for i in ("T17", "T18", "T19", "T20", "T21", "X01", "X02")} == {"Ascend910B3"}
    assert {points[i].arch for i in ("T29", "T30", "X03", "X04", "X05")} == {"Ascend910B1"}
    assert points["T17"].cores == 20 and points["T01"].cores == 24  # the tables' and the tuner log's core counts
    assert points["T01"].l1_tile == (32, 128, 128) and points["T01"].swizzle == (3, 0)
    assert points["T02"].l1_tile == (64, 128, 128) and points["T02"].l0_tile == (64, 128, 64)
    assert points["T02"].swizzle == (3, 1)


def test_every_example_catlass_py_builds_has_its_points_modelled_and_the_others_not():
    built = {"00_basic_matmul", "06_optimized_matmul", "12_quant_matmul", "21_basic_matmul_preload_zN",
             "34_single_core_splitk_matmul", "44_quant_matmul_full_loadA_tla", "52_quant_multi_core_splitk_matmul_tla"}
    for p in load_points():
        assert p.modelled == (p.example in built), p.id
    held_out = [p for p in select(load_points()) if p.role == "held-out"]
    fitted = [p for p in select(load_points()) if p.role == "fit"]
    assert len(held_out) >= len(fitted) >= len(FITTED) + 3  # more points than fitted parameters, half held out


def test_device_variants_are_selectable_by_name():
    assert (ASCEND_910B1.core_num, ASCEND_910B1.cost.clock_ghz) == (24, 1.85)  # Ascend910B1.ini cube_freq=1850
    assert (ASCEND_910B2.core_num, ASCEND_910B2.cost.clock_ghz) == (24, 1.8)
    assert (ASCEND_910B3.core_num, ASCEND_910B3.cost.clock_ghz) == (20, 1.8)
    assert arch_by_name("910B3") is ASCEND_910B3 and arch_by_name("ascend910b1") is ASCEND_910B1
    assert arch_by_name("AtlasA2") is ATLAS_A2
    for name in ARCH_NAMES:
        spec = arch_by_name(name)
        assert spec.name == name and get_arch(name.upper()) is spec
        assert spec.cost.l2_size_bytes > 0
    for bad in ("910B9", "", "A2 ", 24):
        with pytest.raises(ArgumentError):
            arch_by_name(bad)
    # A variant keeps the Atlas A2 buffers: a kernel assembled for ATLAS_A2 times on it.
    assert ASCEND_910B3.l1_size == ATLAS_A2.l1_size and ASCEND_910B3.arch_code == ATLAS_A2.arch_code


_SOURCE = re.compile(r"\[(CANN-A2|CANN-950|CANN-910B\d|CATLASS[-A-Z0-9]*)\]|Estimate|estimate|Fitted")


def test_every_cost_parameter_names_its_source_and_the_fitted_ones_say_so():
    for name, field in CostParams.model_fields.items():
        assert field.description and _SOURCE.search(field.description), name
        if name in FITTED:
            assert "Fitted" in field.description, name
        else:
            assert "Fitted" not in field.description, name
