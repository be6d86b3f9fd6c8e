"""BlockMmad's repeat of a proved L1 tile (``BlockMmadInstance._replay_l1_tile``): who shares a proof, and that the
repeats compute what the full loop computes (against the independent golden)."""

from __future__ import annotations

import numpy as np
import pytest

from catlass_py import golden
from catlass_py.analysis import CostModel
from catlass_py.arch import LaunchParams
from catlass_py.arch.events import Observer
from catlass_py.assemblies.settings import parse_settings
from catlass_py.data import example10_inputs
from catlass_py.gemm.block import block_mmad_instance as bmi
from catlass_py.ops import grouped_matmul_slice_m_per_token_dequant as gmm
from catlass_py.runner import load_script
from catlass_py.tune.evaluate import example_arch


@pytest.fixture
def loops(monkeypatch):
    """Count, per AIC, the L1 tiles run through the full loop and those repeated from a proof."""
    counts: dict = {"full": {}, "replay": {}}
    tile, replay = bmi.BlockMmadInstance.mmad_l1_tile, bmi.BlockMmadInstance._replay_l1_tile

    def counted_tile(self, *a, **k):
        before = sum(counts["replay"].values())
        tile(self, *a, **k)
        if sum(counts["replay"].values()) == before:
            counts["full"][self.ctx.core] = counts["full"].get(self.ctx.core, 0) + 1

    def counted_replay(self, *a, **k):
        counts["replay"][self.ctx.core] = counts["replay"].get(self.ctx.core, 0) + 1
        return replay(self, *a, **k)

    monkeypatch.setattr(bmi.BlockMmadInstance, "mmad_l1_tile", counted_tile)
    monkeypatch.setattr(bmi.BlockMmadInstance, "_replay_l1_tile", counted_replay)
    return counts


def _run(x, observers=()):
    d = gmm(x.a, x.b, x.group_list, x.scale, x.per_token_scale, core_num=8, observers=observers)
    want = golden.grouped_matmul_slice_m_per_token_dequant(x.a, x.b, x.group_list, x.scale, x.per_token_scale)
    assert np.array_equal(d.view(np.uint16), want.astype(d.dtype).view(np.uint16))


def test_unobserved_cores_of_a_launch_share_the_proofs_of_their_tiles(loops):
    # 8 groups of about 64 rows, k = 2048: every block runs the same few tile geometries (first K tile or
    # not, L1 stage 0 or 1), on 8 AICs with 4 blocks each
    x = example10_inputs(8, 512, 1024, 2048)
    _run(x)
    full, replayed = loops["full"], loops["replay"]
    assert len(set(full) | set(replayed)) == 8
    # a geometry is run through the full loop on one core only (the first to reach it), while every core
    # repeats some: per core, each of the 8 AICs would run its own first tiles in full
    assert len(full) <= 2
    assert all(replayed.get(core, 0) > 0 for core in set(full) | set(replayed))


class _EveryEvent(Observer):
    """Observes every event: the bus then offers no templates (every instruction is built and published)."""

    interests = None


def test_a_template_captured_on_one_core_replays_on_the_others(loops):
    # example 00 timing-only (fp16 tiles replay in timing-only runs; its Mmads have unit flags, so a template's
    # Mmads name the L0C of the core that captured it, which stands for the replaying core's own) at CATLASS's
    # tuner case: 16 blocks of 8 K tiles on 16 of the 24 cores. Alone, the cost model takes the tiles as
    # templates, captured on one core and replayed on every other; beside an observer of every event, every core
    # publishes every instruction. The two predictions must be the same numbers.
    example = load_script("00_basic_matmul")
    config = parse_settings(example.assemble, {"l1_tile": "64x128x128", "l0_tile": "64x128x64", "swizzle": "3,1"},
                            example_arch(example))
    options = LaunchParams(numerics=False)
    alone, logged = CostModel(), CostModel()
    example.run(["256", "512", "1024"], observers=(alone,), options=options, config=config)
    assert len(loops["full"]) == 1 and len(loops["replay"]) == 16
    loops["full"].clear()
    loops["replay"].clear()
    example.run(["256", "512", "1024"], observers=(logged, _EveryEvent()), options=options, config=config)
    assert not loops["replay"] and len(loops["full"]) == 16
    assert alone.report.cycles == logged.report.cycles and alone.report.pipe_busy == logged.report.pipe_busy
    assert alone.report.summary() == logged.report.summary()


def test_proofs_do_not_outlive_their_launch(loops):
    x = example10_inputs(8, 512, 1024, 2048)
    _run(x)
    first = sum(loops["full"].values())
    loops["full"].clear()
    loops["replay"].clear()
    _run(x)
    assert sum(loops["full"].values()) == first > 0
