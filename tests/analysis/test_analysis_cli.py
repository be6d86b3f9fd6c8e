"""The analyses from the command line (--trace, --timeline, --detect-races, --seeds) and adversarial
scheduling of a racy kernel."""

import dataclasses
import json

import numpy as np
import pytest

from catlass_py.analysis import explore_interleavings
from catlass_py.arch import ATLAS_A2, GlobalBuffer
from catlass_py.cli import main
from catlass_py.data import example10_inputs
from catlass_py.gemm import GemmCoord
from catlass_py.kernel import DeviceGemm, GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace
from catlass_py.ops.grouped_matmul_slice_m_per_token_dequant import build_kernel

SHAPE = ["4", "128", "512", "1024"]


def test_run_with_every_analysis_writes_trace_and_reports_in_json(tmp_path, capsys):
    trace, png = tmp_path / "t.json", tmp_path / "t.png"
    argv = ["run", "10", *SHAPE, "--cores", "2", "--json", "--trace", str(trace), "--detect-races", "--seeds", "2"]
    try:
        import matplotlib  # noqa: F401

        argv += ["--timeline", str(png)]
    except ImportError:
        png = None
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["passed"] and out["verdict"] == "Compare success."
    cost = out["analysis"]["cost"]
    assert cost["arch"] == "AtlasA2" and cost["predicted_device_time_us"] > 0
    assert 0 < cost["cube_utilisation"] < 1
    assert set(cost["pipe_busy"]) >= {"AIC.MTE2", "AIC.M", "AIV.V", "AIV.MTE3"}
    # every declared access the detector checks: 32 in writable GM, the rest in on-chip buffers
    assert out["analysis"]["races"] == {"races": 0, "checked_accesses": 828}
    assert out["analysis"]["interleavings"] == {"seeds": 2, "distinct_outputs": 1, "outputs_differ": False,
                                                "differing_seeds": []}
    assert len(out["output_digest"]) == 16
    events = json.loads(trace.read_text())["traceEvents"]
    assert out["analysis"]["trace"] == {"path": str(trace), "events": len(events)}
    assert any(e["ph"] == "X" and e["name"] == "Mmad" for e in events)
    if png is not None:
        assert png.read_bytes()[:4] == b"\x89PNG"


def test_summary_table_shows_predicted_time_and_pipe_busy_fractions(capsys):
    assert main(["run", "10", "2", "64", "256", "512", "--cores", "1", "--detect-races"]) == 0
    out = capsys.readouterr().out
    assert "Compare success." in out
    assert "predicted device time" in out and "us (AtlasA2, 1.8 GHz" in out
    assert "cube utilisation" in out
    assert "AIC pipes busy" in out and "MTE2" in out and "AIV pipes busy" in out
    assert "none (136 accesses checked)" in out  # 8 in writable GM, the rest on chip


def test_bad_seed_count_is_an_argument_error(capsys):
    assert main(["run", "10", "2", "64", "256", "512", "--seeds", "-1"]) == 2
    assert "--seeds" in capsys.readouterr().err


BASE = build_kernel(ATLAS_A2, "bfloat16")


def _kernel(**overrides):
    cls = type("Variant", (GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace,), overrides)
    return cls(BASE.block_mmad, BASE.block_epilogue, BASE.block_scheduler, workspace_stages=2)


def _runner(kernel, g=4, m=128, n=512, k=1024, cores=2):
    x = example10_inputs(g, m, n, k)

    def once(options):
        gm = {nm: GlobalBuffer.from_array(v, nm, read_only=True).tensor(v.dtype) for nm, v in x.as_dict().items()}
        d = np.zeros((m, n), x.scale.dtype)
        args = kernel.Arguments(GemmCoord(m, n, k), g, cores, gm["group_list"], gm["a"], gm["b"], gm["scale"],
                                gm["per_token_scale"], GlobalBuffer.from_array(d, "d").tensor(d.dtype))
        op = DeviceGemm(kernel)
        op.initialize(args)
        # Without the AIV's wait its flag stays unconsumed; the outputs are what is compared here.
        op.run(cores, options=dataclasses.replace(options, allow_unpaired_flags=True))
        return d

    return once


def test_interleavings_agree_for_the_intact_kernel_and_differ_without_the_aiv_wait():
    intact = explore_interleavings(_runner(_kernel()), 4)
    assert intact.seeds == [0, 1, 2, 3] and not intact.differ and intact.distinct == 1
    racy = explore_interleavings(_runner(_kernel(aiv_wait_slot_stored=lambda self, ctx, s: None)), 4)
    assert racy.differ and racy.distinct > 1
    assert racy.summary()["differing_seeds"]  # named, so the failing interleaving can be replayed
    assert sum(len(v) for v in racy.groups.values()) == 4


def test_interleavings_compare_against_a_reference_digest():
    rep = explore_interleavings(lambda options: np.arange(4), [5], reference="0" * 16)
    assert rep.differ and rep.summary()["differing_seeds"] == [5]
    with pytest.raises(Exception, match="seeds"):
        explore_interleavings(lambda options: np.arange(4), 0)
