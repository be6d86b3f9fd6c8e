"""Start-up time of catlass_py: ``import catlass_py``, ``catlass-py --help``, ``catlass-py list`` and, for
reference, the bare interpreter, ``import numpy``, ``import ml_dtypes``, the flagship operator and what a CLI run of
example 10 loads. Each command runs in a fresh interpreter; the figure is the best of N wall times (the machine's
load only ever adds time). The interpreters cache compiled bytecode, as an installed package has it (in a
private ``PYTHONPYCACHEPREFIX``, even where ``PYTHONDONTWRITEBYTECODE`` is set): the first of the N runs of a
command fills the cache. Target: ``import catlass_py`` and ``catlass-py --help`` under 0.5 s.

    python benchmarks/bench_import.py [--repeat N] [--src DIR]

``--src DIR`` measures another checkout of the package (DIR goes first on sys.path), e.g. a worktree of an
older commit, for a before/after comparison. Never asserted in tests: tests/test_cli_hygiene.py and
tests/test_lazy.py check what is imported, not how long it takes.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

TARGET_S = 0.5

CLI = "import sys; sys.argv = ['catlass-py', {args}]; from catlass_py.cli import main; sys.exit(main())"

COMMANDS = {
    "python (bare interpreter)": "pass",
    "import catlass_py": "import catlass_py",
    "catlass-py --help": CLI.format(args="'--help'"),
    "catlass-py --version": CLI.format(args="'--version'"),
    "catlass-py list": CLI.format(args="'list'"),
    "import numpy": "import numpy",
    "import ml_dtypes": "import ml_dtypes",
    "the flagship operator (a run)": "from catlass_py.ops import grouped_matmul_slice_m_per_token_dequant",
    "example 10 + cost model (a CLI run)": "import importlib; from catlass_py.analysis import CostModel; "
                                           "importlib.import_module('catlass_py.examples.10_grouped_matmul_slice_m_"
                                           "per_token_dequant')",
}
TARGETS = ("import catlass_py", "catlass-py --help")


# With --src: the checkout goes first on sys.path and an editable install's import hook is removed (it would
# otherwise still map catlass_py to the installed tree).
SRC_PREFIX = ("import sys; sys.path.insert(0, {src!r}); "
              "sys.meta_path[:] = [f for f in sys.meta_path if '__editable__' not in getattr(f, '__module__', '')]; ")


def bytecode_cached_env(pycache: str) -> dict[str, str]:
    """This process's environment for a fresh interpreter that writes and reads compiled bytecode under
    ``pycache`` (an installed package's ``.pyc`` files, without writing into the source tree)."""
    env = dict(os.environ, PYTHONPYCACHEPREFIX=pycache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def best_of(code: str, repeat: int, env: dict[str, str]) -> tuple[float, int]:
    """(best wall time, exit status of the last run)."""
    best, rc = float("inf"), 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        rc = subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL).returncode
        best = min(best, time.perf_counter() - t0)
    return best, rc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7, help="fresh interpreters per command (best of N)")
    parser.add_argument("--src", default=None, help="a checkout of catlass_py to measure instead of the installed one")
    ns = parser.parse_args(argv)
    env = bytecode_cached_env(tempfile.mkdtemp(prefix="catlass_py-pycache-"))
    prefix = SRC_PREFIX.format(src=os.path.abspath(ns.src)) if ns.src else ""
    print(f"best of {ns.repeat} fresh interpreters ({sys.executable})")
    width = max(map(len, COMMANDS))
    bare = None
    ok = True
    for label, code in COMMANDS.items():
        t, rc = best_of(prefix + code, ns.repeat, env)
        bare = t if bare is None else bare
        mark = f"  (fails: exit status {rc})" if rc else ""
        if label in TARGETS:
            ok &= t < TARGET_S
            mark += f"  target < {TARGET_S} s: {'met' if t < TARGET_S else 'MISSED'}"
        extra = "" if label.startswith("python") else f"  (+{t - bare:.3f} s over the bare interpreter)"
        print(f"{label:<{width}}  {t:7.3f} s{extra}{mark}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
