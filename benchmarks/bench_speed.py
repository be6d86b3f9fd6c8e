"""Speed of the simulator against the fastest exact numpy computation of the same result (the goals in brackets below).

Every ratio is measured in this one process, side by side, on 1 BLAS thread (threadpoolctl; the simulator's
launches run BLAS on 1 thread anyway), as CPU time (``time.process_time``, all threads): the machine may be
shared, and CPU time does not grow while other processes run. Each of ``--repeat`` rounds times the reference
and the simulation back to back; a figure is the best time over the rounds, a ratio the median over the rounds
of the round's own ratio (a load that drifts over minutes cancels out). Every simulated output is checked bit
for bit against the reference.

The reference (``fastest_exact_gmm`` of ``bench_host.py``): int8 products summed in float32 BLAS on K chunks of at
most 1024 (exact for any int8 operands), accumulated in int32, dequantised in float32.

Rows (goals in brackets):

* flagship op / fastest exact numpy at the README shape (G=128, m=512, n=1024, k=2048) [<= 4x] and for one
  2048^3 group [<= 1.5x]; the project's golden / fastest exact numpy alongside;
* ``catlass-py run 10_... 128 512 1024 2048`` / a process that only makes the inputs (through the same input
  cache) and runs the golden [<= 1.3x wall]: fresh interpreters, best of ``--cli-repeat`` wall times each;
* ``import catlass_py`` and ``catlass-py --help`` in a fresh interpreter [<= 0.5 s] (best wall time);
* the cost model's share of a launch [<= +15%]: launch CPU with a CostModel / without, README shape;
* small shapes (G=8; k=256) [no worse than the README shape's ratio];
* host data for the README shape: generating the inputs (glibc ``rand()`` replica) and loading them from the
  input cache.

Two floors follow: the L1-tile products alone for the 2048^3 group (the int8 tiles cast to float32, one BLAS product
and the int32 accumulate per tile, as the simulator forms them and nothing else) over the reference, and the
reference process plus the import and a launch with the cost model over the reference process (what the CLI does
at least).

Then the scaling sweeps: the ratio against G, m, n, k (around the README shape) and the core count (1, 2, 8,
24 and a 48-core custom ``ArchSpec``), printed and, with matplotlib (the ``plot`` extra), drawn as ratio against
problem size (``--plot out.png``). Nothing here is asserted by the test suite.

    python benchmarks/bench_speed.py [--repeat N] [--quick] [--no-sweeps] [--no-cli] [--plot speed.png]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import ml_dtypes
import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_analysis import LaunchClock  # noqa: E402  (a sibling script)
from bench_host import fastest_exact_gmm  # noqa: E402
from bench_import import bytecode_cached_env  # noqa: E402

from catlass_py import data, golden  # noqa: E402
from catlass_py.analysis import CostModel  # noqa: E402
from catlass_py.arch import ATLAS_A2  # noqa: E402
from catlass_py.ops import grouped_matmul_slice_m_per_token_dequant as gmm  # noqa: E402

README = (128, 512, 1024, 2048)


def example10(shape):
    x = data.example10_inputs(*shape)
    return x.a, x.b, x.group_list, x.scale, x.per_token_scale


def one_group(m, n, k, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.integers(-128, 128, (m, k), dtype=np.int8), rng.integers(-128, 128, (1, k, n), dtype=np.int8),
            np.array([m], np.int64), rng.random((1, n)).astype(ml_dtypes.bfloat16),
            rng.random(m).astype(ml_dtypes.bfloat16))


def _cpu(fn):
    t0 = time.process_time()
    out = fn()
    return time.process_time() - t0, out


def _exact(d, ref) -> bool:
    return bool(np.array_equal(d.view(np.uint16), ref.astype(d.dtype).view(np.uint16)))


def compare(args, repeat, *, cores=24, arch=None, golden_too=False):
    """Rounds of (reference, [golden,] simulation): best CPU seconds and the median ratio to the reference."""
    kw = {"core_num": cores} | ({"arch": arch} if arch is not None else {})
    with threadpool_limits(1):
        gmm(*args, **kw)  # warm: kernel assembly, layouts
        ref_t, sim_t, gold_t, ratios, gold_ratios = [], [], [], [], []
        exact = True
        for _ in range(repeat):
            tr, ref = _cpu(lambda: fastest_exact_gmm(*args))
            ts, d = _cpu(lambda: gmm(*args, **kw))
            exact &= _exact(d, ref)
            ref_t.append(tr)
            sim_t.append(ts)
            ratios.append(ts / tr)
            if golden_too:
                tg, g = _cpu(lambda: golden.grouped_matmul_slice_m_per_token_dequant(*args))
                exact &= _exact(d, g)
                gold_t.append(tg)
                gold_ratios.append(tg / tr)
    out = {"ref": min(ref_t), "sim": min(sim_t), "ratio": statistics.median(ratios), "exact": exact}
    if golden_too:
        out |= {"golden": min(gold_t), "golden_ratio": statistics.median(gold_ratios)}
    return out


def tile_products(m, n, k, repeat):
    """What any simulation at the cube's granularity must compute for one m x n x k group, and nothing else: each
    L1 tile's product as the simulator forms it (the int8 A and B tiles cast to float32 scratch, one float32 BLAS
    product, the int32 accumulate), for the flagship kernel's L1 tile shape, blocks and K tiles. Best CPU seconds
    and the median ratio to the reference: the floor of the 2048^3 row."""
    from catlass_py.ops.grouped_matmul_slice_m_per_token_dequant import build_kernel

    tile = build_kernel(ATLAS_A2, "bfloat16").block_mmad.l1_tile_shape
    tm, tn, tk = tile.m, tile.n, tile.k
    args = one_group(m, n, k)
    a, b = args[0], args[1][0]
    a32, bt32 = np.empty((tm, tk), np.float32), np.empty((tn, tk), np.float32)
    c32, i32, acc = np.empty((tm, tn), np.float32), np.empty((tm, tn), np.int32), np.empty((tm, tn), np.int32)

    def products():
        for mi in range(0, m, tm):
            for ni in range(0, n, tn):
                for ki in range(0, k, tk):
                    np.copyto(a32, a[mi:mi + tm, ki:ki + tk], casting="unsafe")
                    np.copyto(bt32, b[ki:ki + tk, ni:ni + tn].T, casting="unsafe")
                    np.matmul(a32, bt32.T, out=c32)
                    if ki == 0:
                        np.copyto(acc, c32, casting="unsafe")
                    else:
                        np.copyto(i32, c32, casting="unsafe")
                        np.add(acc, i32, out=acc)

    times, ratios = [], []
    with threadpool_limits(1):
        for _ in range(repeat):
            tr, _ref = _cpu(lambda: fastest_exact_gmm(*args))
            tp, _none = _cpu(products)
            times.append(tp)
            ratios.append(tp / tr)
    return min(times), statistics.median(ratios), (tm, tn, tk)


def cost_share(args, repeat, cores=24):
    """Launch CPU with a CostModel over the same launch without one (median of the rounds' ratios)."""
    ratios, plain_t, cost_t = [], [], []
    with threadpool_limits(1):
        gmm(*args, core_num=cores)
        for _ in range(repeat):
            c0, c1 = LaunchClock(), LaunchClock()
            gmm(*args, core_num=cores, observers=(c0,))
            # the clock last (see LaunchClock)
            gmm(*args, core_num=cores, observers=(CostModel(), c1))
            plain_t.append(c0.cpu)
            cost_t.append(c1.cpu)
            ratios.append(c1.cpu / c0.cpu)
    return min(plain_t), min(cost_t), statistics.median(ratios) - 1


def _wall(code, repeat, env) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if proc.returncode:
            raise RuntimeError(f"{code!r} failed: {proc.stderr.decode()[-400:]}")
        best = min(best, time.perf_counter() - t0)
    return best


CLI = ("import sys; sys.argv = ['catlass-py', {args}]; from catlass_py.cli import main; r = main(); "
       "sys.exit(r if r else 0)")
INPUTS_AND_GOLDEN = (
    "from catlass_py import data, golden; "
    "x, _ = data.cached_inputs('10_grouped_matmul_slice_m_per_token_dequant', data.example10_inputs, {g}, {m}, {n}, "
    "{k}); golden.grouped_matmul_slice_m_per_token_dequant(x.a, x.b, x.group_list, x.scale, x.per_token_scale)")


def cli_rows(repeat):
    """(CLI run wall, inputs+golden wall, import wall, --help wall): fresh interpreters, best of ``repeat``, with
    a private warm input cache (both sides load the inputs from it) and compiled bytecode cached as an installed
    package has it (``bench_import.bytecode_cached_env``)."""
    with tempfile.TemporaryDirectory(prefix="catlass_py-bench-speed-") as cache:
        env = dict(bytecode_cached_env(os.path.join(cache, "pycache")), CATLASS_PY_CACHE_DIR=cache,
                   CATLASS_PY_CACHE="1", OPENBLAS_NUM_THREADS="1")
        args = ", ".join(repr(a) for a in ("run", "10_grouped_matmul_slice_m_per_token_dequant",
                                           *map(str, README)))
        run_code = CLI.format(args=args)
        _wall(run_code, 1, env)  # fills the cache
        g, m, n, k = README
        base_code = INPUTS_AND_GOLDEN.format(g=g, m=m, n=n, k=k)
        t_cli = t_base = float("inf")
        for _ in range(repeat):  # alternate, so that both see the same load
            t_cli = min(t_cli, _wall(run_code, 1, env))
            t_base = min(t_base, _wall(base_code, 1, env))
        t_import = _wall("import catlass_py", repeat, env)
        t_help = _wall(CLI.format(args="'--help'"), repeat, env)
    return t_cli, t_base, t_import, t_help


def host_data_rows(repeat):
    """(generate CPU, cached load CPU) of the README shape's inputs (a private cache directory)."""
    gen = min(_cpu(lambda: data.example10_inputs(*README))[0] for _ in range(max(1, repeat - 1)))
    saved = {v: os.environ.get(v) for v in ("CATLASS_PY_CACHE", "CATLASS_PY_CACHE_DIR")}
    with tempfile.TemporaryDirectory(prefix="catlass_py-bench-speed-") as d:
        os.environ.update(CATLASS_PY_CACHE="1", CATLASS_PY_CACHE_DIR=d)
        try:
            data.cached_inputs("bench", data.example10_inputs, *README)
            load = min(_cpu(lambda: data.cached_inputs("bench", data.example10_inputs, *README))[0]
                       for _ in range(repeat))
        finally:
            for v, x in saved.items():
                if x is None:
                    os.environ.pop(v, None)
                else:
                    os.environ[v] = x
    return gen, load


def _fmt_goal(ok: bool) -> str:
    return "met" if ok else "MISSED"


def sweeps(repeat, quick):
    """{sweep name: [(label, MACs, ratio, exact)]}: one parameter varied around the README shape."""
    g, m, n, k = README
    values = {
        "G": [1, 8, 32, 128] if quick else [1, 4, 8, 16, 32, 64, 128, 256],
        "m": [128, 512, 2048] if quick else [64, 128, 256, 512, 1024, 2048],
        "n": [256, 1024, 4096] if quick else [256, 512, 1024, 2048, 4096],
        "k": [256, 1024, 4096] if quick else [256, 512, 1024, 2048, 4096],
    }
    out = {}
    for name, vals in values.items():
        rows = []
        for v in vals:
            shape = {"G": (v, m, n, k), "m": (g, v, n, k), "n": (g, m, v, k), "k": (g, m, n, v)}[name]
            args = example10(shape)
            r = compare(args, repeat)
            macs = int(args[2][-1]) * shape[2] * shape[3]
            rows.append((f"{name}={v}", macs, r["ratio"], r["exact"]))
            print(f"  {name:>5} = {v:<6} {macs / 1e9:8.3f} G MACs   sim {r['sim'] * 1e3:8.1f} ms   "
                  f"ref {r['ref'] * 1e3:7.1f} ms   ratio {r['ratio']:5.2f}x   bit-exact {r['exact']}", flush=True)
        out[name] = rows
    args = example10(README)
    rows = []
    arch48 = ATLAS_A2.model_copy(update={"core_num": 48})
    for cores, arch, label in [(1, None, "1"), (2, None, "2"), (8, None, "8"), (24, None, "24"),
                               (48, arch48, "48 (custom ArchSpec)")]:
        r = compare(args, repeat, cores=cores, arch=arch)
        rows.append((f"cores={cores}", cores, r["ratio"], r["exact"]))
        print(f"  cores = {label:<21} sim {r['sim'] * 1e3:8.1f} ms   ref {r['ref'] * 1e3:7.1f} ms   "
              f"ratio {r['ratio']:5.2f}x   bit-exact {r['exact']}", flush=True)
    out["cores"] = rows
    return out


def plot(results, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, axc) = plt.subplots(1, 2, figsize=(12, 4.5), gridspec_kw={"width_ratios": [3, 1.2]})
    for name in ("G", "m", "n", "k"):
        rows = results[name]
        ax.plot([r[1] for r in rows], [r[2] for r in rows], marker="o", label=f"varying {name}")
        for label, x, y, _ in rows:
            ax.annotate(label.split("=")[1], (x, y), textcoords="offset points", xytext=(3, 3), fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("int8 MACs of the problem (rows of the non-empty groups x n x k)")
    ax.set_ylabel("simulation CPU / fastest exact numpy CPU")
    ax.axhline(4, color="grey", lw=0.8, ls="--")
    ax.set_title(f"flagship op around the README shape {README}, 24 cores")
    ax.legend(fontsize=8)
    ax.set_ylim(bottom=0)
    rows = results["cores"]
    axc.plot([r[1] for r in rows], [r[2] for r in rows], marker="o")
    axc.set_xscale("log", base=2)
    axc.set_xlabel("AI cores (48: custom ArchSpec)")
    axc.set_title("README shape, by core count")
    axc.set_ylim(bottom=0)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"plot written to {path}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="rounds per comparison (default 3)")
    ap.add_argument("--cli-repeat", type=int, default=3, help="fresh interpreters per CLI/import figure")
    ap.add_argument("--quick", action="store_true", help="fewer sweep points")
    ap.add_argument("--no-sweeps", action="store_true")
    ap.add_argument("--no-cli", action="store_true", help="skip the subprocess rows (CLI, import)")
    ap.add_argument("--plot", default=None, help="write the sweeps' plot here (needs matplotlib)")
    ns = ap.parse_args(argv)

    print("table: CPU time in one process, 1 BLAS thread, best of the rounds; ratios are medians of the "
          f"rounds' ratios ({ns.repeat} rounds)")
    readme = compare(example10(README), ns.repeat, golden_too=True)
    big = compare(one_group(2048, 2048, 2048), ns.repeat, golden_too=True)
    small = {label: compare(example10(shape), ns.repeat)
             for label, shape in (("G=8", (8, 512, 1024, 2048)), ("k=256", (128, 512, 1024, 256)))}
    plain, with_cost, share = cost_share(example10(README), ns.repeat)
    floor_t, floor_ratio, tile = tile_products(2048, 2048, 2048, ns.repeat)
    gen, load = host_data_rows(ns.repeat)
    print()
    w = 62
    print(f"{'what':<{w}} {'now':>28}  goal")
    print(f"{'flagship op / fastest exact numpy, README shape':<{w}} {readme['ratio']:>27.2f}x  <= 4x: "
          f"{_fmt_goal(readme['ratio'] <= 4)}   (sim {readme['sim'] * 1e3:.0f} ms, numpy {readme['ref'] * 1e3:.0f} ms,"
          f" bit-exact {readme['exact']})")
    print(f"{'flagship op / fastest exact numpy, one 2048^3 group':<{w}} {big['ratio']:>27.2f}x  <= 1.5x: "
          f"{_fmt_goal(big['ratio'] <= 1.5)}   (sim {big['sim'] * 1e3:.0f} ms, numpy {big['ref'] * 1e3:.0f} ms, "
          f"bit-exact {big['exact']})")
    print(f"{'golden / fastest exact numpy (README shape; 2048^3)':<{w}} "
          f"{readme['golden_ratio']:>20.2f}x; {big['golden_ratio']:.2f}x  <= 1x")
    if not ns.no_cli:
        t_cli, t_base, t_import, t_help = cli_rows(ns.cli_repeat)
        print(f"{'catlass-py run 10_... README / inputs + golden process (wall)':<{w}} {t_cli / t_base:>27.2f}x  "
              f"<= 1.3x: {_fmt_goal(t_cli / t_base <= 1.3)}   ({t_cli:.2f} s vs {t_base:.2f} s)")
        floor_cli = (t_base + t_import + with_cost) / t_base
        print(f"{'import catlass_py / catlass-py --help (wall)':<{w}} {t_import:>18.2f} s / {t_help:.2f} s  "
              f"<= 0.5 s: {_fmt_goal(max(t_import, t_help) <= 0.5)}")
    print(f"{'cost model share of a launch (README shape, launch CPU)':<{w}} {share:>+27.1%}  <= +15%: "
          f"{_fmt_goal(share <= 0.15)}   (plain {plain:.2f} s, with the cost model {with_cost:.2f} s)")
    worst = max(r["ratio"] for r in small.values())
    print(f"{'small shapes / fastest exact numpy: G=8; k=256':<{w}} "
          f"{small['G=8']['ratio']:>20.2f}x; {small['k=256']['ratio']:.2f}x  no worse than README "
          f"({readme['ratio']:.2f}x): {_fmt_goal(worst <= readme['ratio'] * 1.05)}   "
          f"(bit-exact {all(r['exact'] for r in small.values())})")
    print(f"{'host data, README shape: generate / load from the input cache (CPU)':<{w}} "
          f"{gen:>19.2f} s / {load:.2f} s  >= 3x faster than ~10 s, cached")
    print()
    print("floors: what the rows above cannot go below")
    print(f"{'L1-tile products alone (casts, BLAS, int32 adds), 2048^3':<{w}} {floor_ratio:>27.2f}x  "
          f"({floor_t * 1e3:.0f} ms; {tile[0]}x{tile[1]}x{tile[2]} tiles: the 2048^3 row's floor)")
    if not ns.no_cli:
        print(f"{'reference process + import + launch with the cost model':<{w}} {floor_cli:>27.2f}x  "
              "(the CLI row's floor: it does the reference's work, imports and launches)")
    if not ns.no_sweeps:
        print()
        print("scaling sweeps around the README shape (one parameter varied; 24 cores unless stated)")
        results = sweeps(ns.repeat, ns.quick)
        if ns.plot:
            try:
                plot(results, ns.plot)
            except ImportError:
                print("matplotlib is not installed (pip install -e '.[plot]'): no plot")


if __name__ == "__main__":
    main()
