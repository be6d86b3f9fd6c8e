"""Every instruction declares the bytes it writes (and reads something when it consumes data).

An independent check of the access records behind the pipe model (docs/correctness-checks.md). :class:`AccessAuditor` keeps a
byte copy of every on-chip buffer of every core of a launch and of every writable GM buffer. At each
instruction event it diffs them against the copies: every byte that changed since the previous instruction
event must lie inside one of the event's declared writes (``local_writes`` for the buffers of the event's
core, ``gm_writes`` for GM); then the copies are refreshed. The simulator runs one core at a time and each tile
operation publishes its event right after its data movement, so the bytes that changed between two events are
the bytes the later instruction wrote (or bytes written outside any instruction, which fail as well). It also
checks that every declared access lies inside its buffer and names a buffer of the event's own core, that
every instruction has one pipe, and that an instruction that moves or computes data declares what it reads.

Coverage: every shipped example at a small shape (more shapes under ``-m slow``), every operator of
:mod:`catlass_py.ops`, and the tile operations at the level of the tile unit tests. The tile scenarios check
more: no over-declaration (each runs twice, with the buffers poisoned with two different bytes and every
source filled with random bytes; every declared written byte must change in at least one of the two runs, as
a written value equals at most one of the two poisons), and the read side (a third run replaces every byte
outside the instruction's declared reads with random bytes right before it; the written values must not
change).

The buffers are found through a test-only registry: a fixture wraps ``LocalArena.__init__`` and
``GlobalBuffer.__init__`` to remember every buffer created during the test; the auditor takes the arenas whose
core context publishes to a bus it observes.
"""

from __future__ import annotations

import importlib
import warnings
from collections import defaultdict

import ml_dtypes
import numpy as np
import pytest

from catlass_py.arch import ASCEND_950, ATLAS_A2, GlobalBuffer, InstructionEvent, Observer, standalone_core
from catlass_py.arch.memory import LocalArena
from catlass_py.arch.pipes import Pipe
from catlass_py.gemm import GemmType
from catlass_py.layout import ColumnMajor, PaddingRowMajor, RowMajor, VectorLayout, nZ, zN
from catlass_py.numerics.rounding import RoundMode

#: Instructions that consume nothing: fills and the atomic-mode switches.
NO_SOURCE_OPS = frozenset({"Duplicate", "SetAtomicAdd", "SetAtomicNone"})


# -- the registry of buffers --------------------------------------------------------------------------------


class Registry:
    """Every on-chip arena and GM buffer created while the fixture is active."""

    def __init__(self):
        self.arenas: list[LocalArena] = []
        self.buffers: list[GlobalBuffer] = []


@pytest.fixture
def registry(monkeypatch):
    reg = Registry()
    arena_init, buffer_init = LocalArena.__init__, GlobalBuffer.__init__

    def track_arena(self, *args, **kwargs):
        arena_init(self, *args, **kwargs)
        reg.arenas.append(self)

    def track_buffer(self, *args, **kwargs):
        buffer_init(self, *args, **kwargs)
        reg.buffers.append(self)

    monkeypatch.setattr(LocalArena, "__init__", track_arena)
    monkeypatch.setattr(GlobalBuffer, "__init__", track_buffer)
    return reg


# -- the auditor ---------------------------------------------------------------------------------------------


def _mask(size: int, accesses, buffer_id: int) -> np.ndarray:
    """Bytes of a ``size``-byte memory covered by the accesses to ``buffer_id``."""
    need = size
    for a in accesses:
        if a.buffer_id == buffer_id and a.count and a.length:
            need = max(need, a.start + a.count * max(a.stride, a.length))
    mask = np.zeros(need, bool)
    for a in accesses:
        if a.buffer_id != buffer_id or not a.count or not a.length:
            continue
        if a.count == 1 or a.length >= a.stride:
            mask[a.start:a.end] = True
        else:
            mask[a.start:a.start + a.count * a.stride].reshape(a.count, a.stride)[:, :a.length] = True
    return mask[:size]


class AccessAuditor(Observer):
    """Diffs every tracked buffer at every instruction event against the event's declared writes.

    ``failures`` collects the violations (the launch goes on); ``verified`` counts, per memory space, the
    changed bytes found inside declared writes. With ``details`` it also keeps, per instruction, the
    declared written bytes that did not change, the declared read bytes and the values written (for the
    tightness and read checks of the tile scenarios).
    """

    interests = None

    def __init__(self, registry: Registry, *, details: bool = False):
        self.registry = registry
        self.failures: list[str] = []
        self.verified: dict[str, int] = defaultdict(int)
        self.events = 0
        self.ops: list[str] = []
        self.instructions: list[InstructionEvent] = []
        #: per instruction (with details): declared written bytes that did not change, the declared
        #: read bytes per memory label and the values of the declared written bytes after the instruction
        self.unchanged: list[set] = []
        self.read_masks: list[dict] = []
        self.written: list[dict] = []
        self.details = details
        self._arenas: dict = defaultdict(dict)  # core -> {arena id: (arena, copy)}
        self._arena_seen = 0
        self._buffers: dict[int, tuple] = {}  # GM buffer id -> (buffer, copy or None for read-only)
        self._buffer_seen = 0

    # -- buffers -------------------------------------------------------------------------------------------
    def _scan(self) -> None:
        arenas, buffers = self.registry.arenas, self.registry.buffers
        for arena in arenas[self._arena_seen:]:
            ctx = arena.ctx
            if ctx is not None and self in ctx.bus.observers:
                self._arenas[ctx.core][arena.id] = (arena, arena.raw.copy())
        self._arena_seen = len(arenas)
        for buf in buffers[self._buffer_seen:]:
            self._buffers[buf.id] = (buf, None if buf.read_only else buf.raw.copy())
        self._buffer_seen = len(buffers)

    def sync(self) -> None:
        """Accept the current contents of every buffer (after host-side setup)."""
        self._scan()
        for per_core in self._arenas.values():
            for arena, copy in per_core.values():
                copy[:] = arena.raw
        for buf, copy in self._buffers.values():
            if copy is not None:
                copy[:] = buf.raw

    def on_launch_start(self, launch_info) -> None:
        # The cores of this launch were created just before it starts; forget those of earlier launches (the
        # same core ids, other contexts).
        self._arenas.clear()
        self.sync()

    def on_launch_end(self, launch_info, error) -> None:
        if error is None:
            self._diff(None)

    # -- checks --------------------------------------------------------------------------------------------
    def _fail(self, e, msg: str) -> None:
        where = f"{e.core.short} {e.op} ({e.pipe})" if e is not None else "after the last instruction"
        if len(self.failures) < 50:
            self.failures.append(f"{where}: {msg}")

    def on_event(self, e) -> None:
        if not isinstance(e, InstructionEvent):
            return
        self.events += 1
        self.ops.append(e.op)
        self.instructions.append(e)
        self._scan()
        if not isinstance(e.pipe, Pipe) or e.pipe is Pipe.ALL:
            self._fail(e, f"no single pipe: {e.pipe!r}")
        own = self._arenas.get(e.core, {})
        for kind, accesses in (("read", e.local_reads), ("write", e.local_writes)):
            for a in accesses:
                if a.space == "REG":
                    if not a.buffer.startswith("register ") or not a.buffer.endswith(e.core.short):
                        self._fail(e, f"declares a register of another core: {a}")
                    continue
                if a.buffer_id not in own:
                    self._fail(e, f"declares a local {kind} in a buffer that is not one of {e.core.short}'s: {a}")
                    continue
                arena = own[a.buffer_id][0]
                if a.space != arena.name or (a.count and (a.start < 0 or a.end > arena.size)):
                    self._fail(e, f"local {kind} {a} outside {arena.label} ({arena.size} B) or in the wrong space")
        for kind, accesses in (("read", e.gm_reads), ("write", e.gm_writes)):
            for a in accesses:
                entry = self._buffers.get(a.buffer_id)
                if entry is None:
                    self._fail(e, f"GM {kind} of an unknown buffer: {a}")
                elif a.space != "GM" or (a.count and a.length and (a.start < 0 or a.end > entry[0].nbytes)):
                    self._fail(e, f"GM {kind} {a} outside {entry[0].name!r} ({entry[0].nbytes} B)")
                elif kind == "write" and entry[1] is None:
                    self._fail(e, f"GM write to the read-only buffer {entry[0].name!r}")
        if e.op not in NO_SOURCE_OPS and (e.nbytes or e.flops):
            if not any(a.count and a.length for a in e.gm_reads + e.local_reads):
                self._fail(e, "moves or computes data but declares no read")
        self._diff(e)

    def _diff(self, e) -> None:
        record = self.details and e is not None
        unchanged, written, reads = set(), {}, {}
        cores = [e.core] if e is not None else list(self._arenas)
        for core in cores:
            declared = e.local_writes if e is not None else ()
            for aid, (arena, copy) in self._arenas.get(core, {}).items():
                self._check_memory(e, arena.raw, copy, declared, aid, arena.name, arena.label, record and unchanged,
                                   written)
                if record and any(a.buffer_id == aid for a in e.local_reads):
                    reads[arena.label] = _mask(arena.size, e.local_reads, aid)
        declared = e.gm_writes if e is not None else ()
        for bid, (buf, copy) in self._buffers.items():
            if copy is not None:
                self._check_memory(e, buf.raw, copy, declared, bid, "GM", repr(buf.name), record and unchanged,
                                   written)
            if record and any(a.buffer_id == bid for a in e.gm_reads):
                reads[repr(buf.name)] = _mask(buf.nbytes, e.gm_reads, bid)
        if record:
            self.unchanged.append(unchanged)
            self.written.append(written)
            self.read_masks.append(reads)

    def _check_memory(self, e, raw, copy, declared, mem_id, space, label, unchanged, written) -> None:
        touched = any(a.buffer_id == mem_id for a in declared)
        changed = np.flatnonzero(raw != copy)
        if not changed.size and not (touched and unchanged is not False):
            return
        mask = _mask(raw.size, declared, mem_id) if touched else np.zeros(raw.size, bool)
        if changed.size:
            bad = changed[~mask[changed]]
            if bad.size:
                self._fail(e, f"wrote {bad.size} undeclared byte(s) of {label}, first at {bad[:6].tolist()}; "
                              f"declared writes: {[a for a in declared if a.buffer_id == mem_id]}")
            self.verified[space] += int(changed.size - bad.size)
            copy[changed] = raw[changed]
        if unchanged is not False and touched:
            still = mask.copy()
            still[changed] = False
            unchanged.update((label, int(i)) for i in np.flatnonzero(still))
            written[label] = (np.flatnonzero(mask), raw[mask].copy())


def assert_clean(aud: AccessAuditor, *, spaces=()) -> None:
    assert aud.events, "no instruction event was observed"
    assert not aud.failures, "\n".join(aud.failures)
    missing = [s for s in spaces if not aud.verified.get(s)]
    assert not missing, f"no verified write in {missing} (verified: {dict(aud.verified)})"


# -- shipped examples and operators --------------------------------------------------------------------------

#: example -> (positional args, cores) cases; the first runs by default, the rest under -m slow
EXAMPLES = {
    "00_basic_matmul": [(["130", "260", "100"], 2), (["128", "256", "64"], 3)],
    "01_batched_matmul": [(["2", "130", "100", "40"], 2)],
    "02_grouped_matmul_slice_m": [(["3", "150", "200", "100"], 2), (["4", "200", "100", "300"], 3)],
    "03_matmul_add": [(["150", "260", "64"], 2), (["100", "300", "40"], 3)],
    "05_grouped_matmul_slice_k": [(["3", "130", "200", "300"], 2), (["5", "64", "100", "40"], 3)],
    "06_optimized_matmul": [(["150", "200", "100"], 2), (["100", "300", "256"], 3)],
    "07_grouped_matmul_slice_m_per_token_dequant_moe": [(["3", "150", "300", "100"], 2),
                                                        (["4", "100", "200", "64"], 3)],
    "08_grouped_matmul": [(["3", "100", "300", "100"], 2), (["4", "100", "100", "64"], 3)],
    "09_splitk_matmul": [(["130", "200", "600"], 2), (["64", "64", "1100"], 3)],
    "10_grouped_matmul_slice_m_per_token_dequant": [(["3", "150", "300", "100"], 2), (["5", "260", "520", "64"], 3),
                                                    (["2", "128", "256", "600"], 1)],
    "11_grouped_matmul_slice_k_per_token_dequant": [(["3", "130", "300", "300"], 2), (["4", "64", "100", "40"], 3)],
    "12_quant_matmul": [(["150", "300", "100"], 2), (["100", "64", "64"], 1)],
    "19_mla": [(["2", "1,2", "200,300", "8", "8", "128"], 2), (["1", "1", "1200", "8", "10", "128"], 2),
               (["1", "3", "300", "16", "3", "128", "--dtype", "bf16"], 3)],
    "14_optimized_matmul_tla": [(["150", "200", "100"], 2), (["256", "300", "512"], 3)],
    "20_matmul_bias": [(["150", "260", "100"], 2), (["64", "300", "40"], 3)],
    "21_basic_matmul_preload_zN": [(["150", "256", "96"], 2), (["40", "288", "320"], 3)],
    "23_flash_attention_infer": [(["1", "20", "130", "2", "1", "32", "0", "1"], 2),
                                 (["2", "20", "300", "4", "2", "128", "1", "1", "--dtype", "bf16"], 3),
                                 (["2", "130", "200", "2", "2", "64", "1", "0"], 2)],
    "26_matmul_relu": [(["150", "200", "100"], 2), (["100", "300", "256"], 3)],
    "27_matmul_gelu": [(["150", "260", "64"], 2), (["100", "300", "40"], 3)],
    "28_matmul_silu": [(["100", "300", "40"], 2)],
    "34_single_core_splitk_matmul": [(["150", "200", "600"], 2), (["100", "300", "100"], 3)],
    "37_streamk_matmul": [(["300", "200", "600"], 2), (["150", "200", "600"], 2), (["260", "520", "100"], 3),
                          (["128", "256", "1100"], 4)],
    "13_basic_matmul_tla": [(["130", "260", "100"], 2), (["1", "300", "600"], 3)],
    "41_sparse_matmul_tla": [(["144", "304", "200"], 3), (["1", "40", "72"], 1)],
    "42_quant_optimized_matmul_tla": [(["150", "300", "600"], 3), (["256", "256", "512"], 2)],
    "44_quant_matmul_full_loadA_tla": [(["300", "520", "600"], 3), (["100", "64", "2000"], 2)],
    "45_strided_batched_matmul_tla": [(["2", "130", "100", "40", "0", "45", "110", "101"], 2),
                                      (["2", "1", "300", "600", "0", "col", "row"], 3)],
    "52_quant_multi_core_splitk_matmul_tla": [(["150", "300", "600"], 8), (["100", "64", "2000"], 20)],
    "transpose_quant_batch_matmul": [(["8", "128", "64", "3"], 2),
                                     (["20", "64", "300", "2", "e5m2", "fp16", "021"], 3)],
}

CASES = [pytest.param(name, args, cores, i == 0, id=f"{name}-{'x'.join(args)}-c{cores}",
                      marks=() if i == 0 else (pytest.mark.slow,))
         for name, cases in EXAMPLES.items() for i, (args, cores) in enumerate(cases)]


def test_every_shipped_example_is_covered():
    from catlass_py.cli import example_names

    assert sorted(EXAMPLES) == example_names()


#: memories every matmul example writes, and the examples whose first case also writes UB (vector cores: epilogues,
#: reductions, padding) or BT (bias)
CUBE_SPACES = ("GM", "L1", "L0A", "L0B", "L0C")
EXTRA_SPACES = {
    "UB": {"03", "06", "07", "09", "10", "11", "12", "14", "19", "23", "26", "27", "28", "34", "37", "42", "44", "52"},
    "BT": {"20"},
}


@pytest.mark.parametrize("name,args,cores,first", CASES)
def test_example_declares_every_write(registry, name, args, cores, first, monkeypatch):
    from catlass_py.gemm.block.block_mmad_instance import BlockMmadInstance

    # An exact integer L1 tile computes its product inside its last Mmad, and its L1 -> L0 loads move no bytes
    # (BlockMmadInstance.mmad_l1_tile): when every tile of a run is such a tile, no L0A/L0B write can be verified.
    tiles = {"fused": 0, "moved": 0}
    fused_product = BlockMmadInstance._fused_product

    def counted(self, *args):
        plan = fused_product(self, *args)
        tiles["moved" if plan is None else "fused"] += 1
        return plan

    monkeypatch.setattr(BlockMmadInstance, "_fused_product", counted)
    aud = AccessAuditor(registry)
    ex = importlib.import_module(f"catlass_py.examples.{name}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = ex.run(args, cores=cores, observers=(aud,))
    assert res.passed
    extra = tuple(space for space, names in EXTRA_SPACES.items() if first and name[:2] in names)
    spaces = CUBE_SPACES if tiles["moved"] or not tiles["fused"] else ("GM", "L1", "L0C")
    assert_clean(aud, spaces=spaces + extra)


def _f16(rng, *shape):
    return rng.uniform(-2, 2, size=shape).astype(np.float16)


def _i8(rng, *shape):
    return rng.integers(-128, 128, size=shape, dtype=np.int8)


def _bf16(rng, *shape):
    return rng.uniform(0.5, 1.5, size=shape).astype(np.float32).astype(ml_dtypes.bfloat16)


def _prefix(rng, g, total):
    cuts = np.sort(rng.integers(0, total + 1, size=g))
    cuts[-1] = min(cuts[-1], total)
    return cuts.astype(np.int64)


def _op_cases():
    from catlass_py import ops
    from catlass_py.ops.transpose_quant_batch_matmul import make_inputs

    r = np.random.default_rng(1)
    a, b = _f16(r, 100, 90), _f16(r, 90, 150)
    x = _f16(r, 100, 150)
    ab = _f16(r, 2, 70, 40), _f16(r, 2, 40, 90)
    a8, b8 = _i8(r, 100, 90), _i8(r, 90, 150)
    gm_b = _f16(r, 3, 90, 150)
    gl_m, gl_k = _prefix(r, 3, 100), _prefix(r, 3, 90)
    b8g = _i8(r, 3, 90, 150)
    scale_g, pts = _bf16(r, 3, 150), _bf16(r, 100)
    f16_scale, f16_pts = r.uniform(0.5, 1.5, 150).astype(np.float16), r.uniform(0.5, 1.5, 100).astype(np.float16)
    f32_scale_g, f32_pts = r.uniform(0.5, 1.5, (3, 150)).astype(np.float32), r.uniform(0.5, 1.5, 100).astype(np.float32)
    k_scale, k_pts = _bf16(r, 3, 150), _bf16(r, 3, 100)
    bias = _f16(r, 150)
    a_list = [_f16(r, 100, 64), _f16(r, 30, 100)]
    b_list = [_f16(r, 64, 100), _f16(r, 100, 40)]
    tq = make_inputs(12, 128, 80, 2, in_dtype="e4m3", out_dtype="float16")
    fa_q, fa_kv = _f16(r, 10, 2, 32), _f16(r, 60, 1, 32)
    fa_paged = _f16(r, 3, 128, 1, 32), _f16(r, 3, 128, 1, 32)
    fa_table = np.array([[2, 0], [1, -1]], np.int32)
    mla_q, mla_q_rope = _f16(r, 3, 4, 512), _f16(r, 3, 4, 64)
    mla_k, mla_k_rope = _f16(r, 3, 128, 1, 512), _f16(r, 3, 128, 1, 64)
    sparse_b = _i8(r, 88, 150) * (r.random((22, 4, 150)).argsort(axis=1) < 2).reshape(88, 150).astype(np.int8)
    return {
        "basic_matmul": lambda o: ops.basic_matmul(a, b, core_num=3, observers=o),
        "basic_matmul int8 column": lambda o: ops.basic_matmul(a8, b8, layout_a="column", core_num=2, observers=o),
        "basic_matmul_preload_zn": lambda o: ops.basic_matmul_preload_zn(a, b, core_num=3, observers=o),
        "basic_matmul_tla": lambda o: ops.basic_matmul_tla(a, b, core_num=3, observers=o),
        "basic_matmul_tla int8 column": lambda o: ops.basic_matmul_tla(a8, b8, layout_b="column", core_num=2,
                                                                        observers=o),
        "batched_matmul": lambda o: ops.batched_matmul(*ab, core_num=3, observers=o),
        "flash_attention_infer": lambda o: ops.flash_attention_infer(
            fa_q, fa_kv, fa_kv[::-1], actual_seq_lengths=[6, 4], actual_seq_lengths_kv=[40, 20], core_num=2,
            observers=o),
        "flash_attention_infer paged causal": lambda o: ops.flash_attention_infer(
            fa_q[:3], *fa_paged, block_table=fa_table, actual_seq_lengths=[2, 1], actual_seq_lengths_kv=[200, 90],
            mask="causal", core_num=2, observers=o),
        "grouped_matmul": lambda o: ops.grouped_matmul(a_list, b_list, core_num=3, observers=o),
        "grouped_matmul_slice_k": lambda o: ops.grouped_matmul_slice_k(x[:, :90], a[:90, :], gl_k, core_num=2,
                                                                       observers=o),
        "grouped_matmul_slice_m": lambda o: ops.grouped_matmul_slice_m(a, gm_b, gl_m, core_num=3, observers=o),
        "grouped_matmul_slice_m_per_token_dequant": lambda o: ops.grouped_matmul_slice_m_per_token_dequant(
            a8, b8g, gl_m, scale_g, pts, core_num=3, observers=o),
        "grouped_matmul_slice_m_per_token_dequant_moe": lambda o: ops.grouped_matmul_slice_m_per_token_dequant_moe(
            a8, b8g, gl_m.astype(np.int32), f32_scale_g, f32_pts, core_num=3, observers=o),
        "grouped_matmul_slice_k_per_token_dequant": lambda o: ops.grouped_matmul_slice_k_per_token_dequant(
            a8, b8, gl_k, k_scale, k_pts, core_num=3, observers=o),
        "matmul_add": lambda o: ops.matmul_add(a, b, x, core_num=3, observers=o),
        "matmul_bias": lambda o: ops.matmul_bias(a, b, bias, core_num=3, observers=o),
        "matmul_gelu": lambda o: ops.matmul_gelu(a, b, core_num=3, observers=o),
        "mla": lambda o: ops.mla(mla_q, mla_q_rope, mla_k, mla_k_rope, np.array([[1, 0], [2, -1]], np.int32),
                                 actual_seq_lengths=[1, 2], actual_seq_lengths_kv=[250, 100], core_num=2, observers=o),
        "matmul_silu": lambda o: ops.matmul_silu(a, b, core_num=2, observers=o),
        "matmul_relu": lambda o: ops.matmul_relu(a, b, core_num=3, observers=o),
        "matmul_relu padded": lambda o: ops.matmul_relu(a[:, :70], b[:70, :], layout_b="row", core_num=2,
                                                        observers=o),
        "optimized_matmul_tla padded": lambda o: ops.optimized_matmul_tla(a, b, core_num=3, observers=o),
        "optimized_matmul padded": lambda o: ops.optimized_matmul(a, b, core_num=3, observers=o),
        "quant_matmul": lambda o: ops.quant_matmul(a8, b8, f16_scale, f16_pts, core_num=3, observers=o),
        "quant_matmul_full_load_a_tla": lambda o: ops.quant_matmul_full_load_a_tla(
            a8, b8, f32_scale_g[0], f32_pts, core_num=3, observers=o),
        "quant_optimized_matmul_tla": lambda o: ops.quant_optimized_matmul_tla(
            a8, b8, f32_scale_g[0], f32_pts, core_num=3, observers=o),
        "quant_multi_core_splitk_matmul_tla": lambda o: ops.quant_multi_core_splitk_matmul_tla(
            a8, b8, f32_scale_g[0], f32_pts, core_num=8, observers=o),
        "strided_batched_matmul_tla": lambda o: ops.strided_batched_matmul_tla(*ab, layout_a="column", lda=80,
                                                                               core_num=3, observers=o),
        "sparse_matmul_tla": lambda o: ops.sparse_matmul_tla(a8[:, :88], sparse_b, core_num=3, observers=o),
        "single_core_splitk_matmul": lambda o: ops.single_core_splitk_matmul(a, b, core_num=3, observers=o),
        "splitk_matmul": lambda o: ops.splitk_matmul(a, b, core_num=3, observers=o),
        "splitk_matmul fp32 out": lambda o: ops.splitk_matmul(a, b, out_dtype="float32", core_num=2, observers=o),
        "streamk_matmul": lambda o: ops.streamk_matmul(a, b, core_num=3, observers=o),
        "transpose_quant_batch_matmul": lambda o: ops.transpose_quant_batch_matmul(*tq, out_dtype="float16",
                                                                                  core_num=3, observers=o),
    }


OP_NAMES = ["quant_optimized_matmul_tla",
            "optimized_matmul_tla padded",
            "quant_matmul_full_load_a_tla",
            "quant_multi_core_splitk_matmul_tla",
            "strided_batched_matmul_tla",
            "basic_matmul_tla", "basic_matmul_tla int8 column",
            "basic_matmul", "basic_matmul int8 column", "basic_matmul_preload_zn", "batched_matmul",
            "flash_attention_infer", "flash_attention_infer paged causal", "grouped_matmul", "grouped_matmul_slice_k",
            "grouped_matmul_slice_m", "grouped_matmul_slice_m_per_token_dequant",
            "grouped_matmul_slice_m_per_token_dequant_moe", "grouped_matmul_slice_k_per_token_dequant", "matmul_add",
            "matmul_bias", "matmul_gelu", "matmul_silu", "matmul_relu", "mla", "matmul_relu padded",
            "optimized_matmul padded", "quant_matmul", "single_core_splitk_matmul", "sparse_matmul_tla", "splitk_matmul",
            "splitk_matmul fp32 out", "streamk_matmul", "transpose_quant_batch_matmul"]


def test_every_operator_is_covered():
    from catlass_py import ops

    names = {n.split()[0] for n in OP_NAMES}
    public = {n for n in ops.__all__ if callable(getattr(ops, n)) and not n[0].isupper()}
    assert public <= names, sorted(public - names)


@pytest.mark.parametrize("label", OP_NAMES)
def test_operator_declares_every_write(registry, label):
    aud = AccessAuditor(registry)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _op_cases()[label]((aud,))
    assert_clean(aud, spaces=("GM",))


# -- tile operations: completeness and tightness -------------------------------------------------------------

POISONS = (0xFF, 0x00)


class Env:
    """What a tile scenario builds its operands with, for one run: cores poisoned with ``poison``, GM outputs
    filled with it, sources filled with random data (the same in both runs)."""

    def __init__(self, registry: Registry, aud: AccessAuditor, poison: int, keep: dict | None = None):
        self.registry, self.aud, self.poison = registry, aud, poison
        self.rng = np.random.default_rng(2024)
        self._cores = {}
        self._first_arena, self._first_buffer = len(registry.arenas), len(registry.buffers)
        #: with ``keep`` (memory label -> mask of the bytes an instruction declared it reads), :meth:`go`
        #: overwrites every other byte of the scenario's memories with random bytes
        self.keep = keep

    def core(self, kind: str, arch=ATLAS_A2):
        key = (kind, arch.name)
        if key not in self._cores:
            self._cores[key] = standalone_core(arch, kind, observers=(self.aud,), poison=self.poison)
        return self._cores[key]

    def fill(self, tensor, dtype=None) -> None:
        """Random contents for a whole source arena (finite values when it holds floats)."""
        raw = tensor.arena.raw
        raw[:] = self.rng.integers(0, 256, raw.size, dtype=np.uint8)
        dt = np.dtype({"float16": np.float16, "float32": np.float32, "bfloat16": ml_dtypes.bfloat16}.get(
            str(dtype or tensor.dtype), np.uint8))
        if dt.kind == "f" or dt == np.dtype(ml_dtypes.bfloat16):
            n = raw.size // dt.itemsize
            raw[:n * dt.itemsize].view(dt)[:] = self.rng.standard_normal(n).astype(np.float32).astype(dt)

    def gm_in(self, array, name: str = "src"):
        return GlobalBuffer.from_array(np.ascontiguousarray(array), name, read_only=True)

    def gm_out(self, nbytes: int, name: str = "dst"):
        return GlobalBuffer.empty(nbytes, name, fill=self.poison)

    def rand(self, dtype, shape):
        if dtype in ("int8", "int32"):
            info = np.iinfo(dtype)
            return self.rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)
        npd = {"float16": np.float16, "float32": np.float32, "bfloat16": ml_dtypes.bfloat16}[dtype]
        return self.rng.standard_normal(shape).astype(np.float32).astype(npd)

    def go(self) -> None:
        """Setup done: the auditor accepts the buffers as they are (after the perturbation, with ``keep``)."""
        if self.keep is not None:
            noise = np.random.default_rng(99)
            memories = [(a.label, a.raw) for a in self.registry.arenas[self._first_arena:]]
            # a read-only GM buffer wraps the host array: perturb it through that array
            memories += [(repr(b.name), b._host.reshape(-1).view(np.uint8) if b.read_only else b.raw)
                         for b in self.registry.buffers[self._first_buffer:]]
            for label, raw in memories:
                keep = self.keep.get(label)
                new = noise.integers(0, 256, raw.size, dtype=np.uint8)
                if keep is not None:
                    new[keep] = raw[keep]
                raw[:] = new
        self.aud.sync()


def _gm_to_l1(gm_layout, dtype="float16", rows=20, cols=40, cls_name="CopyGmToL1"):
    def scenario(env: Env):
        from catlass_py import tile

        c0 = 32 * 8 // {"int8": 8, "float16": 16, "float32": 32}[dtype]
        ctx = env.core("AIC")
        l1 = ctx.resource.l1_buf.get_buffer_by_byte(dtype, 1024)
        if gm_layout is RowMajor:
            ld = cols + 9
            host, src_layout, l1_layout = env.rand(dtype, (rows + 3, ld)), RowMajor(rows, cols, ld), zN
            off = 2 * ld + 3
        elif gm_layout is ColumnMajor:
            ld = rows + 7
            host, src_layout, l1_layout = env.rand(dtype, (cols + 3, ld)), ColumnMajor(rows, cols, ld), nZ
            off = 2 * ld + 3
        elif gm_layout is PaddingRowMajor:
            host, src_layout, l1_layout = env.rand(dtype, (4 * 32 * 64,)), PaddingRowMajor(70, 100, 32, 64), zN
            src_layout, off = src_layout.get_tile_layout(rows, cols), 0
        else:  # zN / nZ GM operands: a whole fractal-aligned tile of a bigger matrix
            big = gm_layout.make_layout(dtype, 80, 6 * c0)
            host, l1_layout = env.rand(dtype, (big.capacity,)), gm_layout
            src_layout, off = big.get_tile_layout(rows, cols), big.offset(16, c0)
        gm = env.gm_in(host).tensor(dtype)[off]
        op = getattr(tile, cls_name)(ATLAS_A2, GemmType(dtype, gm_layout if gm_layout is not PaddingRowMajor
                                                          else RowMajor))
        env.go()
        op(l1, gm, l1_layout.make_layout(dtype, 48, 4 * c0), src_layout)
    return scenario


def _gmmptd(rows, cols, at_end=False):
    def scenario(env: Env):
        from catlass_py.tile import CopyGmToL1GMMPTD

        ctx = env.core("AIC")
        host = env.rand("int8", (64 * 40,))
        start = host.size - cols if at_end else 5
        gm = env.gm_in(host).tensor("int8")[start]
        env.go()
        CopyGmToL1GMMPTD(ATLAS_A2, GemmType("int8", RowMajor))(
            ctx.resource.l1_buf.get_buffer_by_byte("int8", 0), gm, zN.make_layout("int8", 64, 64),
            RowMajor(rows, cols, cols))
    return scenario


def _l1_to_l0(which, l1_layout, dtype="float16", arch=ATLAS_A2, m=20, k=40):
    def scenario(env: Env):
        from catlass_py.gemm.helper import l0a_layout, l0b_layout
        from catlass_py.tile import CopyL1ToL0A, CopyL1ToL0B

        ctx = env.core("AIC", arch)
        l1 = ctx.resource.l1_buf.get_buffer_by_byte(dtype, 2048)
        env.fill(l1)
        if which == "A":
            op, dst, layout_dst = (CopyL1ToL0A(arch, GemmType(dtype, l1_layout, "L1")),
                                   ctx.resource.l0a_buf.get_buffer_by_byte(dtype, 0),
                                   l0a_layout(arch).make_layout(dtype, m, k))
        else:
            op, dst, layout_dst = (CopyL1ToL0B(arch, GemmType(dtype, l1_layout, "L1")),
                                   ctx.resource.l0b_buf.get_buffer_by_byte(dtype, 0),
                                   l0b_layout(arch).make_layout(dtype, m, k))
        env.go()
        op(dst, l1, layout_dst, l1_layout.make_layout(dtype, 128, 128))
    return scenario


def _mmad(dtype="float16", m=20, n=40, k=50, *, bias=False, init_c=True, arch=ATLAS_A2, unit_flag=0):
    def scenario(env: Env):
        from catlass_py.tile import TileMmad

        ctx = env.core("AIC", arch)
        r = ctx.resource
        acc = "int32" if dtype == "int8" else "float32"
        l0a, l0b = r.l0a_buf.get_buffer_by_byte(dtype, 0), r.l0b_buf.get_buffer_by_byte(dtype, 0)
        l0c = r.l0c_buf.get_buffer_by_byte(acc, 4096)
        env.fill(l0a)
        env.fill(l0b)
        bt = None
        if bias:
            bt = r.bt_buf.get_buffer_by_byte(acc, 0)
            env.fill(bt)
        if not init_c:
            env.fill(l0c)
        env.go()
        TileMmad(arch, GemmType(dtype, RowMajor), GemmType(dtype, RowMajor))(l0c, l0a, l0b, m, n, k, init_c, unit_flag,
                                                                            bias=bt)
    return scenario


def _fixpipe(acc, out, gran="NO_QUANT", m=20, n=40, dst_layout=RowMajor, relu=False):
    def scenario(env: Env):
        from catlass_py.tile import CopyL0CToGm, ScaleGranularity

        ctx = env.core("AIC")
        l0c = ctx.resource.l0c_buf.get_buffer_by_byte(acc, 0)
        env.fill(l0c)
        if acc == "int32":  # moderate accumulators, so that the quantised outputs are not all saturated
            l0c.view()[:] = env.rng.integers(-3000, 3000, l0c.count)
        g = ScaleGranularity[gran]
        fb = None
        if g is ScaleGranularity.PER_CHANNEL:
            fb = ctx.resource.fb_buf.get_buffer_by_byte("uint64", 0, n)
            fb.view()[:] = (np.float32(env.rng.uniform(0.001, 0.01, n)).view(np.uint32)).astype(np.uint64)
        op = CopyL0CToGm(ATLAS_A2, acc, GemmType(out, dst_layout), g, relu, scale=0.01)
        ld = n + 5
        gm = env.gm_out(4 * (m + 16) * (ld + 16), "C").tensor(out)
        layout_dst = (RowMajor(m, n, ld) if dst_layout is RowMajor else zN.make_layout(out, m, n))
        env.go()
        op(gm[3 * ld + 1 if dst_layout is RowMajor else 0], l0c, layout_dst, zN.make_layout_in_l0c(32, 48),
           unit_flag=3, scale=fb)
    return scenario


def _atomic(env: Env):
    from catlass_py.tile import AtomicCopyL0CToGm, CopyL0CToGm, set_atomic_add, set_atomic_none

    ctx = env.core("AIC")
    l0c = ctx.resource.l0c_buf.get_buffer_by_byte("float32", 0)
    env.fill(l0c)
    host = env.rand("float32", (40, 50))
    gm = GlobalBuffer.from_array(host, "C").tensor("float32")
    op = AtomicCopyL0CToGm(CopyL0CToGm(ATLAS_A2, "float32", GemmType("float32", RowMajor)))
    env.go()
    set_atomic_add(ctx, "float32")
    op(gm[51], l0c, RowMajor(20, 40, 50), zN.make_layout_in_l0c(32, 48))
    set_atomic_none(ctx)
    op(gm[51], l0c, RowMajor(20, 40, 50), zN.make_layout_in_l0c(32, 48))


def _gm_ub(direction, layout, dtype="float16"):
    def scenario(env: Env):
        from catlass_py.tile import CopyGm2Ub, CopyUb2Gm

        ctx = env.core("AIV")
        ub = ctx.resource.ub_buf.get_buffer_by_byte(dtype, 512)
        rows, cols, ld, pitch = 7, 21, 30, 32
        if direction == "in":
            gm = env.gm_in(env.rand(dtype, (rows + 2, ld))).tensor(dtype)[ld + 2]
            env.go()
            if layout is VectorLayout:
                CopyGm2Ub(ATLAS_A2, GemmType(dtype, VectorLayout))(ub, gm, VectorLayout(cols), VectorLayout(cols))
            else:
                CopyGm2Ub(ATLAS_A2, GemmType(dtype, RowMajor))(ub, gm, RowMajor(rows, cols, pitch),
                                                               RowMajor(rows, cols, ld))
        else:
            env.fill(ub)
            gm = env.gm_out(2 * (rows + 2) * ld).tensor(dtype)[ld + 2]
            env.go()
            if layout is VectorLayout:
                CopyUb2Gm(ATLAS_A2, GemmType(dtype, VectorLayout))(gm, ub, VectorLayout(cols), VectorLayout(cols))
            else:
                CopyUb2Gm(ATLAS_A2, GemmType(dtype, RowMajor))(gm, ub, RowMajor(rows, cols, ld),
                                                               RowMajor(rows, cols, pitch))
    return scenario


def _bias(step, overhang=False):
    def scenario(env: Env):
        from catlass_py.tile import CopyGmToL1Bias, CopyL1ToBT
        from catlass_py.tile.copy_bias import l1_bias_types

        ctx = env.core("AIC")
        gm_t, l1_t, bt_t = l1_bias_types(GemmType("float16", VectorLayout), "float32")
        l1 = ctx.resource.l1_buf.get_buffer_by_byte("float16", 256)
        if step == "gm":
            host = env.rand("float16", (100,))
            gm = env.gm_in(host).tensor("float16")[100 - 40 if overhang else 10]
            env.go()
            CopyGmToL1Bias(ATLAS_A2, gm_t, l1_t)(l1, gm, VectorLayout(64), VectorLayout(40))
        else:
            env.fill(l1)
            bt = ctx.resource.bt_buf.get_buffer_by_byte("float32", 0)
            env.go()
            CopyL1ToBT(ATLAS_A2, l1_t, bt_t)(bt, l1[32], VectorLayout(40), VectorLayout(128))
    return scenario


def _vector(name):
    def scenario(env: Env):
        from catlass_py import tile
        from catlass_py.tile import vector_elementwise as ve

        ctx = env.core("AIV")
        ub = ctx.resource.ub_buf

        def t(dtype, byte, count):
            return ub.get_buffer_by_byte(dtype, byte, count)

        n = 200
        a, b, out = t("float32", 0, 4096), t("float32", 16384, 4096), t("float32", 32768, 4096)
        src_h, dst_h = t("float16", 49152, 4096), t("float16", 65536, 4096)
        # sources: random finite values in a, b (the first 32 KiB) and src_h; out and dst_h stay poisoned
        raw = ub.raw
        raw[:32768].view(np.float32)[:] = env.rng.standard_normal(32768 // 4).astype(np.float32)
        raw[49152:65536].view(np.float16)[:] = env.rng.standard_normal(8192).astype(np.float16)
        env.go()
        if name == "cast":
            tile.vector_cast(dst_h, a, RoundMode.RINT, n)
        elif name == "cast widen":
            tile.vector_cast(out, src_h, RoundMode.NONE, n)
        elif name == "duplicate":
            tile.duplicate(out, 1.5, n)
        elif name == "TileRowBroadcastMul":
            tile.TileRowBroadcastMul(ATLAS_A2, "float32", (8, 24))(out, a, b)
        elif name == "TileBroadcastOneBlk":
            tile.TileBroadcastOneBlk(ATLAS_A2, "float32", 24)(out, a)
        elif name == "TileOneBlkColumnBroadcastMul":
            tile.TileOneBlkColumnBroadcastMul(ATLAS_A2, "float32", (8, 24))(out, a, b)
        elif name == "TileCast":
            tile.TileCast(ATLAS_A2, GemmType("float16", RowMajor), GemmType("float32", RowMajor), (8, 24))(dst_h, a)
        elif name in ("Add", "Mul", "Div"):
            {"Add": ve.vector_add, "Mul": ve.vector_mul, "Div": ve.vector_div}[name](out, a, b, n)
        elif name == "Muls":
            ve.vector_muls(out, a, 3.0, n)
        elif name == "Adds":
            ve.vector_adds(out, a, 3.0, n)
        elif name == "Exp":
            ve.vector_exp(out, a, n)
        elif name == "Axpy":
            ve.vector_axpy(a, b, 3.0, n)
        elif name in ("TileElemWiseAdd", "TileElemWiseMul"):
            getattr(tile, name)(ATLAS_A2, "float32", 192)(out, a, b)
        else:  # TileElemWiseGelu / TileElemWiseSilu
            getattr(tile, name)(ATLAS_A2, "float32", 192)(out, a)
    return scenario


def _get_value(env: Env):
    from catlass_py.kernel.grouped import get_value

    ctx = env.core("AIV")
    gm = env.gm_in(np.arange(10, dtype=np.int64)).tensor("int64")
    env.go()
    assert get_value(ctx, gm, 7) == 7


def _tla_gm_to_l1(kind, dtype="float16", rows=20, cols=40):
    def scenario(env: Env):
        from catlass_py.tile.copy_tla import L1_LAYOUT, CopyGmToL1Tla, make_tensor
        from catlass_py.tla import get_tile, make_layout_tag

        ctx = env.core("AIC")
        l1 = ctx.resource.l1_buf.get_buffer_by_byte(dtype, 1024)
        big_rows, big_cols = rows + 35, cols + 70
        full = make_layout_tag(dtype, kind, big_rows, big_cols)
        host = env.rand(dtype, (full.cosize(),))
        src = get_tile(make_tensor(env.gm_in(host).tensor(dtype), full), (16, 32 * 8 // {"int8": 8, "float16": 16,
                                                                                        "float32": 32}[dtype]),
                       (rows, cols))
        dst = make_tensor(l1, make_layout_tag(dtype, L1_LAYOUT[kind], 48, 128))
        env.go()
        CopyGmToL1Tla(ATLAS_A2, dtype, kind, L1_LAYOUT[kind])(dst, src)
    return scenario


def _tla_l1_to_l0(which, l1_kind, dtype="float16", m=20, k=40):
    def scenario(env: Env):
        from catlass_py.tile.copy_tla import CopyL1ToL0ATla, CopyL1ToL0BTla, make_tensor
        from catlass_py.tla import get_tile, make_layout_tag

        ctx = env.core("AIC")
        l1 = ctx.resource.l1_buf.get_buffer_by_byte(dtype, 2048)
        env.fill(l1)
        src = get_tile(make_tensor(l1, make_layout_tag(dtype, l1_kind, 128, 128)), (32, 64), (m, k))
        if which == "A":
            op, dst = CopyL1ToL0ATla(ATLAS_A2, dtype, l1_kind), make_tensor(
                ctx.resource.l0a_buf.get_buffer_by_byte(dtype, 0), make_layout_tag(dtype, "zZ", m, k))
        else:
            op, dst = CopyL1ToL0BTla(ATLAS_A2, dtype, l1_kind), make_tensor(
                ctx.resource.l0b_buf.get_buffer_by_byte(dtype, 0), make_layout_tag(dtype, "nZ", m, k))
        env.go()
        op(dst, src)
    return scenario


def _tla_mmad(env: Env):
    from catlass_py.tile.copy_tla import TileMmadTla, make_tensor
    from catlass_py.tla import make_layout_l0c, make_layout_tag

    ctx = env.core("AIC")
    r = ctx.resource
    l0a, l0b = r.l0a_buf.get_buffer_by_byte("float16", 0), r.l0b_buf.get_buffer_by_byte("float16", 0)
    env.fill(l0a)
    env.fill(l0b)
    l0c = make_tensor(r.l0c_buf.get_buffer_by_byte("float32", 4096), make_layout_l0c(20, 40))
    env.go()
    TileMmadTla(ATLAS_A2, "float16", "float16")(l0c, make_tensor(l0a, make_layout_tag("float16", "zZ", 20, 50)),
                                                make_tensor(l0b, make_layout_tag("float16", "nZ", 50, 40)), 20, 40, 50)


def _tla_fixpipe(out="float16", layout_c="RowMajor", m=20, n=40):
    def scenario(env: Env):
        from catlass_py.tile.copy_tla import CopyL0CToGmTla, make_tensor
        from catlass_py.tla import get_tile, make_layout_l0c, make_layout_tag

        ctx = env.core("AIC")
        l0c = ctx.resource.l0c_buf.get_buffer_by_byte("float32", 0)
        env.fill(l0c)
        rows, cols = m + 16, n + 21
        gm = env.gm_out(4 * rows * (cols + 32), "C").tensor(out)
        full = make_tensor(gm, make_layout_tag(out, layout_c, rows, cols))
        dst = get_tile(full, (16, 16) if layout_c == "zN" else (3, 5), (m, n))
        env.go()
        CopyL0CToGmTla(ATLAS_A2, "float32", out, layout_c)(dst, make_tensor(l0c, make_layout_l0c(32, 48)), 3)
    return scenario


def _tla_gm_ub(direction, dtype="float16"):
    def scenario(env: Env):
        from catlass_py.tile.copy_tla import CopyGm2UbTla, CopyUb2GmTla, make_tensor
        from catlass_py.tla import Layout, get_tile, make_layout_tag

        ctx = env.core("AIV")
        ub = ctx.resource.ub_buf.get_buffer_by_byte(dtype, 512)
        rows, cols, ld, pitch = 7, 21, 30, 32
        ub_t = make_tensor(ub, Layout((rows, cols), (pitch, 1)))
        if direction == "in":
            gm = make_tensor(env.gm_in(env.rand(dtype, (rows + 2, ld))).tensor(dtype),
                             make_layout_tag(dtype, "RowMajor", rows + 2, ld))
            env.go()
            CopyGm2UbTla(ATLAS_A2, dtype)(ub_t, get_tile(gm, (1, 2), (rows, cols)))
        else:
            env.fill(ub)
            gm = make_tensor(env.gm_out(4 * (rows + 2) * ld).tensor(dtype), make_layout_tag(dtype, "RowMajor",
                                                                                             rows + 2, ld))
            env.go()
            CopyUb2GmTla(ATLAS_A2, dtype)(get_tile(gm, (1, 2), (rows, cols)), ub_t)
    return scenario


def _sparse_gm_to_l1(which):
    def scenario(env: Env):
        from catlass_py.tile.copy_sparse_tla import CopyGmToL1SparseTla
        from catlass_py.tile.copy_tla import make_tensor
        from catlass_py.tla import get_tile, make_layout_tag

        ctx = env.core("AIC")
        l1 = ctx.resource.l1_buf.get_buffer_by_byte("uint8" if which == "index" else "int8", 1024)
        if which == "A":  # rows past the tile are read while A has them (CATLASS's nValue)
            full = make_layout_tag("int8", "RowMajor", 70, 200)
            src = make_tensor(env.gm_in(env.rand("int8", (70, 200))).tensor("int8"), full, coord=(40, 128))
            dst, op = make_tensor(l1, make_layout_tag("int8", "zN", 20, 72)), CopyGmToL1SparseTla(
                ATLAS_A2, "int8", "RowMajor", "zN")
        elif which == "B":
            full = make_layout_tag("int8", "ColumnMajor", 100, 60)
            src = get_tile(make_tensor(env.gm_in(env.rand("int8", (60, 100))).tensor("int8"), full), (32, 16), (36, 40))
            dst, op = make_tensor(l1, make_layout_tag("int8", "nZ", 36, 40)), CopyGmToL1SparseTla(
                ATLAS_A2, "int8", "ColumnMajor", "nZ")
        else:
            full = make_layout_tag("int32", "nZ", 40, 70)
            host = env.rand("int8", (full.cosize(),)).view(np.uint8)
            src = make_tensor(env.gm_in(host).tensor("uint8"), full, coord=(16, 16))
            dst, op = make_tensor(l1, make_layout_tag("int32", "nZ", 12, 40)), CopyGmToL1SparseTla(
                ATLAS_A2, "uint8", "nZ", "nZ")
        env.go()
        op(dst, src)
    return scenario


def _sparse_load(env: Env):
    from catlass_py.tile.copy_sparse_tla import CopyL1ToL0BSparseTla
    from catlass_py.tile.copy_tla import make_tensor
    from catlass_py.tla import make_layout_tag

    ctx = env.core("AIC")
    r = ctx.resource
    env.fill(r.l1_buf.get_buffer_by_byte("int8", 0))
    src = make_tensor(r.l1_buf.get_buffer_by_byte("int8", 2048), make_layout_tag("int8", "nZ", 64, 40), coord=(32, 0))
    idx = make_tensor(r.l1_buf.get_buffer_by_byte("uint8", 65536), make_layout_tag("int32", "nZ", 16, 40))
    dst = make_tensor(r.l0b_buf.get_buffer_by_byte("int8", 512), make_layout_tag("int8", "nZ", 20, 40))
    env.go()
    CopyL1ToL0BSparseTla(ATLAS_A2)(dst, src, idx)


def _sparse_mmad(init_c=True):
    def scenario(env: Env):
        from catlass_py.tile.copy_sparse_tla import TileMmadSparse

        ctx = env.core("AIC")
        r = ctx.resource
        l0a, l0b = r.l0a_buf.get_buffer_by_byte("int8", 0), r.l0b_buf.get_buffer_by_byte("int8", 0)
        env.fill(l0a)
        env.fill(l0b)
        codes = env.rng.integers(0, 3, (r.l0b_buf.sparse_index.size, 4))  # valid indices 0..2 beside every byte
        r.l0b_buf.sparse_index[:] = (codes << np.array([0, 2, 4, 6])).sum(axis=1).astype(np.uint8)
        l0c = r.l0c_buf.get_buffer_by_byte("int32", 4096)
        if not init_c:
            env.fill(l0c)
        env.go()
        TileMmadSparse(ATLAS_A2)(l0c, l0a, l0b, 20, 40, 72, init_c)
    return scenario


def _sparse_fixpipe(env: Env):
    from catlass_py.tile.copy_sparse_tla import CopyL0CToGmSparseTla
    from catlass_py.tile.copy_tla import make_tensor
    from catlass_py.tla import make_layout_l0c, make_layout_tag

    ctx = env.core("AIC")
    l0c = ctx.resource.l0c_buf.get_buffer_by_byte("int32", 0)
    env.fill(l0c)
    gm = env.gm_out(4 * 70 * 90, "C").tensor("int32")
    dst = make_tensor(gm[20 * 90 + 30], make_layout_tag("int32", "RowMajor", 70, 90))  # the block's pointer
    env.go()
    CopyL0CToGmSparseTla(ATLAS_A2)(dst, make_tensor(l0c, make_layout_l0c(20, 40)))


#: name -> (scenario, tight): ``tight`` scenarios also check that every declared written byte changes in one of
#: the two runs; read-modify-write instructions (accumulating Mmad, Axpy, atomic add, the multi-step GELU/SiLU
#: tiles) may legitimately leave some written bytes as they were.
TILE_SCENARIOS = {
    "CopyGmToL1 RowMajor->zN fp16": (_gm_to_l1(RowMajor), True),
    "CopyGmToL1 RowMajor->zN int8": (_gm_to_l1(RowMajor, "int8", 33, 70), True),
    "CopyGmToL1 ColumnMajor->nZ": (_gm_to_l1(ColumnMajor, "float16", 40, 20), True),
    "CopyGmToL1 zN->zN": (_gm_to_l1(zN, "float16", 20, 19), True),
    "CopyGmToL1 nZ->nZ": (_gm_to_l1(nZ, "float32", 19, 20), True),
    "CopyGmToL1 PaddingRowMajor->zN": (_gm_to_l1(PaddingRowMajor, "float16", 32, 64), True),
    "CopyGmToL1GMMPTD RowMajor": (_gm_to_l1(RowMajor, "int8", 33, 70, "CopyGmToL1GMMPTD"), True),
    "CopyGmToL1GMMPTD one row": (_gmmptd(1, 50), True),
    "CopyGmToL1GMMPTD one row at the end of GM": (_gmmptd(1, 50, at_end=True), True),
    "CopyGmToL1GMMPTD one panel": (_gmmptd(24, 32), True),
    "CopyL1ToL0A zN": (_l1_to_l0("A", zN), True),
    "CopyL1ToL0A nZ int8": (_l1_to_l0("A", nZ, "int8", m=40, k=70), True),
    "CopyL1ToL0A Ascend950": (_l1_to_l0("A", zN, arch=ASCEND_950), True),
    "CopyL1ToL0B zN int8": (_l1_to_l0("B", zN, "int8", m=70, k=40), True),
    "CopyL1ToL0B nZ fp32": (_l1_to_l0("B", nZ, "float32", m=20, k=40), True),
    "Mmad fp16": (_mmad(unit_flag=2), True),
    "Mmad int8": (_mmad("int8", 20, 40, 70), True),
    "Mmad bias": (_mmad(bias=True), True),
    "Mmad k=0": (_mmad(k=0), True),
    "Mmad Ascend950": (_mmad(arch=ASCEND_950), True),
    "Mmad accumulate": (_mmad(init_c=False, unit_flag=3), False),
    "Fixpipe fp32->fp16": (_fixpipe("float32", "float16"), True),
    "Fixpipe fp32->fp32 relu": (_fixpipe("float32", "float32", relu=True), True),
    "Fixpipe zN destination": (_fixpipe("float32", "float32", dst_layout=zN), True),
    "Fixpipe DEQF16 per tensor": (_fixpipe("int32", "float16", "PER_TENSOR"), True),
    "Fixpipe VREQ8 per channel": (_fixpipe("int32", "int8", "PER_CHANNEL"), True),
    "Fixpipe + atomic add": (_atomic, False),
    "CopyGm2Ub RowMajor": (_gm_ub("in", RowMajor), True),
    "CopyGm2Ub VectorLayout": (_gm_ub("in", VectorLayout, "float32"), True),
    "CopyUb2Gm RowMajor": (_gm_ub("out", RowMajor), True),
    "CopyUb2Gm VectorLayout": (_gm_ub("out", VectorLayout, "bfloat16"), True),
    "CopyGmToL1Bias": (_bias("gm"), True),
    "CopyGmToL1Bias past the end of GM": (_bias("gm", overhang=True), True),
    "CopyL1ToBT": (_bias("bt"), True),
    **{f"vector {n}": (_vector(n), n not in ("Axpy", "TileElemWiseGelu", "TileElemWiseSilu"))
       for n in ("cast", "cast widen", "duplicate", "TileRowBroadcastMul", "TileBroadcastOneBlk",
                 "TileOneBlkColumnBroadcastMul", "TileCast", "Add", "Mul", "Div", "Muls", "Adds", "Exp", "Axpy",
                 "TileElemWiseAdd", "TileElemWiseMul", "TileElemWiseGelu", "TileElemWiseSilu")},
    "GetValue": (_get_value, True),
    "CopyGmToL1Tla RowMajor->zN fp16": (_tla_gm_to_l1("RowMajor"), True),
    "CopyGmToL1Tla RowMajor->zN int8": (_tla_gm_to_l1("RowMajor", "int8", 33, 70), True),
    "CopyGmToL1Tla ColumnMajor->nZ": (_tla_gm_to_l1("ColumnMajor", "float16", 40, 20), True),
    "CopyGmToL1Tla zN->zN": (_tla_gm_to_l1("zN", "float16", 20, 19), True),
    "CopyGmToL1Tla nZ->nZ fp32": (_tla_gm_to_l1("nZ", "float32", 19, 20), True),
    "CopyL1ToL0ATla zN": (_tla_l1_to_l0("A", "zN"), True),
    "CopyL1ToL0ATla nZ int8": (_tla_l1_to_l0("A", "nZ", "int8", m=40, k=70), True),
    "CopyL1ToL0BTla zN int8": (_tla_l1_to_l0("B", "zN", "int8", m=70, k=40), True),
    "CopyL1ToL0BTla nZ fp32": (_tla_l1_to_l0("B", "nZ", "float32", m=20, k=40), True),
    "TileMmadTla fp16": (_tla_mmad, True),
    "CopyL0CToGmTla fp32->fp16": (_tla_fixpipe(), True),
    "CopyL0CToGmTla zN destination": (_tla_fixpipe("float32", "zN"), True),
    "CopyGm2UbTla RowMajor": (_tla_gm_ub("in"), True),
    "CopyGmToL1SparseTla A RowMajor->zN": (_sparse_gm_to_l1("A"), True),
    "CopyGmToL1SparseTla B ColumnMajor->nZ": (_sparse_gm_to_l1("B"), True),
    "CopyGmToL1SparseTla index nZ->nZ": (_sparse_gm_to_l1("index"), True),
    "LoadDataWithSparse": (_sparse_load, True),
    "MmadWithSparse": (_sparse_mmad(), True),
    "MmadWithSparse accumulate": (_sparse_mmad(False), False),
    "CopyL0CToGmSparseTla": (_sparse_fixpipe, True),
    "CopyUb2GmTla RowMajor": (_tla_gm_ub("out", "float32"), True),
}


@pytest.mark.parametrize("name", list(TILE_SCENARIOS))
def test_tile_operation_declares_exactly_what_it_writes(registry, name):
    """Completeness in both runs; with ``tight``, no declared written byte keeps its poison in both runs."""
    scenario, tight = TILE_SCENARIOS[name]
    runs = []
    for poison in POISONS:
        aud = AccessAuditor(registry, details=True)
        scenario(Env(registry, aud, poison))
        assert_clean(aud)
        runs.append(aud)
    first, second = runs
    assert first.ops == second.ops
    if tight:
        for op, u1, u2 in zip(first.ops, first.unchanged, second.unchanged):
            both = sorted(u1 & u2)
            assert not both, f"{op}: {len(both)} declared written byte(s) never change, e.g. {both[:6]}"


@pytest.mark.parametrize("name", [n for n in TILE_SCENARIOS if n not in (
    "Fixpipe + atomic add", "vector TileElemWiseGelu", "vector TileElemWiseSilu")])
def test_tile_operation_reads_nothing_it_does_not_declare(registry, name):
    """The read side, for the single-instruction scenarios: a second run in which every byte of every memory
    outside the instruction's declared reads is replaced by random bytes right before it runs must write the
    same values."""
    scenario, _ = TILE_SCENARIOS[name]
    ref = AccessAuditor(registry, details=True)
    scenario(Env(registry, ref, POISONS[0]))
    assert len(ref.instructions) == 1, ref.ops
    aud = AccessAuditor(registry, details=True)
    scenario(Env(registry, aud, POISONS[0], keep=ref.read_masks[0]))
    assert_clean(aud)
    assert aud.ops == ref.ops
    (want,), (got,) = ref.written, aud.written
    assert sorted(want) == sorted(got)
    for label, (idx, values) in want.items():
        assert np.array_equal(idx, got[label][0])
        diff = np.flatnonzero(values != got[label][1])
        assert not diff.size, f"{ref.ops[0]}: {diff.size} written byte(s) of {label} depend on undeclared reads"


def _events(name):
    """The instruction events of one run of a tile scenario."""
    reg = Registry()
    aud = AccessAuditor(reg)
    TILE_SCENARIOS[name][0](Env(reg, aud, POISONS[0]))
    return aud.instructions


def test_cube_events_name_their_unit_flag_bias_and_quant_sources():
    (mmad,) = _events("Mmad fp16")
    assert (mmad.pipe, mmad.unit_flag) == (Pipe.M, 2)
    assert {a.space for a in mmad.local_reads} == {"L0A", "L0B"}
    assert {a.space for a in mmad.local_writes} == {"L0C"}
    (acc,) = _events("Mmad accumulate")
    assert acc.unit_flag == 3 and {a.space for a in acc.local_reads} == {"L0A", "L0B", "L0C"}
    assert set(acc.local_writes) <= set(acc.local_reads)
    (bias,) = _events("Mmad bias")
    assert {a.space for a in bias.local_reads} == {"L0A", "L0B", "BT"}
    (fix,) = _events("Fixpipe fp32->fp16")
    assert (fix.pipe, fix.unit_flag) == (Pipe.FIX, 3)
    assert {a.space for a in fix.local_reads} == {"L0C"} and {a.space for a in fix.gm_writes} == {"GM"}
    (fix,) = _events("Fixpipe VREQ8 per channel")
    assert {a.space for a in fix.local_reads} == {"L0C", "FB"}
    (fix,) = _events("Fixpipe DEQF16 per tensor")  # deqScalar: taken at issue, no PIPE_FIX register read
    assert {a.space for a in fix.local_reads} == {"L0C"}
    add, fix1, atomic, none, fix2 = _events("Fixpipe + atomic add")
    assert [e.op for e in (add, fix1, atomic, none, fix2)] == ["SetAtomicAdd", "Fixpipe", "AtomicAdd",
                                                                "SetAtomicNone", "Fixpipe"]
    assert add.pipe is none.pipe is Pipe.S and add.local_writes == none.local_writes
    assert [a.buffer for a in add.local_writes] == ["register ATOMIC of AIC0"]
    assert atomic.pipe is Pipe.FIX and atomic.gm_reads == atomic.gm_writes and not atomic.local_reads


def test_copies_are_on_the_pipes_of_ascend_c():
    pipes = {name: {(e.op, e.pipe) for e in _events(name)} for name in (
        "CopyGmToL1 RowMajor->zN fp16", "CopyL1ToL0A zN", "CopyL1ToL0B nZ fp32", "CopyGmToL1Bias", "CopyL1ToBT",
        "CopyGm2Ub RowMajor", "CopyUb2Gm RowMajor", "vector Add", "GetValue")}
    assert pipes == {
        "CopyGmToL1 RowMajor->zN fp16": {("CopyGmToL1", Pipe.MTE2)},
        "CopyL1ToL0A zN": {("CopyL1ToL0A", Pipe.MTE1)},
        "CopyL1ToL0B nZ fp32": {("CopyL1ToL0B", Pipe.MTE1)},
        "CopyGmToL1Bias": {("CopyGmToL1Bias", Pipe.MTE2)},
        "CopyL1ToBT": {("CopyL1ToBT", Pipe.MTE1)},
        "CopyGm2Ub RowMajor": {("CopyGm2Ub", Pipe.MTE2)},
        "CopyUb2Gm RowMajor": {("CopyUb2Gm", Pipe.MTE3)},
        "vector Add": {("Add", Pipe.V)},
        "GetValue": {("GetValue", Pipe.S)},
    }


def test_sparse_tile_ops_are_on_the_pipes_of_ascend_c():
    pipes = {name: {(e.op, e.pipe) for e in _events(name)} for name in (
        "CopyGmToL1SparseTla A RowMajor->zN", "CopyGmToL1SparseTla index nZ->nZ", "LoadDataWithSparse",
        "MmadWithSparse", "CopyL0CToGmSparseTla")}
    assert pipes == {
        "CopyGmToL1SparseTla A RowMajor->zN": {("CopyGmToL1SparseTla", Pipe.MTE2)},
        "CopyGmToL1SparseTla index nZ->nZ": {("CopyGmToL1SparseTla", Pipe.MTE2)},
        "LoadDataWithSparse": {("LoadDataWithSparse", Pipe.MTE1)},
        "MmadWithSparse": {("MmadWithSparse", Pipe.M)},
        "CopyL0CToGmSparseTla": {("Fixpipe", Pipe.FIX)},
    }
    (load,) = _events("LoadDataWithSparse")  # the dense bytes and their index bytes, both in L1
    assert {a.space for a in load.local_reads} == {"L1"} and len(load.local_reads) >= 2
    assert {a.space for a in load.local_writes} == {"L0B"}
    (mmad,) = _events("MmadWithSparse")
    assert {a.space for a in mmad.local_reads} == {"L0A", "L0B"} and mmad.flops == 20 * 40 * 72


# -- the auditor itself ------------------------------------------------------------------------------------


def _fake_core(registry):
    aud = AccessAuditor(registry, details=True)
    ctx = standalone_core(ATLAS_A2, "AIV", observers=(aud,))
    ub = ctx.resource.ub_buf.get_buffer_by_byte("float32", 256, 64)
    gm = GlobalBuffer.empty(256, "out").tensor("float32")
    aud.sync()
    return aud, ctx, ub, gm


def test_auditor_reports_undeclared_writes(registry):
    aud, ctx, ub, gm = _fake_core(registry)
    ub.view(8)[:] = 1.0
    ctx.emit(Pipe.V, "Fake", nbytes=32, local_reads=(ub.access(8, 8),), local_writes=(ub.access(0, 7),))
    assert len(aud.failures) == 1 and "wrote 4 undeclared byte(s) of UB of AIV0.0, first at [284" in aud.failures[0]
    gm.view(4, write=True)[:] = 2.0
    ctx.emit(Pipe.MTE3, "FakeStore", nbytes=16, local_reads=(ub.access(0, 4),))
    assert "undeclared byte(s) of 'out'" in aud.failures[-1]
    ub.view(1)[:] = -3.0  # written outside any instruction: reported at the end of the launch
    aud.on_launch_end(None, None)
    assert aud.failures[-1].startswith("after the last instruction: wrote 2 undeclared byte(s) of UB of AIV0.0")


def test_auditor_reports_bad_declarations(registry):
    aud, ctx, ub, gm = _fake_core(registry)
    other = standalone_core(ATLAS_A2, "AIC", observers=(aud,)).resource.l1_buf.get_buffer_by_byte("float32", 0, 8)
    aud.sync()
    ctx.emit(Pipe.V, "NoRead", nbytes=32, local_writes=(ub.access(0, 8),))
    ctx.emit(Pipe.V, "PastTheEnd", nbytes=32, local_reads=(ub.access(0, 8),),
             local_writes=(ub.access(0, 1, ub.arena.size // 4, 2),))
    ctx.emit(Pipe.V, "OtherCore", nbytes=32, local_reads=(other.access(0, 8),))
    ctx.emit(Pipe.MTE3, "PastTheGmEnd", nbytes=32, local_reads=(ub.access(0, 8),), gm_writes=(gm.access(60, 8),))
    aud.on_event(InstructionEvent(0, ctx.core, Pipe.ALL, "AllPipes"))
    for op, what in (("NoRead", "declares no read"), ("PastTheEnd", "outside UB of AIV0.0"),
                     ("OtherCore", "not one of AIV0.0's"), ("PastTheGmEnd", "outside 'out'"),
                     ("AllPipes", "no single pipe")):
        assert any(op in m and what in m for m in aud.failures), (op, aud.failures)
    assert len(aud.failures) == 5


def test_auditor_sees_over_declared_writes(registry):
    aud, ctx, ub, gm = _fake_core(registry)
    ub.view(4)[:] = 1.0
    ctx.emit(Pipe.V, "Over", nbytes=16, local_reads=(ub.access(8, 4),), local_writes=(ub.access(0, 5),))
    assert not aud.failures
    assert sorted(aud.unchanged[0]) == [("UB of AIV0.0", 256 + 16 + i) for i in range(4)]
