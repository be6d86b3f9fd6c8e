"""Settings that change an example's element types or layouts (``catlass-py run NAME --set element=bf16``,
``--set layout_a=column``, ...): the host side follows them as the C++ host follows ``ElementA`` / ``LayoutA`` (data
of the element type from the same generator, the same logical matrices stored in the layout, the golden on the
logical matrices), so the run passes its golden; or the example's kernel, epilogue or host cannot take the value and
the run is refused before anything runs: exit 2 with one line naming the setting."""

from __future__ import annotations

import json

import numpy as np
import pytest

from catlass_py import cli, data
from catlass_py.arch import ATLAS_A2
from catlass_py.arch.params import LaunchParams
from catlass_py.assemblies.settings import DTYPE, LAYOUT, settings_of
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.runner import ExampleRun, example_names, load_script

#: small problems of every example (its positional arguments)
SHAPES = {
    "00": ["200", "300", "136"], "01": ["2", "64", "96", "136"], "02": ["3", "200", "300", "136"],
    "03": ["200", "300", "136"], "05": ["3", "130", "200", "300"], "06": ["200", "300", "136"],
    "07": ["3", "200", "300", "136"], "08": ["2", "64", "96", "136"], "09": ["200", "300", "600"],
    "10": ["3", "200", "300", "136"], "11": ["3", "64", "96", "136"], "12": ["200", "300", "136"],
    "13": ["200", "300", "136"], "14": ["200", "300", "136"], "19": ["2", "1,3", "130,300", "5", "8", "128"],
    "20": ["200", "300", "136"], "21": ["200", "272", "112"], "23": ["2", "40", "300", "4", "2", "64", "1", "1"],
    "26": ["200", "300", "136"], "27": ["200", "300", "136"], "28": ["200", "300", "136"],
    "34": ["200", "300", "136"], "37": ["200", "300", "600"], "41": ["64", "96", "128"],
    "42": ["200", "300", "136"], "44": ["200", "300", "136"], "45": ["2", "64", "96", "136"],
    "52": ["64", "96", "1100"], "transpose_quant_batch_matmul": ["64", "128", "64", "2"],
}

#: the values tried for a setting of each element-type keyword: what the C++ examples use and at least one that
#: the kernels do not take
DTYPE_VALUES = {
    "element": ("float16", "bfloat16", "int8", "float32"),
    "out_element": ("float16", "bfloat16", "float32", "int32"),
    "out_dtype": ("float16", "bfloat16", "float32"),
    "element_d": ("float16", "bfloat16", "float32"),
    "bias_element": ("float16", "float32", "bfloat16"),
    "scale_dtype": ("float32", "float16", "bfloat16"),
    "element_group_list": ("int32", "int64", "int8"),
    "in_dtype": ("float8_e4m3fn", "float8_e5m2", "int8"),
}
LAYOUT_VALUES = ("row", "column", "zN", "nZ")


def _run(capsys, example, settings, *extra):
    """``catlass-py run EXAMPLE SHAPE --cores 2 --json --set ...``: ('ok', json) when it passes its golden, or
    ('refused', message) when it exits 2 with one line naming a setting; anything else fails the test."""
    argv = ["run", example, *SHAPES[example], "--cores", "2", "--json", *extra]
    for key, value in settings.items():
        argv += ["--set", f"{key}={value}"]
    rc = cli.main(argv)
    out, err = capsys.readouterr()
    if rc == 0:
        result = json.loads(out)
        assert result["passed"], (argv, result["verdict"])
        return "ok", result
    err = err.strip()
    assert rc == 2, (argv, rc, err)
    assert err.startswith("error: ") and "\n" not in err, (argv, err)
    assert any(key in err for key in settings), (argv, err)
    return "refused", err


def _dtype_layout_cases():
    for example in SHAPES:
        module = load_script(example)
        for info in settings_of(module.assemble):
            if info.kind is LAYOUT:
                yield from ((example, info.name, v) for v in LAYOUT_VALUES)
            elif info.kind is DTYPE:
                yield from ((example, info.name, v) for v in DTYPE_VALUES[info.name])


def test_every_dtype_and_layout_setting_has_test_values():
    cases = list(_dtype_layout_cases())
    names = {key for _, key, _ in cases}
    assert names >= {"element", "layout_a", "layout_b", "out_element", "out_dtype", "element_d"}
    assert {example for example, _, _ in cases} == set(SHAPES) - {"41"}  # 41 has no such setting
    assert set(SHAPES) == {name.split("_")[0] if name[0].isdigit() else name for name in example_names()}


@pytest.mark.slow
@pytest.mark.parametrize("example, key, value", list(_dtype_layout_cases()))
def test_every_dtype_and_layout_value_passes_or_is_refused(capsys, example, key, value):
    _run(capsys, example, {key: value})


@pytest.mark.parametrize("example, settings, output_dtype", [
    ("00", {"element": "bf16"}, "bf16"),
    ("00", {"element": "int8", "layout_a": "column", "layout_b": "column"}, "int32"),
    ("00", {"out_element": "float32", "layout_b": "column"}, "fp32"),
    ("01", {"element": "bf16", "layout_a": "column"}, "bf16"),
    ("02", {"element": "int8", "layout_b": "row"}, "int32"),
    ("05", {"element": "bf16"}, "bf16"),
    ("06", {"layout_a": "column", "layout_b": "row", "element": "bf16"}, "bf16"),
    ("08", {"element": "bf16", "layout_a": "row", "layout_b": "column"}, "bf16"),
    ("09", {"element": "bf16", "layout_a": "column"}, "fp16"),
    ("13", {"element": "int8", "layout_a": "column"}, "int32"),
    ("14", {"element": "bf16", "layout_b": "row"}, "bf16"),
    ("20", {"layout_a": "column", "layout_b": "column"}, "fp16"),
    ("20", {"element": "bf16", "bias_element": "float32"}, "bf16"),
    ("21", {"element": "bf16", "layout_b": "nZ"}, "bf16"),
    ("26", {"layout_a": "column", "layout_b": "row", "element": "int8"}, "int32"),
    ("27", {"element": "bf16", "out_dtype": "bfloat16"}, "bf16"),
    ("03", {"element": "bf16"}, "bf16"),
    ("34", {"element": "bf16", "out_dtype": "bfloat16"}, "bf16"),
    ("37", {"element": "bf16", "layout_b": "column"}, "bf16"),
    ("44", {"layout_a": "column", "layout_b": "column"}, "bf16"),
    ("45", {"element": "int8"}, "int32"),
    ("45", {"layout_a": "column", "element": "bf16"}, "bf16"),  # as the trailing arguments col row
    ("10", {"out_dtype": "float16"}, "fp16"),
    ("11", {"out_dtype": "float16", "element_group_list": "int32"}, "fp16"),
    ("12", {"out_dtype": "bfloat16", "layout_a": "column"}, "bf16"),
    ("07", {"scale_dtype": "float16", "element_group_list": "int64"}, "fp16"),
    ("23", {"element": "bf16"}, "bf16"),
])
def test_the_host_follows_the_settings(capsys, example, settings, output_dtype):
    verdict, result = _run(capsys, example, settings)
    assert verdict == "ok" and result["output_dtype"] == output_dtype


@pytest.mark.parametrize("example, settings, match", [
    ("06", {"element": "int8"}, "--set element=int8"),  # OptimizedMatmul makes C of A's type
    ("00", {"layout_a": "zN"}, "--set layout_a=zN"),  # the host stores row- or column-major matrices
    ("45", {"layout_a": "zN"}, "--set layout_a=zN"),  # the layouts are the example's row|col arguments
    ("13", {"layout_b": "nZ"}, "--set layout_b=nZ"),  # the host stores row- or column-major matrices
    ("20", {"element": "bf16"}, "(element)"),  # the assembly: no bf16 bias
    ("23", {"element": "int8"}, "--set element=int8"),
    ("10", {"out_dtype": "float32"}, "(out_dtype)"),
    ("07", {"element_group_list": "int8"}, "(element_group_list)"),
])
def test_unsupported_values_are_refused_before_running(capsys, example, settings, match):
    verdict, err = _run(capsys, example, settings)
    assert verdict == "refused" and match in err


def test_example_45_layout_settings_agree_with_its_layout_arguments(capsys):
    argv = ["run", "45", *SHAPES["45"], "col", "row", "--cores", "2", "--json"]
    assert cli.main([*argv, "--set", "layout_a=column"]) == 0 and json.loads(capsys.readouterr().out)["passed"]
    assert cli.main([*argv, "--set", "layout_b=column"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--set layout_b=ColumnMajor" in err and "which give RowMajor" in err and "\n" not in err


def test_layouts_are_stored_even_where_the_generator_is_degenerate(monkeypatch):
    """Example 08's fp16_t generator makes nearly every value 5.0, which no layout mistake would show: with
    full-range data the row-major A_g slabs and column-major B_g slabs must still give the golden."""
    module = load_script("08")
    make = module.make_inputs

    def full_range(*args, **kwargs):
        a, b, group_list = make(*args, **kwargs)
        rng = np.random.default_rng(0)
        return (rng.uniform(-5, 5, a.shape).astype(a.dtype), rng.uniform(-5, 5, b.shape).astype(b.dtype),
                group_list)

    monkeypatch.setattr(module, "make_inputs", full_range)
    default = module.run(SHAPES["08"], cores=2)
    swapped = module.run(SHAPES["08"], cores=2, config={"layout_a": RowMajor, "layout_b": ColumnMajor})
    assert default.passed and swapped.passed and default.max_abs_error > 0
    assert swapped.output_digest == default.output_digest  # the same logical product, whatever the storage


def test_the_input_cache_keys_on_the_element_type(monkeypatch, tmp_path):
    monkeypatch.setenv("CATLASS_PY_CACHE", "1")
    monkeypatch.setenv("CATLASS_PY_CACHE_DIR", str(tmp_path))
    module = load_script("00")
    first = module.run(["64", "96", "40"], cores=1)
    bf16 = module.run(["64", "96", "40"], cores=1, config={"element": "bfloat16"})
    again = module.run(["64", "96", "40"], cores=1, config={"element": "bfloat16"})
    assert not first.inputs_cached and not bf16.inputs_cached and again.inputs_cached
    assert bf16.output_dtype == again.output_dtype == "bf16" and bf16.passed and again.passed


@pytest.mark.parametrize("example, settings", [
    ("00", {"element": "int8", "layout_a": "column"}),
    ("08", {"element": "bf16", "layout_a": "row"}),
    ("05", {"element": "int8"}),
    ("10", {"out_dtype": "float16"}),
    ("21", {"element": "bf16", "layout_b": "row"}),
])
def test_timing_only_runs_take_the_settings(capsys, example, settings):
    argv = ["run", example, *SHAPES[example], "--cores", "2", "--predict-only", "--json"]
    for key, value in settings.items():
        argv += ["--set", f"{key}={value}"]
    assert cli.main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["numerics"] is False and result["analysis"]["cost"]["predicted_device_time_us"] > 0


def test_shape_only_inputs_have_the_settings_dtype():
    module = load_script("00")
    ex = ExampleRun("00_basic_matmul", ATLAS_A2, 1, options=LaunchParams(numerics=False))
    a, b = ex.inputs(module.make_inputs, 64, 96, 40, "bfloat16")
    assert a.dtype.name == b.dtype.name == "bfloat16" and a.shape == (64, 40)
    assert data.fill_random_fp16_t(data.GlibcRand(), 4, -5.0, 5.0, "int8").dtype == np.int8


def _help_line(capsys, example: str, key: str) -> str:
    assert cli.main(["run", example, "--help"]) == 0
    out = capsys.readouterr().out
    return next(line for line in out.splitlines() if line.split()[:1] == [key])


def test_help_lists_the_values_each_example_supports(capsys):
    # the assembly takes zN / nZ (its setting's syntax), the example's host only row- or column-major matrices
    assert _help_line(capsys, "00", "layout_a").split()[1] == "RowMajor|ColumnMajor"
    assert _help_line(capsys, "00", "element").split()[1] == "float16|bfloat16|int8|float32"
    assert _help_line(capsys, "21", "layout_b").split()[1] == "RowMajor|ColumnMajor|zN|nZ"  # 21 takes them all
    assert _help_line(capsys, "44", "layout_b").split()[1] == "RowMajor|ColumnMajor"
    assert _help_line(capsys, "28", "element").split()[1] == "float16|bfloat16"  # example 27's host, shared
    # every narrowing names a setting of the example's assembly, with values that setting parses to
    for example in SHAPES:
        module = load_script(example)
        infos = {info.name: info for info in settings_of(module.assemble)}
        for key, (allowed, why) in getattr(module, "SUPPORTED_SETTINGS", {}).items():
            assert key in infos and why, (example, key)
            for value in allowed:
                assert infos[key].parse(infos[key].show(value), ATLAS_A2) == value, (example, key, value)


@pytest.mark.parametrize("example, argv, match", [
    ("19", [*SHAPES["19"], "--dtype", "half", "--set", "element=bf16"], "--set element=bfloat16 contradicts --dtype half"),
    ("23", [*SHAPES["23"], "--dtype", "bf16", "--set", "element=float16"],
     "--set element=float16 contradicts --dtype bf16"),
    ("transpose_quant_batch_matmul", ["64", "128", "64", "2", "e4m3", "--set", "in_dtype=float8_e5m2"],
     "--set in_dtype=float8_e5m2 contradicts the argument that gives float8_e4m3fn"),
    ("transpose_quant_batch_matmul", ["test1", "--set", "perm_x2=012"],
     "--set perm_x2=012 contradicts the argument that gives 021"),
])
def test_a_setting_that_contradicts_the_examples_own_argument_is_refused(capsys, example, argv, match):
    assert cli.main(["run", example, *argv, "--cores", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert match in err and "\n" not in err


@pytest.mark.parametrize("example, argv, output_dtype", [
    ("23", [*SHAPES["23"], "--dtype", "bf16", "--set", "element=bfloat16"], "bf16"),
    ("transpose_quant_batch_matmul", ["64", "128", "64", "2", "e5m2", "--set", "in_dtype=float8_e5m2"], "bf16"),
])
def test_a_setting_that_agrees_with_the_examples_own_argument_runs(capsys, example, argv, output_dtype):
    assert cli.main(["run", example, *argv, "--cores", "2", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["passed"] and result["output_dtype"] == output_dtype
