"""The memory budget (catlass_py.arch.budget): every operator and example computes what it will allocate and
raises CapacityError naming the figure and the budget before allocating anything."""

from __future__ import annotations

import inspect
import tracemalloc

import numpy as np
import pytest

from catlass_py import cli, ops, runner
from catlass_py.arch import LaunchParams
from catlass_py.arch import budget
from catlass_py.arch.budget import (
    Footprint,
    array_bytes,
    check_footprint,
    format_bytes,
    memory_limit,
    placeholder,
)
from catlass_py.errors import ArgumentError, CapacityError
from catlass_py.ops.operator import OpOptions


TINY = LaunchParams(memory_limit=1)
#: arguments of the examples whose USAGE is not CATLASS's "[G] m n k"
SMALL_ARGV = {"transpose_quant_batch_matmul": ["test1"], "19_mla": ["2", "1,2", "130,300", "8", "8", "128"],
              "23_flash_attention_infer": ["2", "40", "300", "4", "2", "64", "1", "1"]}


def _peak(fn):
    """(result or exception, tracemalloc peak bytes) of ``fn()``."""
    tracemalloc.start()
    try:
        try:
            out = fn()
        except Exception as exc:  # noqa: BLE001 - returned to the test
            out = exc
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("name", cli.example_names())
def test_every_example_checks_its_budget_before_generating_inputs(name, monkeypatch):
    def no_inputs(*args, **kwargs):
        raise AssertionError("inputs generated before the budget check")

    monkeypatch.setattr(runner, "cached_inputs", no_inputs)
    example = cli.load_script(name)
    argv = SMALL_ARGV.get(name) or ["4", "64", "64", "64"][-len(
        [w for w in example.USAGE.split() if not w.startswith("[")]):]
    with pytest.raises(CapacityError, match=rf"^{name} would allocate .* more than the memory budget of 1 B"):
        example.run(argv, cores=2, options=TINY)


def test_the_cli_refuses_128_gib_of_host_data_with_one_line(capsys):
    # k = 2^32 does not fit CATLASS's uint32 argument; 2^31 fits and asks for 64 GiB per operand
    assert cli.main(["run", "00_basic_matmul", "16", "16", "4294967296"]) == 2
    err = capsys.readouterr().err
    assert err == "error: k: expected an integer in [0, 4294967295], got 4294967296 (usage: 00_basic_matmul m n k " \
                  "[device_id])\n"
    status, peak = _peak(lambda: cli.main(["run", "00_basic_matmul", "16", "16", "2147483648"]))
    err = capsys.readouterr().err
    assert status == 2 and peak < 4 << 20
    assert err.count("\n") == 1 and err.startswith("error: CapacityError: 00_basic_matmul would allocate")
    assert "input a 64.0 GiB" in err and "input b 64.0 GiB" in err and "memory budget" in err


def test_the_environment_sets_the_budget(monkeypatch):
    fp = Footprint().add("gm", "c", 3 << 20)
    monkeypatch.setenv("CATLASS_PY_MEMORY_LIMIT", "2M")
    assert memory_limit().bytes == 2 << 20
    with pytest.raises(CapacityError, match=r"would allocate 3.0 MiB \(c 3.0 MiB\), more than the memory budget "
                                            r"of 2.0 MiB \(CATLASS_PY_MEMORY_LIMIT=2M"):
        check_footprint(fp, "x")
    check_footprint(fp, "x", limit=4 << 20)  # the LaunchParams figure wins
    monkeypatch.setenv("CATLASS_PY_MEMORY_LIMIT", "off")
    assert memory_limit().bytes is None
    check_footprint(fp.add("golden", "golden", 1 << 60), "x")
    monkeypatch.setenv("CATLASS_PY_MEMORY_LIMIT", "50%")
    assert memory_limit().source.startswith("CATLASS_PY_MEMORY_LIMIT=50%")
    for bad in ("lots", "-1G", "0", "1_000", "١٢٨", "150%"):
        monkeypatch.setenv("CATLASS_PY_MEMORY_LIMIT", bad)
        with pytest.raises(ArgumentError, match="CATLASS_PY_MEMORY_LIMIT: expected a byte count"):
            memory_limit()
    monkeypatch.delenv("CATLASS_PY_MEMORY_LIMIT")
    assert memory_limit().source.startswith("80% of the available memory")


def test_the_cli_reports_a_malformed_limit_in_one_line(monkeypatch, capsys):
    monkeypatch.setenv("CATLASS_PY_MEMORY_LIMIT", "lots")
    assert cli.main(["run", "00_basic_matmul", "16", "16", "16"]) == 2
    assert capsys.readouterr().err.startswith("error: CATLASS_PY_MEMORY_LIMIT: expected a byte count")


def test_launch_params_memory_limit_is_checked():
    assert LaunchParams(memory_limit=np.int64(5)).memory_limit == 5
    for bad in (0, -1, 2.5, True, b"1G"):
        with pytest.raises(ArgumentError, match="memory_limit: expected None, a byte count >= 1 or text"):
            LaunchParams(memory_limit=bad)
    for bad in ("lots", "1X", "0", "150%"):  # text is checked as the environment variable's is, naming the keyword
        with pytest.raises(ArgumentError, match="^memory_limit: expected a byte count such as 8589934592 or 8G"):
            LaunchParams(memory_limit=bad)


def test_launch_params_memory_limit_takes_the_environment_variables_text(monkeypatch):
    monkeypatch.setenv("CATLASS_PY_MEMORY_LIMIT", "off")  # the keyword wins over the environment
    limit = memory_limit(LaunchParams(memory_limit="1M").memory_limit)
    assert (limit.bytes, limit.source) == (1 << 20, "LaunchParams.memory_limit=1M")
    assert memory_limit("off").bytes is None
    monkeypatch.setattr(budget, "available_memory", lambda: 8 << 30)
    limit = memory_limit("25%")
    assert (limit.bytes, limit.source) == (2 << 30, "LaunchParams.memory_limit=25% of the available memory, 8.0 GiB")
    a = np.ones((64, 64), np.float16)
    with pytest.raises(CapacityError, match="LaunchParams.memory_limit=1K"):
        ops.basic_matmul(a, a, core_num=1, options=LaunchParams(memory_limit="1K"))


def test_footprints_and_placeholders():
    fp = Footprint().array("inputs", "input a", (1 << 20, 1 << 20), "float16").add("gm", "c", 0)
    assert fp.total == 2 << 40 and len(fp.items) == 1 and str(fp) == "2.0 TiB (input a 2.0 TiB)"
    fp = fp.add("workspace", "workspace", 5).add("cores", "core buffers", 7)
    assert fp.by_kind() == {"inputs": 2 << 40, "workspace": 5, "cores": 7}
    assert fp.without("inputs", "cores").total == 5
    assert array_bytes((3, 5), "int4") == 8 and format_bytes(1023) == "1023 B"
    t = placeholder("b", 1 << 40, "int8")  # a terabyte of GM with nothing behind it
    assert t.buffer.nbytes == 1 << 40 and t.buffer.read_only and t.buffer.raw.strides == (0,)
    with pytest.raises(ValueError, match="kind"):
        fp.add("disk", "x", 1)


@pytest.mark.parametrize("name, args", [
    ("10", ["4", "96", "256", "512"]),
    # 05 and 11 compare 16 outputs of 512 x 512, transpose 64 x 1024 x 512: their compares (and 05's and 11's
    # goldens) once made float64 copies of the whole output that no estimate counted (4-6x over it)
    ("05", ["16", "512", "512", "1024"]),
    ("11", ["16", "512", "512", "1024"]),
    ("transpose_quant_batch_matmul", ["1024", "128", "512", "64"]),
])
def test_an_example_reports_its_estimate_and_it_bounds_what_the_run_allocates(name, args):
    example = cli.load_script(name)
    result, peak = _peak(lambda: example.run(args, cores=2))
    assert result.passed and result.memory_estimate is not None
    assert peak <= result.memory_estimate
    assert result.to_json()["memory_estimate"] == result.memory_estimate


def test_ops_and_example_run_document_the_budget():
    assert "memory budget" in inspect.getdoc(runner.ExampleRun.reserve)
    assert "memory budget" in inspect.getdoc(OpOptions.device_arguments)
