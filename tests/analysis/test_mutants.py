"""Mutation tests of the synchronisation checks on five kernels with cross-core and intra-core flags: every
mutant of every synchronisation call (catlass_py.analysis.mutants.catalogue) is reported by RaceError,
DeadlockError, FlagOverflowError or UnpairedFlagError on one of the kernel's shapes (two; three for example 07:
tests/analysis/mutation_kernels.py), or is equivalent: by one of the arguments of ``automatic_equivalence``, or
by an argument written below (:data:`ARGUED`), whose premise the test checks on the kernel. The whole run is
``slow`` (a minute of CPU for the five kernels); the default run checks the flagship's cross-core sites and its
per-token-dequant epilogue's intra-core sites, and the bug table. docs/correctness-checks.md publishes the table
(``python tools/mutation_table.py``), and the slow test checks that the published table is current.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Callable

import pytest
from mutation_kernels import (
    KERNELS,
    bug_table,
    classify,
    render_bugs,
    render_equivalences,
    render_table,
    run_mutants,
)

from catlass_py.analysis.mutants import automatic_equivalence, mutant_key
from catlass_py.gemm import GemmShape

FLAGSHIP = "10 grouped_matmul_slice_m_per_token_dequant"
DOC = Path(__file__).resolve().parents[2] / "docs" / "correctness-checks.md"


# -- premises ------------------------------------------------------------------------------------------


def _l0b_follows_l0a(kernel) -> str | None:
    """The L1 -> L0 loops issue one L0B copy per L0A copy, with L0A and L0B stage indices advancing together
    and at least as many L0B stages as L0A stages."""
    bm = kernel.block_mmad
    if bm.l0_tile_shape.n != bm.l1_tile_shape.n:
        return f"L0.N {bm.l0_tile_shape.n} != L1.N {bm.l1_tile_shape.n}: several L0B parts per L0A part"
    p = bm.policy
    a = getattr(p, "l0a_stages", None) or bm.stages  # the Pingpong-family blocks: STAGES of each
    b = getattr(p, "l0b_stages", None) or bm.stages
    if b < a:
        return f"{b} L0B stages < {a} L0A stages"
    return None


def _full_size_workspace(kernel) -> str | None:
    """Every C block has its own place in the workspace (no ring of slots)."""
    if getattr(kernel, "workspace_stages", 0) is not None:
        return f"a ring of {kernel.workspace_stages} workspace slots, not a full-size workspace"
    return None


@dataclass(frozen=True)
class Argued:
    """Mutants (by :func:`~catlass_py.analysis.mutants.mutant_key`) that are equivalent by ``argument`` on any
    kernel for which ``premise(kernel)`` is None; ``title`` names the argument in the published table."""

    title: str
    keys: tuple[str, ...]
    argument: str
    premise: Callable[[object], str | None]


_L0B_WAIT = "WaitFlag in {f}: ctx.wait_flag(HardEvent.M_MTE1, self.l0b_event[{i}])"
_L0B_SET = "SetFlag in {f}: ctx.set_flag(HardEvent.M_MTE1, self.l0b_event[{i}])"
_L0B_LOOPS = (("mmad_l1_tile", "self.l0b_list_id"), ("_compute", "l0b_id"))

ARGUED = (
    Argued(
        "the L0B stage events of an L1 -> L0 loop with one N part per K part: the L0A stage events already order "
        "each L0B copy",
        tuple(key for f, i in _L0B_LOOPS for key in (
            "delay " + _L0B_WAIT.format(f=f, i=i),
            "drop " + _L0B_SET.format(f=f, i=i) + " + drop " + _L0B_WAIT.format(f=f, i=i))),
        "L0B stage events of an L1 -> L0 loop with one N part per K part (L0.N == L1.N): each L1 -> L0B copy "
        "follows, on the in-order MTE1 queue, the L1 -> L0A copy of its K part, which waited (M_MTE1) for the "
        "Mmad that last read that L0A stage; the two stage indices advance together and L0B has at least as "
        "many stages, so the Mmad that last read the L0B stage is that Mmad or an earlier one on the in-order M "
        "queue, published by the same set. The L0B wait adds no order: dropped with its sets, or issued after "
        "the copy, every L0B copy still follows the last Mmad that read its stage",
        _l0b_follows_l0a,
    ),
    Argued(
        "the reverse flag of a full-size workspace carries no data: it only bounds the flag counter",
        ("delay CrossCoreWaitFlag in aic_set_block_stored: cross_core_set_flag_with_reverse(ctx, flag, 2, Pipe.FIX)",
         "move_pipe to PIPE_S CrossCoreSetFlag in aiv_wait_block_stored: "
         "cross_core_wait_flag_with_reverse(ctx, flag, 2, Pipe.MTE3)"),
        "the reverse flag of a full-size workspace only bounds the flag counter: every block has its own place "
        "in the workspace and D is the vector cores' alone, so nothing the cube core does after the reverse wait "
        "touches what the vector cores accessed before the reverse set. A delayed reverse wait still comes "
        "before the cube core's next forward set (a whole block lies between), so the counter never holds more "
        "than 15 sets (dropping the wait is a FlagOverflowError); a reverse set on PIPE_S publishes less of the "
        "vector core's work, none of which the cube core needs",
        _full_size_workspace,
    ),
)
"""The mutants no automatic argument covers and no shape can report, with why they are equivalent."""

_KERNEL_OBJECTS: dict[str, object] = {}


def _kernel(name: str):
    if name not in _KERNEL_OBJECTS:
        _KERNEL_OBJECTS[name] = KERNELS[name].kernel()
    return _KERNEL_OBJECTS[name]


def argued(name: str, mutation, sites) -> str | None:
    """The written argument that ``mutation`` of kernel ``name`` is equivalent (None if there is none, or if
    its premise does not hold for the kernel)."""
    key = mutant_key(mutation, sites)
    for a in ARGUED:
        if key in a.keys and a.premise(_kernel(name)) is None:
            return a.title
    return None


def _assert_all_reported_or_equivalent(run) -> list:
    classified = classify(run, argued)
    missed = [f"{mutant_key(r.mutation, run.sites)} ({r.mutation}): {why}" for r, cat, why in classified
              if cat == "not detected"]
    assert not missed, f"{run.name}: {len(missed)} mutant(s) neither reported nor equivalent:\n" + "\n".join(missed)
    return classified


# -- the default run: a fast subset ---------------------------------------------------------------------


def _cross_core(mutation) -> bool:
    return all(e.site.kind.startswith("CrossCore") for e in mutation.edits)


def _in_epilogue(mutation) -> bool:
    return all(e.site.file.endswith("epilogue/block/per_token_dequant.py") for e in mutation.edits)


def test_flagship_cross_core_mutants_are_reported():
    run = run_mutants(FLAGSHIP, _cross_core, skip_automatic=True)
    classified = _assert_all_reported_or_equivalent(run)
    cats = {cat for _, cat, _ in classified}
    assert len(run.results) >= 15 and {"RaceError", "DeadlockError", "UnpairedFlagError"} <= cats
    # swapping the two workspace slots' flag ids is reported (on the shape with an odd number of blocks per core)
    swaps = [(r, cat) for r, cat, _ in classified if r.mutation.edits[0].action == "swap_ids"
             and r.mutation.edits[0].site.kind == "CrossCoreSetFlag"]
    assert swaps and all(r.detected for r, _ in swaps)


def test_flagship_epilogue_intra_core_mutants_are_reported():
    run = run_mutants(FLAGSHIP, _in_epilogue, skip_automatic=True)
    classified = _assert_all_reported_or_equivalent(run)
    assert len(run.results) >= 50
    assert {cat for _, cat, _ in classified} >= {"RaceError", "DeadlockError", "UnpairedFlagError"}


# -- the whole table ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def all_runs():
    runs = [run_mutants(name) for name in KERNELS]
    return runs, {run.name: classify(run, argued) for run in runs}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(KERNELS))
def test_every_mutant_is_reported_or_equivalent(all_runs, name):
    runs, _ = all_runs
    (run,) = [r for r in runs if r.name == name]
    _assert_all_reported_or_equivalent(run)


@pytest.mark.slow
def test_no_mutant_an_argument_calls_equivalent_is_reported(all_runs):
    # the arguments are sound on these kernels: a reported mutant changed an order, so no argument may cover it
    runs, _ = all_runs
    wrong = [f"{run.name}: {mutant_key(r.mutation, run.sites)}" for run in runs for r in run.results if r.detected
             and (automatic_equivalence(r.mutation, run.sites) or argued(run.name, r.mutation, run.sites))]
    assert not wrong, "reported, yet argued equivalent:\n" + "\n".join(wrong)


@pytest.mark.slow
def test_every_written_argument_is_used_and_its_premise_holds(all_runs):
    runs, classified = all_runs
    used = {mutant_key(r.mutation, run.sites) for run in runs for r, cat, _ in classified[run.name]
            if cat == "equivalent (argued)"}
    for a in ARGUED:
        assert used & set(a.keys), f"no kernel needs the argument {a.title!r}"
    for run in runs:
        for r, cat, _ in classified[run.name]:
            if cat == "equivalent (argued)":
                (a,) = [a for a in ARGUED if mutant_key(r.mutation, run.sites) in a.keys]
                assert a.premise(_kernel(run.name)) is None


@pytest.mark.slow
def test_the_published_table_is_current(all_runs):
    runs, classified = all_runs
    for block, text in (("table", render_table(runs, classified)),
                        ("equivalences", render_equivalences(runs, classified))):
        assert _doc_block(block) == text, f"docs/correctness-checks.md: the mutation {block} is stale; regenerate " \
                                          "it with python tools/mutation_table.py --write"


def _doc_block(name: str) -> str:
    m = re.search(rf"<!-- mutation-{name}:begin -->\n(.*?)\n<!-- mutation-{name}:end -->", DOC.read_text(), re.S)
    assert m, f"docs/correctness-checks.md has no mutation-{name} block"
    return m.group(1)


def test_the_bugs_the_pipe_model_was_built_for_are_reported_and_published():
    rows = bug_table()
    assert [err for _, err, _ in rows] == ["RaceError"] * 4 + ["UnpairedFlagError"]
    assert "no SetFlag<MTE2_V>/WaitFlag<MTE2_V> between CopyGm2Ub (PIPE_MTE2) and Cast (PIPE_V)" in rows[0][2]
    assert "no PipeBarrier<PIPE_V> between Cast (PIPE_V) and TileRowBroadcastMul (PIPE_V)" in rows[1][2]
    assert "no SetFlag<V_MTE3>/WaitFlag<V_MTE3> between Cast (PIPE_V) and CopyUb2Gm (PIPE_MTE3)" in rows[2][2]
    assert "issue the set on PIPE_FIX (CrossCoreSetFlag<mode, PIPE_FIX>)" in rows[3][2]
    assert "unconsumed set(s) of cross-core flag 1" in rows[4][2]
    assert _doc_block("bugs") == render_bugs(rows), \
        "docs/correctness-checks.md: the bug table is stale; regenerate it with python tools/mutation_table.py --write"


def test_the_written_arguments_do_not_cover_a_kernel_outside_their_premise():
    def kernel(l0_n=256, l0a=2, l0b=2, workspace_stages=None):
        policy = SimpleNamespace(l0a_stages=l0a, l0b_stages=l0b)
        block_mmad = SimpleNamespace(l0_tile_shape=GemmShape(128, l0_n, 64), l1_tile_shape=GemmShape(128, 256, 256),
                                     policy=policy)
        return SimpleNamespace(block_mmad=block_mmad, workspace_stages=workspace_stages)

    assert _l0b_follows_l0a(kernel()) is None and _l0b_follows_l0a(kernel(l0b=4)) is None
    assert "several L0B parts per L0A part" in _l0b_follows_l0a(kernel(l0_n=128))
    assert "L0B stages" in _l0b_follows_l0a(kernel(l0a=4))
    assert _full_size_workspace(kernel()) is None and "ring" in _full_size_workspace(kernel(workspace_stages=2))
    # the flagship has a ring of workspace slots: the reverse-flag argument never applies to it
    assert _l0b_follows_l0a(_kernel(FLAGSHIP)) is None and _full_size_workspace(_kernel(FLAGSHIP)) is not None
