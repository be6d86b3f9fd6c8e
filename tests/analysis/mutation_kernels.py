"""The kernels of the mutation tests (tests/analysis/test_mutants.py, tools/mutation_table.py): each launched
through its operator at two shapes (three for example 07), chosen so that every synchronisation of the kernel
runs and matters on some core.

Why the shapes matter. A mutant is only reported when the order it breaks is needed by the run:

* a missing, delayed or swapped *wait* of a ring (L1 A/B stages, L0A/L0B stages, UB stages, workspace slots,
  a reduce's UB stage) races only with an *earlier use* of the same stage, so every stage is used at least
  twice (most three times or more) on some core;
* swapping the two ids of a ring at one side (waits or sets only) keeps every order when every stage is used
  equally often on every core (see docs/correctness-checks.md), and leaves one id with a set too many and the
  other with a wait too many otherwise (the destructor's drain then deadlocks). So on some core each pair of
  neighbouring stages is used unequally often: an odd number of uses of the two-stage rings (L1 tiles, L0 K
  parts, epilogue tiles of one vector core, workspace blocks of one AI core), and for the four-stage L0B ring
  of example 07 uses of 1, 2 and 3 modulo 4;
* the back-pressure flag of example 07's full-size workspace (``CrossCoreFlagWithReverse``) only waits after
  15 blocks of one core, so one shape gives a core 17 blocks;
* example 07 accepts k == 0, where the epilogue zero-fills D on its own (its own synchronisation, no cube
  work): a third shape runs it;
* the split-K and stream-K reductions run one task per vector core with the examples' whole-UB
  ``COMPUTE_LENGTH``: their second shape cuts ``COMPUTE_LENGTH`` (a template parameter of the ReduceAdd, the
  same code and synchronisation) so that each vector core reduces several tasks through its one UB stage.

=====  ===============================================  ================================================
kernel shape A                                          shape B
=====  ===============================================  ================================================
10     1 core, groups of 352 and 160 rows, n=256,       2 cores, groups of 128, 0 and 200 rows, n=512,
       k=384: 5 blocks (3 L0 K parts each, 96- and      k=640 (L1 K tiles of 512 and 128): 3 blocks per
       32-row tails)                                    core, 5 L0 K parts per block
07     2 cores, groups of 128, 128, 96, 128, 64 rows,   1 core, 17 groups of 8-64 rows, n=256, k=64:
       n=256, k=320: 3 and 2 blocks of 5 L0 K parts     17 blocks (the reverse flag waits after the 15th);
                                                        and 1 core, groups of 128, 128, 96 rows, k=0:
                                                        6 and 5 zero-filled tiles per vector core
12     1 core, 608x256x384: 5 blocks                    2 cores, 256x768x640: 3 blocks per core
09     2 cores, 128x256x1216: 3 split-K slices of 2,    1 core, 128x256x1216 (one slice: 5 L1 K tiles),
       2 and 1 K tiles                                  COMPUTE_LENGTH 4096: 4 reduce tasks per AIV
37     3 cores, 640x256x704: 3 normal blocks, 2         3 cores, 128x256x320, COMPUTE_LENGTH 8192: no
       stream-K blocks over all cores (one range        normal block, one stream-K block on 2 cores
       crossing blocks)                                 (the third only signals), 4 tasks per AIV
=====  ===============================================  ================================================
"""

from __future__ import annotations

import collections
import importlib.util
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import ml_dtypes
import numpy as np

from catlass_py import ops
from catlass_py.analysis.mutants import MutantResult, automatic_equivalence, catalogue, check, record_sites
from catlass_py.arch import ATLAS_A2, Pipe
from catlass_py.arch.mutation import Mutation, SyncSite, SyncSiteRecord
from catlass_py.assemblies import grouped_matmul_slice_m_per_token_dequant as assembly10
from catlass_py.assemblies import grouped_matmul_slice_m_per_token_dequant_moe as assembly07
from catlass_py.assemblies import quant_matmul as assembly12
from catlass_py.assemblies import splitk_matmul as splitk_assembly
from catlass_py.assemblies import streamk_matmul as streamk_assembly
from catlass_py.layout import RowMajor

Runner = Callable[[object], object]


def _rng(*key) -> np.random.Generator:
    return np.random.default_rng([7, *key])


def _flagship(rows, n, k, cores) -> Runner:
    m, g = sum(rows), len(rows)
    r = _rng(10, m, n, k, cores)
    a, b = r.integers(-128, 128, (m, k), dtype=np.int8), r.integers(-128, 128, (g, k, n), dtype=np.int8)
    group_list = np.cumsum(rows).astype(np.int64)
    scale = r.uniform(0.5, 1.5, (g, n)).astype(ml_dtypes.bfloat16)
    per_token = r.uniform(0.5, 1.5, m).astype(ml_dtypes.bfloat16)
    return lambda options: ops.grouped_matmul_slice_m_per_token_dequant(
        a, b, group_list, scale, per_token, core_num=cores, options=options, return_launch=True)[1]


def _moe(rows, n, k, cores) -> Runner:
    m, g = sum(rows), len(rows)
    r = _rng(7, m, n, k, cores)
    a, b = r.integers(-128, 128, (m, k), dtype=np.int8), r.integers(-128, 128, (g, k, n), dtype=np.int8)
    group_list = np.cumsum(rows).astype(np.int32)
    scale, per_token = r.uniform(0.5, 1.5, (g, n)).astype(np.float32), r.uniform(0.5, 1.5, m).astype(np.float32)
    return lambda options: ops.grouped_matmul_slice_m_per_token_dequant_moe(
        a, b, group_list, scale, per_token, core_num=cores, options=options, return_launch=True)[1]


def _quant(m, n, k, cores) -> Runner:
    r = _rng(12, m, n, k, cores)
    a, b = r.integers(-128, 128, (m, k), dtype=np.int8), r.integers(-128, 128, (k, n), dtype=np.int8)
    scale, per_token = r.uniform(0.5, 1.5, n).astype(np.float16), r.uniform(0.5, 1.5, m).astype(np.float16)
    return lambda options: ops.quant_matmul(a, b, scale, per_token, layout_b="row_major", core_num=cores,
                                            options=options, return_launch=True)[1]


def _splitk(m, n, k, cores, compute_length=None) -> Runner:
    r = _rng(9, m, n, k, cores)
    a, b = r.uniform(-1, 1, (m, k)).astype(np.float16), r.uniform(-1, 1, (k, n)).astype(np.float16)
    kernel = None if compute_length is None else splitk_assembly.assemble(layout_b=RowMajor,
                                                                         compute_length=compute_length)
    return lambda options: ops.splitk_matmul(a, b, layout_b="row_major", core_num=cores, options=options,
                                             return_launch=True, kernel=kernel)[1]


def _streamk(m, n, k, cores, compute_length=None) -> Runner:
    r = _rng(37, m, n, k, cores)
    a, b = r.uniform(-1, 1, (m, k)).astype(np.float16), r.uniform(-1, 1, (k, n)).astype(np.float16)
    kernel = None if compute_length is None else streamk_assembly.assemble(compute_length=compute_length)
    return lambda options: ops.streamk_matmul(a, b, core_num=cores, options=options, return_launch=True,
                                              kernel=kernel)[1]


@dataclass(frozen=True)
class MutationKernel:
    """A kernel under mutation: its assembly as the operator launches it (``kernel()``, a fresh object: the
    test checks the premises of its arguments on it) and its runners, one per shape (``runners()``:
    ``run(options) -> LaunchResult``)."""

    name: str
    kernel: Callable[[], object]
    runners: Callable[[], list]


KERNELS = {k.name: k for k in (
    MutationKernel("10 grouped_matmul_slice_m_per_token_dequant",
                   lambda: assembly10.assemble(ATLAS_A2, out_dtype="bfloat16"),
                   lambda: [_flagship((352, 160), 256, 384, 1), _flagship((128, 0, 200), 512, 640, 2)]),
    MutationKernel("07 grouped_matmul_slice_m_per_token_dequant_moe",
                   lambda: assembly07.assemble(ATLAS_A2),
                   lambda: [_moe((128, 128, 96, 128, 64), 256, 320, 2),
                            _moe((8, 40, 16, 64, 24, 32, 8, 16, 64, 40, 16, 8, 24, 32, 16, 64, 40), 256, 64, 1),
                            _moe((128, 128, 96), 256, 0, 1)]),
    MutationKernel("09 splitk_matmul",
                   lambda: splitk_assembly.assemble(layout_b=RowMajor),
                   lambda: [_splitk(128, 256, 1216, 2), _splitk(128, 256, 1216, 1, compute_length=4096)]),
    MutationKernel("12 quant_matmul",
                   lambda: assembly12.assemble(ATLAS_A2, layout_b=RowMajor),
                   lambda: [_quant(608, 256, 384, 1), _quant(256, 768, 640, 2)]),
    MutationKernel("37 streamk_matmul",
                   lambda: streamk_assembly.assemble(),
                   lambda: [_streamk(640, 256, 704, 3), _streamk(128, 256, 320, 3, compute_length=8192)]),
)}
"""The five kernels of the mutation table, by example number and operator name."""


@dataclass
class KernelRun:
    """The mutants of one kernel and what reported each: ``sites`` by site, ``results`` in catalogue order."""

    name: str
    sites: dict[SyncSite, SyncSiteRecord]
    results: list[MutantResult]


def run_mutants(name: str, select: Callable[[Mutation], bool] | None = None, *,
                skip_automatic: bool = False) -> KernelRun:
    """Record the sites of kernel ``name`` on its runners, build the catalogue (only the mutants ``select``
    keeps, when given) and check every mutant; with ``skip_automatic``, not those an automatic argument already
    shows equivalent (they are then listed as not detected, which :func:`classify` turns into equivalent)."""
    runners = KERNELS[name].runners()
    sites = record_sites(runners)
    recs = {r.site: r for r in sites}
    mutants = [m for m in catalogue(sites) if select is None or select(m)]
    run = [m for m in mutants if not (skip_automatic and automatic_equivalence(m, recs))]
    found = {id(r.mutation): r for r in check(runners, run)}
    return KernelRun(name, recs, [found.get(id(m)) or MutantResult(m, None) for m in mutants])


CATEGORIES = ("RaceError", "DeadlockError", "FlagOverflowError", "UnpairedFlagError", "equivalent (automatic)",
              "equivalent (argued)", "not detected")


def classify(run: KernelRun,
             argued: Callable[[str, Mutation, dict], str | None]) -> list[tuple[MutantResult, str, str]]:
    """(result, category of :data:`CATEGORIES`, reason) of every mutant of ``run``: the error that reported it,
    else the automatic equivalence argument, else ``argued(kernel name, mutation, sites)``'s."""
    out = []
    for r in run.results:
        if r.detected:
            out.append((r, r.detected_by, r.message))
            continue
        why = automatic_equivalence(r.mutation, run.sites)
        if why:
            out.append((r, "equivalent (automatic)", why))
            continue
        why = argued(run.name, r.mutation, run.sites)
        out.append((r, "equivalent (argued)", why) if why else (r, "not detected", r.message))
    return out


def render_table(runs: list[KernelRun], classified: dict[str, list]) -> str:
    """The markdown table of docs/correctness-checks.md."""
    lines = ["| kernel | sync sites | mutants | " + " | ".join(CATEGORIES) + " |",
             "|---|" + "---:|" * (2 + len(CATEGORIES))]
    total = collections.Counter()
    for run in runs:
        by = collections.Counter(cat for _, cat, _ in classified[run.name])
        row = [len(run.sites), len(run.results)] + [by[c] for c in CATEGORIES]
        total.update(dict(enumerate(row)))
        lines.append(f"| {run.name} | " + " | ".join(str(v) for v in row) + " |")
    lines.append("| **all five** | " + " | ".join(f"**{total[i]}**" for i in range(2 + len(CATEGORIES))) + " |")
    return "\n".join(lines)


def render_equivalences(runs: list[KernelRun], classified: dict[str, list]) -> str:
    """The equivalent mutants of every kernel grouped by argument, with counts (markdown)."""
    groups: dict[tuple[str, str], collections.Counter] = {}
    for run in runs:
        for _, cat, why in classified[run.name]:
            if cat.startswith("equivalent"):
                groups.setdefault((cat, why), collections.Counter())[run.name.split()[0]] += 1
    lines = ["| kind | argument | mutants (per kernel) |", "|---|---|---|"]
    for (cat, why), counts in sorted(groups.items(), key=lambda kv: (kv[0][0], -sum(kv[1].values()), kv[0][1])):
        per = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
        lines.append(f"| {cat.split()[-1].strip('()')} | {why} | {sum(counts.values())} ({per}) |")
    return "\n".join(lines)


# -- the bug table of the pipe-model work, on the worked epilogue of docs/extending.md ---------------------------

EXTENDING = Path(__file__).resolve().parents[2] / "docs" / "extending.md"

BUGS = (
    ("AIV `SetFlag/WaitFlag<MTE2_V>` pair removed (Cast reads UB before the load lands)",
     (("drop", "SetFlag", "MTE2_V"), ("drop", "WaitFlag", "MTE2_V"))),
    ("AIV `PipeBarrier<PIPE_V>` removed between two dependent vector ops",
     (("drop", "PipeBarrier", "V"),)),
    ("AIV `SetFlag/WaitFlag<V_MTE3>` pair removed (store before the Cast that produces D)",
     (("drop", "SetFlag", "V_MTE3"), ("drop", "WaitFlag", "V_MTE3"))),
    ("AIC \"slot stored\" cross-core flag set from `PIPE_S` instead of `PIPE_FIX`",
     (("move_pipe", "CrossCoreSetFlag", "aic_set_slot_stored"),)),
    ("final drain of \"slot free\" flags removed",
     (("drop", "CrossCoreWaitFlag", "aic_drain_slot"),)),
)
"""The five synchronisation bugs the pipe model was built to catch, as edits: (action, kind of call, event type of
the epilogue's site, or the kernel method holding the cross-core site)."""


def _dequant_bias_relu_module():
    """docs/extending.md's ``dequant_bias_relu.py`` (the per-channel dequant + bias + ReLU epilogue), imported from
    a file named so (its synchronisation sites are lines of ``dequant_bias_relu.py``)."""
    doc = EXTENDING.read_text()
    code = re.search(r"<!-- file: dequant_bias_relu.py -->\n```python\n(.*?)```", doc, re.S).group(1)
    with tempfile.TemporaryDirectory(prefix="catlass_bugs_") as tmp:
        path = Path(tmp) / "dequant_bias_relu.py"
        path.write_text(code)
        spec = importlib.util.spec_from_file_location("dequant_bias_relu", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module


def _bug_runner() -> Runner:
    """Example 12's kernel (QuantMatmulMultiStageWorkspace) with the dequant + bias + ReLU epilogue, assembled as
    docs/extending.md does, on 1 AI core: 96 x 256 x 128, one block of three 32-row epilogue tiles."""
    from catlass_py.arch import GlobalBuffer
    from catlass_py.gemm import GemmCoord, GemmShape, GemmType, MmadAtlasA2PreloadAsyncWithCallback
    from catlass_py.gemm.block import BlockMmad, GemmIdentityBlockSwizzle
    from catlass_py.kernel import DeviceGemm, QuantMatmulMultiStageWorkspace
    from catlass_py.layout import VectorLayout

    ext = _dequant_bias_relu_module()
    policy = MmadAtlasA2PreloadAsyncWithCallback(preload_stages=1, l1_stages=2, l0a_stages=2, l0b_stages=2,
                                                 l0c_stages=1, enable_unit_flag=False, enable_shuffle_k=True)
    int8, int32 = GemmType("int8", RowMajor), GemmType("int32", RowMajor)
    block_mmad = BlockMmad(policy, GemmShape(128, 256, 512), GemmShape(128, 256, 128), int8, int8, int32)
    kernel = QuantMatmulMultiStageWorkspace(block_mmad, ext.BlockEpilogueDequantBiasRelu(),
                                            GemmIdentityBlockSwizzle(3, 0))
    m, n, k = 96, 256, 128
    r = _rng(99)
    a, b = r.integers(-8, 8, (m, k), dtype=np.int8), r.integers(-8, 8, (k, n), dtype=np.int8)
    scale, bias = r.uniform(0.01, 0.02, n).astype(np.float32), r.uniform(-1, 1, n).astype(np.float32)

    def run(options):
        gm = {nm: GlobalBuffer.from_array(v, nm, read_only=True).tensor(v.dtype)
              for nm, v in (("a", a), ("b", b), ("scale", scale), ("bias", bias))}
        d = np.zeros((m, n), np.float16)
        gm_d = GlobalBuffer.from_array(d, "d").tensor(d.dtype)
        params = ext.DequantBiasReluParams(gm["scale"], VectorLayout(n), gm["bias"], VectorLayout(n), gm_d,
                                           RowMajor(m, n))
        args = kernel.Arguments(GemmCoord(m, n, k), 1, gm["a"], gm["b"], None, None, None, epilogue_params=params)
        op = DeviceGemm(kernel)
        op.initialize(args)
        return op.run(1, options=options)

    return run


def bug_table() -> list[tuple[str, str, str]]:
    """(bug, error, message) of each of :data:`BUGS` planted in the worked epilogue's kernel: the error the launch
    (race detector on) raises, its first line and the line naming the missing synchronisation."""
    from catlass_py.arch import LaunchParams
    from catlass_py.arch.mutation import Edit
    from catlass_py.errors import CatlassError

    run = _bug_runner()
    sites = record_sites([run])

    def site(kind, what):
        found = [r.site for r in sites if r.site.kind == kind and (what in r.events or r.function == what)
                 and (kind.startswith("CrossCore") or r.site.file.endswith("dequant_bias_relu.py"))]
        return found[0]  # the first in source order (the barrier right after the Cast)

    rows = []
    for bug, edits in BUGS:
        mutation = Mutation(tuple(Edit(site(kind, what), action, pipe=Pipe.S if action == "move_pipe" else None)
                                  for action, kind, what in edits))
        try:
            run(LaunchParams(detect_races=True, mutation=mutation))
        except CatlassError as exc:
            lines = str(exc).splitlines()
            detail = [ln.strip() for ln in lines if ln.startswith("missing synchronisation")] or \
                [ln.strip() for ln in lines[1:2]]
            rows.append((bug, type(exc).__name__, " / ".join([lines[0]] + detail)))
        else:  # pragma: no cover - the test fails on it
            rows.append((bug, "not reported", ""))
    return rows


def render_bugs(rows) -> str:
    """The bug table of docs/correctness-checks.md."""
    lines = ["| bug planted | reported as | message (first line / missing synchronisation) |", "|---|---|---|"]
    for bug, err, msg in rows:
        lines.append(f"| {bug} | `{err}` | {msg.replace('|', '&#124;')} |")
    return "\n".join(lines)


__all__ = ["BUGS", "CATEGORIES", "KERNELS", "KernelRun", "MutationKernel", "bug_table", "classify", "render_bugs",
           "render_equivalences", "render_table", "run_mutants"]
