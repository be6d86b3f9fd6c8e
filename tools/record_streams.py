"""Record what every shipped kernel does, to compare a refactoring's before and after (a development tool, not
part of the package).

    python tools/record_streams.py out.json               # record
    python tools/record_streams.py --compare a.json b.json  # print the first differences; exit 1 on any

Runs every example script (``examples/NN_*.py`` and ``transpose_quant_batch_matmul``) at a few small shapes and
core counts (odd block counts per core, tails), and every operator of :mod:`catlass_py.ops` on small random
inputs, each with an observer that records a stable projection of every event (the core, the event class,
pipe, op, flag / event ids and modes, the global-memory accesses (buffer name, start, length, stride, count)
and marker kinds and data) and a cost model that records its prediction (cycles, per-core end times and
the summary fields; for an example, also that of a cost model observing a run alone, which takes templates of
repeated tiles instead of their events). Sequence numbers and any field the projection does not name are left out, so that
new event fields do not show up as differences. Outputs are recorded as SHA-256 digests of dtype, shape and
bytes. A run that raises records the exception's type and message instead.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import sys
import time
import warnings

import ml_dtypes
import numpy as np

from catlass_py.analysis import CostModel

# -- the projection ------------------------------------------------------------------------------------


def _value(v):
    """A JSON-stable form of a marker value or an id."""
    if isinstance(v, (bool, str)) or v is None:
        return v
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    if isinstance(v, (tuple, list)):
        return [_value(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _value(x) for k, x in sorted(v.items(), key=lambda kv: str(kv[0]))}
    name = getattr(v, "name", None)
    return str(name) if isinstance(name, str) else repr(v)


def _gm(accesses) -> list:
    return [[a.buffer, int(a.start), int(a.length), int(a.stride), int(a.count)] for a in accesses]


def project(e) -> str:
    """One event as a compact, stable JSON string."""
    from catlass_py.arch import events as ev

    kind = type(e).__name__
    rec: dict = {"core": e.core.short, "kind": kind}
    if isinstance(e, ev.InstructionEvent):
        rec.update(pipe=_value(e.pipe), op=e.op, r=_gm(e.gm_reads), w=_gm(e.gm_writes))
    elif isinstance(e, (ev.SetFlagEvent, ev.WaitFlagEvent)):
        rec.update(event=_value(e.event), id=int(e.event_id))
    elif isinstance(e, ev.PipeBarrierEvent):
        rec.update(pipe=_value(e.pipe))
    elif isinstance(e, ev.CrossCoreSetEvent):
        rec.update(flag=int(e.flag_id), mode=int(e.mode), pipe=_value(e.pipe))
    elif isinstance(e, ev.CrossCoreWaitEvent):
        rec.update(flag=int(e.flag_id))
    elif isinstance(e, ev.MarkerEvent):
        rec.update(marker=e.kind, data=_value(e.data))
    return json.dumps(rec, sort_keys=True, separators=(",", ":"))


def make_recorder():
    from catlass_py.arch.events import Observer

    class StreamRecorder(Observer):
        """Every event of every launch it joins, projected (:func:`project`)."""

        interests = None

        def __init__(self):
            self.launches: list[list[str]] = []

        def on_launch_start(self, info) -> None:
            self.launches.append([])

        def on_event(self, e) -> None:
            self.launches[-1].append(project(e))

    return StreamRecorder()


def prediction(cm) -> dict | None:
    """The cost model's prediction, exactly: cycles, per-core end times and the summary fields."""
    r = cm.report
    if r is None:
        return None
    return {"cycles": repr(r.cycles), "core_end": {k: repr(v) for k, v in sorted(r.core_end_cycles.items())},
            "summary": r.summary()}


def digest(x) -> str:
    if isinstance(x, (list, tuple)):
        h = hashlib.sha256()
        for item in x:
            h.update(digest(item).encode())
        return "list:" + h.hexdigest()[:16]
    arr = np.ascontiguousarray(x)
    h = hashlib.sha256(f"{arr.dtype}|{arr.shape}|".encode())
    h.update(arr.view(np.uint8).reshape(-1).data if arr.size else b"")
    return h.hexdigest()[:16]


# -- what to run ---------------------------------------------------------------------------------------

#: example -> [(positional args, cores)]: small shapes with tails and uneven block counts per core
EXAMPLES = {
    "00_basic_matmul": [(["300", "520", "100"], 2), (["128", "256", "64"], 3), (["260", "300", "70"], 4)],
    "01_batched_matmul": [(["3", "130", "100", "40"], 2), (["2", "64", "300", "64"], 3)],
    "02_grouped_matmul_slice_m": [(["3", "300", "200", "100"], 2), (["4", "200", "100", "300"], 3)],
    "03_matmul_add": [(["300", "260", "64"], 2), (["100", "300", "40"], 3)],
    "05_grouped_matmul_slice_k": [(["3", "130", "200", "300"], 2), (["5", "64", "100", "40"], 3)],
    "07_grouped_matmul_slice_m_per_token_dequant_moe": [(["3", "300", "300", "100"], 2), (["4", "100", "200", "64"], 3)],
    "08_grouped_matmul": [(["3", "200", "300", "100"], 2), (["4", "100", "100", "64"], 3)],
    "09_splitk_matmul": [(["130", "200", "600"], 2), (["64", "64", "1100"], 3)],
    "10_grouped_matmul_slice_m_per_token_dequant": [(["3", "300", "300", "100"], 2), (["5", "260", "520", "64"], 3),
                                                    (["2", "128", "256", "600"], 1)],
    "11_grouped_matmul_slice_k_per_token_dequant": [(["3", "130", "300", "300"], 2), (["4", "64", "100", "40"], 3)],
    "12_quant_matmul": [(["300", "300", "100"], 2), (["260", "520", "600"], 3), (["100", "64", "64"], 1)],
    "20_matmul_bias": [(["300", "260", "100"], 2), (["64", "300", "40"], 3)],
    "26_matmul_relu": [(["300", "200", "100"], 2), (["100", "300", "256"], 3)],
    "27_matmul_gelu": [(["300", "260", "64"], 2), (["100", "300", "40"], 3)],
    "28_matmul_silu": [(["300", "260", "64"], 2), (["100", "300", "40"], 3)],
    "34_single_core_splitk_matmul": [(["300", "200", "600"], 2), (["100", "300", "100"], 3)],
    "37_streamk_matmul": [(["300", "200", "600"], 2), (["260", "520", "100"], 3), (["128", "256", "1100"], 4)],
    "06_optimized_matmul": [(["300", "200", "100"], 2)],
    "13_basic_matmul_tla": [(["300", "520", "100"], 2)],
    "14_optimized_matmul_tla": [(["300", "200", "100"], 2)],
    "19_mla": [(["2", "1,3", "130,300", "5", "8", "128"], 2)],
    "21_basic_matmul_preload_zN": [(["300", "272", "112"], 2)],
    "23_flash_attention_infer": [(["2", "40", "300", "4", "2", "64", "1", "1"], 2)],
    "41_sparse_matmul_tla": [(["160", "320", "128"], 2)],
    "42_quant_optimized_matmul_tla": [(["300", "200", "100"], 2)],
    "44_quant_matmul_full_loadA_tla": [(["300", "200", "600"], 2)],
    "45_strided_batched_matmul_tla": [(["3", "130", "100", "40"], 2)],
    "52_quant_multi_core_splitk_matmul_tla": [(["130", "200", "1100"], 4)],
    "transpose_quant_batch_matmul": [(["8", "128", "64", "3"], 2), (["20", "64", "300", "2", "e5m2", "fp16", "021"], 3)],
}

#: (example, args, cores, interleaving seed): runs under a seeded scheduler, which switches cores at random
SEEDED = [
    ("10_grouped_matmul_slice_m_per_token_dequant", ["3", "300", "300", "100"], 2, 1),
    ("12_quant_matmul", ["300", "300", "100"], 2, 3),
    ("03_matmul_add", ["300", "260", "64"], 2, 5),
    ("37_streamk_matmul", ["300", "200", "600"], 2, 7),
]


def _rng(seed):
    return np.random.default_rng(seed)


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


def op_cases():
    """(label, callable(observers) -> output) for every operator of catlass_py.ops."""
    from catlass_py import ops
    from catlass_py.ops.transpose_quant_batch_matmul import make_inputs

    r = _rng(1)
    a, b = _f16(r, 200, 100), _f16(r, 100, 300)
    x = _f16(r, 200, 300)
    ab = _f16(r, 2, 130, 70), _f16(r, 2, 70, 90)
    a8, b8 = _i8(r, 200, 100), _i8(r, 100, 300)
    gm_b = _f16(r, 3, 100, 150)
    gl_m = _prefix(r, 3, 200)
    gl_k = _prefix(r, 3, 100)
    b8g = _i8(r, 3, 100, 300)
    scale_g = _bf16(r, 3, 300)
    pts = _bf16(r, 200)
    f16_scale, f16_pts = r.uniform(0.5, 1.5, 300).astype(np.float16), r.uniform(0.5, 1.5, 200).astype(np.float16)
    f32_scale_g, f32_pts = r.uniform(0.5, 1.5, (3, 300)).astype(np.float32), r.uniform(0.5, 1.5, 200).astype(np.float32)
    k_scale, k_pts = _bf16(r, 3, 300), _bf16(r, 3, 200)
    bias = _f16(r, 300)
    a_list = [_f16(r, 100, 64), _f16(r, 30, 100), _f16(r, 200, 40)]
    b_list = [_f16(r, 64, 100), _f16(r, 100, 300), _f16(r, 40, 20)]
    tq = make_inputs(12, 128, 80, 2, in_dtype="e4m3", out_dtype="float16")
    return [
        ("basic_matmul", lambda o: ops.basic_matmul(a, b, core_num=3, observers=o)),
        ("basic_matmul int8 column", lambda o: ops.basic_matmul(a8, b8, layout_a="column", core_num=2, observers=o)),
        ("batched_matmul", lambda o: ops.batched_matmul(*ab, core_num=3, observers=o)),
        ("grouped_matmul", lambda o: ops.grouped_matmul(a_list, b_list, core_num=3, observers=o)),
        ("grouped_matmul_slice_k", lambda o: ops.grouped_matmul_slice_k(x[:, :100], a[:100, :], gl_k, core_num=2,
                                                                        observers=o)),
        ("grouped_matmul_slice_m", lambda o: ops.grouped_matmul_slice_m(a, gm_b, gl_m, core_num=3, observers=o)),
        ("grouped_matmul_slice_m_per_token_dequant",
         lambda o: ops.grouped_matmul_slice_m_per_token_dequant(a8, b8g, gl_m, scale_g, pts, core_num=3, observers=o)),
        ("grouped_matmul_slice_m_per_token_dequant_moe",
         lambda o: ops.grouped_matmul_slice_m_per_token_dequant_moe(a8, b8g, gl_m.astype(np.int32), f32_scale_g,
                                                                    f32_pts, core_num=3, observers=o)),
        ("grouped_matmul_slice_k_per_token_dequant",
         lambda o: ops.grouped_matmul_slice_k_per_token_dequant(a8, b8, gl_k, k_scale, k_pts, core_num=3,
                                                                observers=o)),
        ("matmul_add", lambda o: ops.matmul_add(a, b, x, core_num=3, observers=o)),
        ("matmul_bias", lambda o: ops.matmul_bias(a, b, bias, core_num=3, observers=o)),
        ("matmul_gelu", lambda o: ops.matmul_gelu(a, b, core_num=3, observers=o)),
        ("matmul_silu", lambda o: ops.matmul_silu(a, b, core_num=2, observers=o)),
        ("matmul_relu", lambda o: ops.matmul_relu(a, b, core_num=3, observers=o)),
        ("quant_matmul", lambda o: ops.quant_matmul(a8, b8, f16_scale, f16_pts, core_num=3, observers=o)),
        ("single_core_splitk_matmul", lambda o: ops.single_core_splitk_matmul(a, b, core_num=3, observers=o)),
        ("splitk_matmul", lambda o: ops.splitk_matmul(a, b, core_num=3, observers=o)),
        ("streamk_matmul", lambda o: ops.streamk_matmul(a, b, core_num=3, observers=o)),
        ("basic_matmul fp32 out", lambda o: ops.basic_matmul(a, b, out_dtype="float32", core_num=2, observers=o)),
        ("grouped_matmul_slice_m segmented",
         lambda o: ops.grouped_matmul_slice_m(a, gm_b, np.diff(gl_m, prepend=0), segmented=True, core_num=2,
                                              observers=o)),
        ("grouped_matmul_slice_m_per_token_dequant fp16",
         lambda o: ops.grouped_matmul_slice_m_per_token_dequant(a8, b8g, gl_m, scale_g.astype(np.float16),
                                                                pts.astype(np.float16), core_num=2, observers=o)),
        ("matmul_relu padded", lambda o: ops.matmul_relu(a[:, :90], b[:90, :], layout_b="row", core_num=2,
                                                         observers=o)),
        ("splitk_matmul fp32 out", lambda o: ops.splitk_matmul(a, b, out_dtype="float32", core_num=2, observers=o)),
        ("transpose_quant_batch_matmul", lambda o: ops.transpose_quant_batch_matmul(*tq, out_dtype="float16",
                                                                                    core_num=3, observers=o)),
    ]


def _error(exc: BaseException) -> dict:
    return {"error": f"{type(exc).__name__}: {exc}"}


def record() -> dict:
    out: dict = {"examples": {}, "ops": {}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = [(name, args, cores, None) for name, cases in EXAMPLES.items() for args, cores in cases] + SEEDED
        for name, args, cores, seed in runs:
            ex = importlib.import_module(f"catlass_py.examples.{name}")
            key = f"{name} {' '.join(args)} --cores {cores}" + (f" --seed {seed}" if seed is not None else "")
            rec, cm = make_recorder(), CostModel()
            t0 = time.perf_counter()
            try:
                res = ex.run(args, cores=cores, seed=seed, observers=(rec, cm))
                entry = {"passed": res.passed, "output": res.output_digest, "launches": rec.launches,
                         "predicted": prediction(cm)}
                alone = CostModel()  # alone it takes templates (ObserverBus.templates): the same prediction
                ex.run(args, cores=cores, seed=seed, observers=(alone,))
                entry["predicted alone"] = prediction(alone)
            except Exception as exc:  # noqa: BLE001 - recorded, compared
                entry = {**_error(exc), "launches": rec.launches}
            out["examples"][key] = entry
            print(f"{time.perf_counter() - t0:6.2f} s  {key}: {sum(map(len, rec.launches))} events",
                  file=sys.stderr)
        for label, fn in op_cases():
            rec, cm = make_recorder(), CostModel()
            t0 = time.perf_counter()
            try:
                entry = {"output": digest(fn((rec, cm))), "launches": rec.launches, "predicted": prediction(cm)}
            except Exception as exc:  # noqa: BLE001
                entry = {**_error(exc), "launches": rec.launches}
            out["ops"][label] = entry
            print(f"{time.perf_counter() - t0:6.2f} s  op {label}: {sum(map(len, rec.launches))} events",
                  file=sys.stderr)
    return out


# -- comparison ----------------------------------------------------------------------------------------


def compare(a: dict, b: dict, limit: int = 20) -> list[str]:
    """Differences between two recordings, first ones first (at most ``limit`` lines)."""
    diffs: list[str] = []
    for section in ("examples", "ops"):
        sa, sb = a.get(section, {}), b.get(section, {})
        for key in sorted(set(sa) | set(sb)):
            if key not in sa or key not in sb:
                diffs.append(f"{section} {key}: only in {'the first' if key in sa else 'the second'} recording")
                continue
            ea, eb = sa[key], sb[key]
            for field in ("error", "passed", "output", "predicted", "predicted alone"):
                if ea.get(field) != eb.get(field):
                    diffs.append(f"{section} {key}: {field} {ea.get(field)!r} != {eb.get(field)!r}")
            la, lb = ea.get("launches", []), eb.get("launches", [])
            if len(la) != len(lb):
                diffs.append(f"{section} {key}: {len(la)} launches != {len(lb)}")
            for i, (xa, xb) in enumerate(zip(la, lb)):
                if xa == xb:
                    continue
                j = next((j for j, (u, v) in enumerate(zip(xa, xb)) if u != v), min(len(xa), len(xb)))
                left = xa[j] if j < len(xa) else "<end>"
                right = xb[j] if j < len(xb) else "<end>"
                diffs.append(f"{section} {key}: launch {i}: {len(xa)} vs {len(xb)} events; first difference at event "
                             f"{j}:\n    {left}\n    {right}")
            if len(diffs) >= limit:
                return diffs[:limit]
    return diffs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", help="out.json, or with --compare: a.json b.json")
    parser.add_argument("--compare", action="store_true", help="compare two recordings")
    ns = parser.parse_args(argv)
    if ns.compare:
        if len(ns.paths) != 2:
            parser.error("--compare takes two recordings")
        with open(ns.paths[0]) as fa, open(ns.paths[1]) as fb:
            a, b = json.load(fa), json.load(fb)
        diffs = compare(a, b)
        if diffs:
            print("\n".join(diffs))
            return 1
        runs = len(a["examples"]) + len(a["ops"])
        events = sum(sum(map(len, e["launches"])) for s in ("examples", "ops") for e in a[s].values())
        print(f"identical: {runs} runs, {events} events, outputs, verdicts and predictions")
        return 0
    if len(ns.paths) != 1:
        parser.error("record takes one output path")
    data = record()
    with open(ns.paths[0], "w") as fh:
        json.dump(data, fh, separators=(",", ":"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
