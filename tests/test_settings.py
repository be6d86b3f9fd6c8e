"""Assembly keywords as command-line settings (catlass-py run NAME --set KEY=VALUE): derived from the assemble()
signatures, listed by --help, parsed, and checked by the assembly's own rules (exit 2 with one line)."""

from __future__ import annotations

import importlib
import json
import pkgutil

import pytest

import catlass_py.assemblies as assemblies
from catlass_py import cli
from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.settings import parse_settings, settings_of, show_settings
from catlass_py.errors import ArgumentError
from catlass_py.gemm import GemmShape, MmadAtlasA2PreloadAsync
from catlass_py.layout import ColumnMajor
from catlass_py.runner import example_names, load_script

ASSEMBLY_MODULES = sorted(m.name for m in pkgutil.iter_modules(assemblies.__path__) if m.name != "settings")


@pytest.mark.parametrize("module", ASSEMBLY_MODULES)
def test_every_keyword_of_every_assembly_is_a_setting_that_round_trips(module):
    assemble = importlib.import_module(f"catlass_py.assemblies.{module}").assemble
    infos = settings_of(assemble)
    assert infos and all(i.name != "arch" for i in infos)
    arch = assemble.__defaults__[0] if module != "transpose_quant_batch_matmul" else None
    texts = {i.name: i.show(i.default) for i in infos}
    values = parse_settings(assemble, texts, arch)
    for i in infos:
        assert values[i.name] == i.default, i.name  # show() then parse() gives the default back
    names = {i.name for i in infos}
    assert {"l1_tile", "l0_tile"} <= names or "tile_shape" in names


def test_every_example_exposes_its_assembly():
    for name in example_names():
        example = load_script(name)
        assert callable(example.assemble), name
        assert settings_of(example.assemble)


def test_values_parse_to_the_assembly_types():
    from catlass_py.assemblies.basic_matmul import assemble

    v = parse_settings(assemble, ["l1_tile=64x128x128", "swizzle=3,1", "layout_b=column", "element=fp16",
                                  "dispatch_policy=MmadAtlasA2Pingpong(enable_unit_flag=false)",
                                  "out_element=auto"], ATLAS_A2)
    assert v["l1_tile"] == GemmShape(64, 128, 128) and v["swizzle"] == (3, 1) and v["layout_b"] is ColumnMajor
    assert v["element"] == "float16" and v["out_element"] is None
    assert v["dispatch_policy"].enable_unit_flag is False
    assert show_settings(assemble, {"l1_tile": GemmShape(64, 128, 128), "swizzle": (3, 1)}) == \
        {"l1_tile": "64x128x128", "swizzle": "3,1"}
    from catlass_py.assemblies.grouped_matmul import assemble as gmm

    p = parse_settings(gmm, ["dispatch_policy=MmadAtlasA2PreloadAsync(l1_stages=3,l0a_stages=2)"], ATLAS_A2)
    assert p["dispatch_policy"] == MmadAtlasA2PreloadAsync(l1_stages=3, l0a_stages=2, arch=ATLAS_A2)
    for bad, match in (("l1_tile=64x128", "MxNxK"), ("swizzle=3", "OFFSET,DIRECTION"), ("nope=1", "not a keyword"),
                       ("element=float99", "dtype"), ("dispatch_policy=Foo", "dispatch policy"), ("l1_tile", "KEY=VALUE"),
                       ("enable_unit_flag=maybe", "true or false")):
        with pytest.raises(ArgumentError, match=match):
            parse_settings(assemble, [bad], ATLAS_A2)


def test_help_lists_the_examples_settings(capsys):
    assert cli.main(["run", "00_basic_matmul", "--help"]) == 0  # argparse printed the help; main returns its status
    out = capsys.readouterr().out
    assert "assembly settings of 00_basic_matmul" in out
    assert "l1_tile" in out and "128x256x256" in out and "swizzle" in out and "OFFSET,DIRECTION" in out
    assert cli.main(["run", "--cores", "2", "10", "--help"]) == 0
    out = capsys.readouterr().out
    assert "workspace_stages" in out and "128x256x512" in out


def test_run_with_settings(capsys):
    rc = cli.main(["run", "00", "200", "300", "256", "--cores", "3", "--json", "--set", "l1_tile=64x128x128",
                   "--set", "l0_tile=64x128x64", "--set", "swizzle=3,1"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["passed"]
    assert out["details"]["swizzle"] == "<3,1>" and out["details"]["total_blocks"] == 4 * 3
    assert out["details"]["settings"] == "l1_tile=64x128x128 l0_tile=64x128x64 swizzle=3,1"


def test_bad_settings_exit_2_with_one_line(capsys):
    for argv, match in (
        (["--set", "l1_tile=abc"], "--set l1_tile=abc: expected MxNxK"),
        (["--set", "color=red"], "--set color: not a keyword"),
        (["--set", "l1_tile=256x256x512"], "L1"),  # the assembly's own ConfigError (L1 budget)
        (["--set", "l0_tile=128x256x512"], "L0"),
        (["--set", "swizzle=3,1", "--set", "swizzle=3,0"], "--set swizzle: set twice, to '3,1' and '3,0'"),
    ):
        assert cli.main(["run", "00", "64", "64", "64", "--cores", "1", *argv]) == 2, argv
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: ") and match in err and "\n" not in err, err


def test_a_setting_repeated_with_the_same_value_is_accepted(capsys):
    assert cli.main(["run", "00", "64", "64", "64", "--cores", "1", "--set", "swizzle=3,1", "--set", "swizzle=3, 1"]) == 0
    capsys.readouterr()


@pytest.mark.parametrize("argv, settings, details", [
    (["13", "200", "300", "256"], ["l1_tile=64x128x128", "l0_tile=64x128x64", "swizzle=3,0"],
     {"swizzle": "<3,0>", "total_blocks": 4 * 3}),
    (["13", "200", "300", "136"], ["layout_a=column", "layout_b=column"], {"total_blocks": 2 * 2}),
    (["14", "200", "300", "256"], ["l1_tile=64x128x128", "l0_tile=64x128x64", "enable_shuffle_k=false"],
     {"swizzle": "<3,1>", "total_blocks": 4 * 3, "padding_a": False}),
    (["42", "300", "200", "256"], ["workspace_stages=1", "swizzle=3,1"], {"swizzle": "<3,1>", "total_blocks": 3}),
    (["44", "300", "200", "256"], ["block_scheduler=GemmIdentityBlockSwizzle<3,0>", "l1b_stages=1"],
     {"scheduler": "GemmIdentityBlockSwizzle", "total_blocks": 3}),
    (["45", "2", "64", "96", "128"], ["l1_tile=64x128x128", "l0_tile=64x128x64", "enable_unit_flag=false"],
     {"total_blocks": 2}),
    (["52", "64", "96", "1100"], ["epilogue_tile=16x256", "l1_tile=128x256x256", "l0_tile=128x256x64"], {}),
])
def test_tla_examples_take_settings(capsys, argv, settings, details):
    sets = [x for s in settings for x in ("--set", s)]
    rc = cli.main(["run", *argv, "--cores", "4", "--json", *sets])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["passed"], out
    assert out["details"]["settings"] == " ".join(settings)
    for key, value in details.items():
        assert out["details"][key] == value, key


def test_tla_setting_kinds():
    from catlass_py.assemblies.quant_matmul_full_load_a_tla import assemble as full_load
    from catlass_py.gemm.block import GemmIdentityBlockSwizzle, GemmIdentityBlockSwizzleL1FullLoad

    v = parse_settings(full_load, ["epilogue_tile=16x128", "block_scheduler=GemmIdentityBlockSwizzleL1FullLoad<1,1>",
                                   "layout_b=column"], ATLAS_A2)
    assert v["epilogue_tile"] == (16, 128) and v["block_scheduler"] == GemmIdentityBlockSwizzleL1FullLoad(1, 1)
    assert v["layout_b"] is ColumnMajor
    assert show_settings(full_load, {"block_scheduler": GemmIdentityBlockSwizzle(3, 0), "epilogue_tile": (32, 256)}) \
        == {"block_scheduler": "GemmIdentityBlockSwizzle<3,0>", "epilogue_tile": "32x256"}
    for bad, match in (("epilogue_tile=32", "RxC"), ("block_scheduler=Foo<1,0>", "Name<OFFSET,DIRECTION>"),
                       ("block_scheduler=GemmIdentityBlockSwizzle", "Name<OFFSET,DIRECTION>")):
        with pytest.raises(ArgumentError, match=match):
            parse_settings(full_load, [bad], ATLAS_A2)
    # a layout class or its name builds the same kernel
    assert repr(full_load(layout_b=ColumnMajor).block_mmad) == repr(full_load(layout_b="ColumnMajor").block_mmad)


def test_tla_assembly_rules_are_setting_errors(capsys):
    for argv in (["13", "64", "64", "64", "--set", "l1_tile=256x256x512", "--set", "l0_tile=256x256x64"],
                 ["52", "64", "96", "1100", "--set", "epilogue_tile=64x512"]):
        assert cli.main(["run", *argv, "--cores", "2"]) == 2, argv
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: the assembly rejects the settings") and "\n" not in err, err
