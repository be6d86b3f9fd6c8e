"""Run the synchronisation mutants of the mutation-tested kernels and print the table of docs/correctness-checks.md.

    python tools/mutation_table.py [--kernel NAME ...] [--undetected]

For each kernel: its synchronisation sites (recorded at two shapes, one with an odd number of blocks per AI
core), every mutant of catlass_py.analysis.mutants.catalogue, and which error reported it. Undetected mutants are
listed with --undetected (each must be argued equivalent in tests/analysis/test_mutants.py).
"""

from __future__ import annotations

import argparse
import collections
import sys
import time

sys.path.insert(0, __file__.rsplit("/tools/", 1)[0] + "/tests/analysis")

from mutation_kernels import KERNELS  # noqa: E402

from catlass_py.analysis.mutants import automatic_equivalence, catalogue, check, record_sites  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel", action="append", default=None)
    ap.add_argument("--undetected", action="store_true")
    ns = ap.parse_args(argv)
    names = ns.kernel or list(KERNELS)
    rows = []
    for name in names:
        runners = KERNELS[name]()
        t0 = time.perf_counter()
        sites = record_sites(runners)
        muts = catalogue(sites)
        results = check(runners, muts)
        recs = {r.site: r for r in sites}
        by = collections.Counter(r.detected_by or ("equivalent (automatic)" if automatic_equivalence(r.mutation, recs)
                                                   else "not detected") for r in results)
        rows.append((name, len(sites), len(muts), by, time.perf_counter() - t0))
        if ns.undetected:
            for r in results:
                if not r.detected and not automatic_equivalence(r.mutation, recs):
                    print(f"  {name}: {r.mutation}  {r.message}")
    print("| kernel | sync sites | mutants | RaceError | DeadlockError | FlagOverflowError | UnpairedFlagError | "
          "equivalent (automatic) | not detected |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, nsites, nmuts, by, secs in rows:
        print(f"| {name} | {nsites} | {nmuts} | {by['RaceError']} | {by['DeadlockError']} | {by['FlagOverflowError']} | "
              f"{by['UnpairedFlagError']} | {by['equivalent (automatic)']} | {by['not detected']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
