"""Timing-only runs (LaunchParams(numerics=False), catlass-py run --predict-only): the same events and the same
prediction as a full run on every shipped example, no data work, shape-only operands, the checks kept."""

from __future__ import annotations

import json
import tracemalloc

import numpy as np
import pytest

from catlass_py import cli
from catlass_py.analysis import CostModel
from catlass_py.arch import LaunchParams
from catlass_py.arch.events import Observer
from catlass_py.arch.memory import GlobalBuffer
from catlass_py.errors import ArgumentError, NoDataError, OutOfBoundsError
from catlass_py.runner import example_names, load_script
from catlass_py.testing import EventLog
from catlass_py.virtual import is_virtual, virtual_array

#: example -> (positional args, cores): small shapes with tails and uneven blocks per core (both archs: the last
#: one runs on Ascend 950)
CASES = {
    "00_basic_matmul": (["300", "520", "100"], 2),
    "01_batched_matmul": (["3", "130", "100", "40"], 2),
    "02_grouped_matmul_slice_m": (["3", "300", "200", "100"], 2),
    "03_matmul_add": (["300", "260", "64"], 2),
    "05_grouped_matmul_slice_k": (["3", "130", "200", "300"], 2),
    "06_optimized_matmul": (["300", "200", "100"], 2),
    "07_grouped_matmul_slice_m_per_token_dequant_moe": (["3", "300", "300", "100"], 2),
    "08_grouped_matmul": (["3", "200", "300", "100"], 2),
    "09_splitk_matmul": (["130", "200", "600"], 2),
    "10_grouped_matmul_slice_m_per_token_dequant": (["3", "300", "300", "100"], 2),
    "11_grouped_matmul_slice_k_per_token_dequant": (["3", "130", "300", "300"], 2),
    "12_quant_matmul": (["300", "300", "100"], 2),
    "13_basic_matmul_tla": (["300", "520", "100"], 2),
    "14_optimized_matmul_tla": (["300", "200", "100"], 2),
    "19_mla": (["2", "1,3", "130,300", "5", "8", "128"], 2),
    "20_matmul_bias": (["300", "260", "100"], 2),
    "21_basic_matmul_preload_zN": (["300", "272", "112"], 2),
    "23_flash_attention_infer": (["2", "40", "300", "4", "2", "64", "1", "1"], 2),
    "26_matmul_relu": (["300", "200", "100"], 2),
    "27_matmul_gelu": (["300", "260", "64"], 2),
    "28_matmul_silu": (["300", "260", "64"], 2),
    "34_single_core_splitk_matmul": (["300", "200", "600"], 2),
    "37_streamk_matmul": (["300", "200", "600"], 2),
    "41_sparse_matmul_tla": (["160", "320", "128"], 2),
    "42_quant_optimized_matmul_tla": (["300", "200", "100"], 2),
    "44_quant_matmul_full_loadA_tla": (["300", "200", "600"], 2),
    "45_strided_batched_matmul_tla": (["3", "130", "100", "40"], 2),
    "52_quant_multi_core_splitk_matmul_tla": (["130", "200", "1100"], 4),
    "transpose_quant_batch_matmul": (["20", "64", "300", "2", "e5m2", "fp16", "021"], 3),
}


def _run(name, numerics, **kwargs):
    args, cores = CASES[name]
    log, cost = EventLog(), CostModel()
    result = load_script(name).run(args, cores=cores, observers=(log, cost),
                                   options=LaunchParams(numerics=numerics), **kwargs)
    return result, log.events, cost.report


def test_every_shipped_example_has_a_case():
    assert sorted(CASES) == example_names()


@pytest.mark.parametrize("name", sorted(CASES))
def test_timing_only_gives_the_full_runs_events_and_prediction(name):
    full, full_events, full_cost = _run(name, True)
    timed, timed_events, timed_cost = _run(name, False)
    assert full.passed and full.numerics
    assert timed.numerics is False and timed.verdict.startswith("Predicted only")
    assert len(full_events) > 50
    assert timed_events == full_events  # instructions, accesses, flags, markers: all of it
    assert timed_cost.cycles == full_cost.cycles and timed_cost.pipe_busy == full_cost.pipe_busy
    assert timed.blocks_per_core == full.blocks_per_core
    assert timed.output_digest is None and timed.max_abs_error is None


class _Quiet(Observer):
    """Asks for no events (a launch clock, say)."""

    interests = frozenset()


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_cost_model_alone_predicts_what_it_predicts_beside_an_event_log(name):
    # Alone, the cost model takes repeated L1 tiles as templates (ObserverBus.templates) and the plain run's data
    # shortcuts stay on; beside an observer of every event, every instruction is published. Same numbers, in a
    # full run and in a timing-only one.
    args, cores = CASES[name]
    full, _events, logged = _run(name, True)
    cost, timed_cost = CostModel(), CostModel()
    alone = load_script(name).run(args, cores=cores, observers=(cost,))
    timed = load_script(name).run(args, cores=cores, observers=(timed_cost,), options=LaunchParams(numerics=False))
    assert alone.passed and alone.output_digest == full.output_digest and not timed.numerics
    for report in (cost.report, timed_cost.report):
        assert report.cycles == logged.cycles and report.pipe_busy == logged.pipe_busy
        assert report.summary() == logged.summary()


def test_the_flagship_takes_tile_templates_only_when_every_instruction_observer_does():
    from catlass_py.arch.events import ObserverBus

    assert ObserverBus((CostModel(),)).templates
    assert not ObserverBus((CostModel(record=True),)).templates  # a trace shows every instruction
    assert not ObserverBus((CostModel(), EventLog())).templates
    assert not ObserverBus((_Quiet(),)).templates  # nobody wants instructions: the plain run's paths
    for numerics in (True, False):
        cost = CostModel()
        load_script("10_grouped_matmul_slice_m_per_token_dequant").run(
            ["3", "300", "300", "600"], cores=2, observers=(cost,), options=LaunchParams(numerics=numerics))
        assert cost._templates  # repeated L1 tiles were replayed from templates


def test_a_timing_only_run_allocates_neither_operands_nor_buffers():
    # 4096 x 4096 fp16 output and 2 x 4096 x 64 inputs: 33 MB if made; shape-only they cost nothing
    tracemalloc.start()
    try:
        result = load_script("00_basic_matmul").run(["4096", "4096", "64"], options=LaunchParams(numerics=False))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sum(result.blocks_per_core) == 512
    assert peak < 16 << 20, f"peak {peak / 2**20:.1f} MiB"


def test_group_lists_stay_real_data():
    # the group list steers the control flow (GetValue): a timing-only run reads the very values a full run reads
    from catlass_py import data

    with data.shape_only_fills():
        shaped = data.example10_inputs(5, 64, 32, 128)
    full = data.example10_inputs(5, 64, 32, 128)
    assert is_virtual(shaped.a) and is_virtual(shaped.b) and shaped.b.shape == full.b.shape
    assert not is_virtual(shaped.group_list) and np.array_equal(shaped.group_list, full.group_list)


def test_shape_only_arrays_keep_shapes_and_refuse_values():
    x = virtual_array((4, 6), np.float16)
    assert is_virtual(x.T) and x.T.shape == (6, 4) and is_virtual(x.reshape(24)) and is_virtual(x[1:])
    assert is_virtual(np.swapaxes(x.reshape(2, 2, 6), 1, 2)) and x.astype(np.float32).dtype == np.float32
    for bad in (lambda: x + 1, lambda: x.min(), lambda: x[0, 0], lambda: np.diff(x)):
        with pytest.raises(NoDataError):
            bad()
    buf = GlobalBuffer.from_array(x, "x", read_only=True)
    assert buf.is_virtual and buf.nbytes == 48
    with pytest.raises(NoDataError, match="shape-only"):
        buf.tensor("float16").view(4)


def _basic_kernel_args(numerics_a, m=64, n=32, k=48, a_bytes=None):
    from catlass_py.assemblies.basic_matmul import assemble
    from catlass_py.gemm import GemmCoord
    from catlass_py.kernel import DeviceGemm

    kernel = assemble()
    nbytes = 2 * m * k if a_bytes is None else a_bytes
    a = (GlobalBuffer.from_array(np.ones(nbytes // 2, np.float16), "a", read_only=True) if numerics_a
         else GlobalBuffer.virtual(nbytes, "a", read_only=True))
    b = GlobalBuffer.from_array(np.ones((k, n), np.float16), "b", read_only=True)
    c = GlobalBuffer.from_array(np.zeros((m, n), np.float16), "c")
    op = DeviceGemm(kernel)
    op.initialize(kernel.Arguments(GemmCoord(m, n, k), a.tensor("float16"), b.tensor("float16"),
                                   c.tensor("float16")))
    return op


def test_bounds_are_checked_without_the_bytes():
    # A one element short: both a full and a timing-only launch stop at the same GM read
    short = 2 * 64 * 48 - 2
    with pytest.raises(OutOfBoundsError, match="GM tensor 'a'") as full:
        _basic_kernel_args(True, a_bytes=short).run(1)
    with pytest.raises(OutOfBoundsError, match="GM tensor 'a'") as timed:
        _basic_kernel_args(False, a_bytes=short).run(1, options=LaunchParams(numerics=False))
    assert str(full.value) == str(timed.value)


def test_a_core_repeating_a_copy_another_core_proved_still_checks_its_bound():
    # A timing-only launch with a cost model: the first core proves the GM -> L1 copy's geometry for the launch
    # and the others repeat it, each checking that its own tile ends inside A. The last block's tile reads one
    # element past A's end: the same error as a full run's.
    short = 2 * 512 * 48 - 2
    errors = []
    for numerics in (True, False):
        args = _basic_kernel_args(numerics, m=512, a_bytes=short)
        with pytest.raises(OutOfBoundsError, match="GM tensor 'a'") as exc:
            args.run(4, observers=(CostModel(),), options=LaunchParams(numerics=numerics))
        errors.append(str(exc.value))
    assert errors[0] == errors[1] and "AIC3" in errors[0].replace(" ", "")
    cost = CostModel()  # and with A whole, every core's copies are the proven geometry's template after the first
    _basic_kernel_args(False, m=512).run(4, observers=(cost,), options=LaunchParams(numerics=False))
    from catlass_py.tile.copy_gm_to_l1 import CopyGmToL1

    assert any(isinstance(key, tuple) and isinstance(key[0], CopyGmToL1) for key in cost._templates)


def test_a_packed_copy_repeated_on_another_core_is_bounded_as_the_first_one():
    # int4 (two elements a byte): the repeat's bound is gm_check's, in the same units, in every mode
    from catlass_py.arch import ATLAS_A2, launch
    from catlass_py.arch.memory import GlobalTensor
    from catlass_py.gemm import GemmType
    from catlass_py.layout import RowMajor, zN
    from catlass_py.numerics import get_dtype
    from catlass_py.tile import CopyGmToL1

    class TwoCopies:
        aiv = None

        def __init__(self):
            self.copy = CopyGmToL1(ATLAS_A2, GemmType("int4", RowMajor))
            self.buf = GlobalBuffer.from_array(np.zeros(128, np.uint8), "a")

        def aic(self, ctx, p):
            l1 = ctx.resource.l1_buf.get_buffer_by_byte("int4", 0, 4096)
            src = GlobalTensor(self.buf, 64 * ctx.core.block_idx, get_dtype("int4"))
            self.copy(l1, src, zN.make_layout("int4", 2, 64), RowMajor(2, 64, 64))

    errors = []
    for numerics in (True, False):
        for observers in ((), (CostModel(),)):
            with pytest.raises(OutOfBoundsError, match="GM tensor 'a'") as exc:
                launch(TwoCopies(), None, 2, observers=observers, options=LaunchParams(numerics=numerics))
            errors.append(str(exc.value))
    assert len(set(errors)) == 1 and errors[0].startswith("AIC 1")


def test_a_sync_site_editor_sees_every_copy_a_cost_model_alone_would_take_as_a_template():
    from catlass_py.tile.copy_gm_to_l1 import CopyGmToL1

    runs = []
    for record in (False, True):
        cost = CostModel()
        load_script("00_basic_matmul").run(["512", "512", "1024"], cores=4, observers=(cost,),
                                          options=LaunchParams(numerics=False, record_sync_sites=record))
        runs.append(any(isinstance(key, tuple) and isinstance(key[0], CopyGmToL1) for key in cost._templates))
    assert runs == [True, False]


def test_a_full_run_on_a_shape_only_operand_names_it():
    with pytest.raises(NoDataError, match="'a' is shape-only"):
        _basic_kernel_args(False).run(1)


def test_launch_params_numerics_is_a_bool():
    with pytest.raises(ArgumentError, match="numerics"):
        LaunchParams(numerics=0)


def test_a_shape_beyond_what_numpy_can_address_is_refused_in_one_line(capsys):
    with pytest.raises(ArgumentError, match="more bytes than a numpy array can address"):
        virtual_array((2**32, 2**32), np.float16)
    assert virtual_array((2**31, 2**31), np.int8).shape == (2**31, 2**31)  # 2**62 bytes: still a shape
    assert cli.main(["run", "00", "4294967295", "4294967295", "4294967295", "--predict-only"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "numpy array can address" in err and "Traceback" not in err


def test_cli_predict_only_json(capsys):
    rc = cli.main(["run", "12", "300", "300", "100", "--cores", "2", "--predict-only", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["numerics"] is False and out["max_abs_error"] is None
    assert out["analysis"]["cost"]["predicted_device_time_us"] > 0
    assert cli.main(["run", "12", "300", "300", "100", "--predict-only", "--seeds", "2"]) == 2
    assert "--seeds" in capsys.readouterr().err


@pytest.mark.parametrize("name, args", [("13_basic_matmul_tla", ["4096", "4096", "64"]),
                                        ("52_quant_multi_core_splitk_matmul_tla", ["2048", "2048", "256"])])
def test_a_timing_only_tla_run_allocates_neither_operands_nor_buffers(name, args):
    # the TLA tensors over shape-only GM, unallocated workspaces and a timing-only core's buffers are stand-ins
    tracemalloc.start()
    try:
        result = load_script(name).run(args, options=LaunchParams(numerics=False))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sum(result.blocks_per_core) > 0 and not result.numerics
    assert peak < 16 << 20, f"peak {peak / 2**20:.1f} MiB"


def _tla_kernel_args(numerics_a, m=64, n=32, k=48, a_bytes=None, c_read_only=False):
    from catlass_py.assemblies.basic_matmul_tla import assemble
    from catlass_py.gemm import GemmCoord
    from catlass_py.kernel import DeviceGemm
    from catlass_py.tla import make_layout_tag

    kernel = assemble()
    nbytes = 2 * m * k if a_bytes is None else a_bytes
    a = (GlobalBuffer.from_array(np.ones(nbytes // 2, np.float16), "a", read_only=True) if numerics_a
         else GlobalBuffer.virtual(nbytes, "a", read_only=True))
    b = GlobalBuffer.from_array(np.ones((k, n), np.float16), "b", read_only=True)
    c = GlobalBuffer.from_array(np.zeros((m, n), np.float16), "c", read_only=c_read_only)
    op = DeviceGemm(kernel)
    layouts = [make_layout_tag("float16", "RowMajor", r, c) for r, c in ((m, k), (k, n), (m, n))]
    op.initialize(kernel.Arguments(GemmCoord(m, n, k), a.tensor("float16"), layouts[0], b.tensor("float16"),
                                   layouts[1], c.tensor("float16"), layouts[2]))
    return op


@pytest.mark.parametrize("case, match", [({"a_bytes": 2 * 64 * 48 - 2}, "GM tensor 'a'"),
                                         ({"c_read_only": True}, "GM tensor 'c' is read-only")])
def test_tla_copies_check_bounds_without_the_bytes(case, match):
    # the TLA GM->L1 copy reads one element past A's end, or the fixpipe writes a read-only C: a full and a
    # timing-only launch stop at the same instruction with the same message
    with pytest.raises(OutOfBoundsError, match=match) as full:
        _tla_kernel_args(True, **case).run(1)
    with pytest.raises(OutOfBoundsError, match=match) as timed:
        _tla_kernel_args(False, **case).run(1, options=LaunchParams(numerics=False))
    assert str(full.value) == str(timed.value)


def test_a_full_tla_run_on_a_shape_only_operand_names_it():
    with pytest.raises(NoDataError, match="'a' is shape-only"):
        _tla_kernel_args(False).run(1)


_TLA_OPS = {
    "basic_matmul_tla": ((130, 200), (200, 96), "float16", ()),
    "optimized_matmul_tla": ((130, 200), (200, 96), "float16", ()),
    "strided_batched_matmul_tla": ((2, 130, 200), (2, 200, 96), "float16", ()),
    "quant_matmul_full_load_a_tla": ((130, 200), (200, 96), "int8", ((96,), (130,))),
    "quant_multi_core_splitk_matmul_tla": ((130, 200), (200, 96), "int8", ((96,), (130,))),
    "quant_optimized_matmul_tla": ((130, 200), (200, 96), "int8", ((96,), (130,))),
}


@pytest.mark.parametrize("name", sorted(_TLA_OPS))
def test_tla_operators_run_timing_only_on_shape_only_operands(name):
    from catlass_py import ops

    a_shape, b_shape, dtype, scales = _TLA_OPS[name]
    op = getattr(ops, name)
    rng = np.random.default_rng(0)
    real = [rng.integers(-3, 4, a_shape).astype(dtype), rng.integers(-3, 4, b_shape).astype(dtype),
            *(rng.random(s).astype(np.float32) for s in scales)]
    shaped = [virtual_array(x.shape, x.dtype) for x in real]
    full_cost, timed_cost = CostModel(), CostModel()
    full = op(*real, core_num=4, observers=(full_cost,))
    timed = op(*shaped, core_num=4, observers=(timed_cost,), options=LaunchParams(numerics=False))
    assert is_virtual(timed) and timed.shape == full.shape and timed.dtype == full.dtype
    assert timed_cost.report.cycles == full_cost.report.cycles
