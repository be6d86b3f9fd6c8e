"""Peak memory of example 10 over a whole pipeline: one run, ``--seeds N`` and repeated runs in one process.

Each measurement runs in a fresh Python process (its own peak resident set size: Linux's VmHWM, else
``resource.getrusage(RUSAGE_SELF).ru_maxrss``):

* one run: ``catlass-py run 10_grouped_matmul_slice_m_per_token_dequant G m n k`` (the README shape, 128 512
  1024 2048, by default);
* ``--seeds 4``: the same command line with ``--seeds 4`` (five launches: the run and four interleavings);
* ten runs: the command line executed ten times by :func:`catlass_py.cli.main` in one process (the JSON of
  every run kept), with the resident set size after each run.

Targets: ``--seeds 4`` within 1.2x of one run, ten runs within 1.1x. The host inputs come from a temporary
input cache filled by a first, unmeasured process, so every measured run loads the same inputs. Figures are
printed, never asserted.

    python benchmarks/bench_memory.py [--shape G m n k] [--runs 10] [--seeds 4] [--cores N]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import subprocess
import sys
import tempfile

MIB = 1 << 20
EXAMPLE = "10_grouped_matmul_slice_m_per_token_dequant"


def _rss() -> int:
    """The current resident set size in bytes (Linux /proc; the peak elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return _peak()


def _peak() -> int:
    """This process's own peak resident set size: Linux's VmHWM (its ru_maxrss also counts the resident peak of
    the image ``exec`` replaced, i.e. the parent's at the fork), else ru_maxrss."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    scale = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB on Linux
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def _child(ns) -> None:
    """One measurement in this (fresh) process; prints one JSON line."""
    from catlass_py import cli

    argv = ["run", EXAMPLE, *map(str, ns.shape), "--json"]
    if ns.cores:
        argv += ["--cores", str(ns.cores)]
    if ns.mode == "seeds":
        argv += ["--seeds", str(ns.seeds)]
    runs = ns.runs if ns.mode == "repeat" else 1
    kept, after = [], []
    start = _rss()
    for _ in range(runs):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = cli.main(argv)
        if status != 0:
            raise SystemExit(f"catlass-py {' '.join(argv)} exited {status}")
        kept.append(json.loads(out.getvalue()))
        after.append(_rss())
    print(json.dumps({"peak": _peak(), "start": start, "after": after, "passed": all(r["passed"] for r in kept)}))


def _measure(ns, mode: str, env: dict) -> dict:
    cmd = [sys.executable, __file__, "--child", mode, "--shape", *map(str, ns.shape), "--runs", str(ns.runs),
           "--seeds", str(ns.seeds), "--cores", str(ns.cores or 0)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{mode}: the measuring process failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", type=int, nargs=4, default=(128, 512, 1024, 2048), metavar=("G", "m", "n", "k"))
    parser.add_argument("--runs", type=int, default=10, help="runs in one process (default 10)")
    parser.add_argument("--seeds", type=int, default=4, help="--seeds of the interleaving measurement (default 4)")
    parser.add_argument("--cores", type=int, default=0, help="AI cores (default: every core of the arch)")
    parser.add_argument("--child", choices=("warm", "one", "seeds", "repeat"), help=argparse.SUPPRESS)
    ns = parser.parse_args()
    if ns.child:
        ns.mode = ns.child
        _child(ns)
        return

    with tempfile.TemporaryDirectory(prefix="catlass-bench-memory-") as cache:
        env = {**os.environ, "CATLASS_PY_CACHE": "1", "CATLASS_PY_CACHE_DIR": cache}
        _measure(ns, "warm", env)  # fills the input cache
        one = _measure(ns, "one", env)
        seeds = _measure(ns, "seeds", env)
        repeat = _measure(ns, "repeat", env)

    shape = " ".join(map(str, ns.shape))
    print(f"example {EXAMPLE} {shape}, peak resident set size (fresh process each):")
    rows = [("one run", one, None), (f"--seeds {ns.seeds}", seeds, 1.2), (f"{ns.runs} runs in one process", repeat, 1.1)]
    for label, m, target in rows:
        ratio = m["peak"] / one["peak"]
        verdict = "" if target is None else (f"  (target <= {target}x: {'met' if ratio <= target else 'MISSED'})")
        print(f"  {label:24s} {m['peak'] / MIB:8.1f} MiB  {ratio:5.2f}x{verdict}")
    print(f"  resident after each of the {ns.runs} runs (MiB): "
          + " ".join(f"{a / MIB:.0f}" for a in repeat["after"]))
    if not all(m["passed"] for m in (one, seeds, repeat)):
        print("  WARNING: a run's compare failed")


if __name__ == "__main__":
    main()
