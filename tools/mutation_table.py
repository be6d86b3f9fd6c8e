"""Run the synchronisation mutants of the mutation-tested kernels and print the generated blocks of
docs/correctness-checks.md.

    python tools/mutation_table.py [--kernel NAME ...] [--undetected] [--write]

For each kernel (tests/analysis/mutation_kernels.py: examples 10, 07, 09, 12 and 37, each at two shapes): its
synchronisation sites, every mutant of catlass_py.analysis.mutants.catalogue, and which error reported it or
why it is equivalent (automatic arguments of catlass_py.analysis.mutants.automatic_equivalence, written ones
of tests/analysis/test_mutants.py). Prints the three generated markdown blocks of the doc (the table, the
equivalent mutants by argument, the bug table on docs/extending.md's dequant + bias + ReLU epilogue) between
their markers, exactly as the doc holds them; --write replaces them in docs/correctness-checks.md.
--undetected lists, on stderr, the mutants neither reported nor argued equivalent (the test fails on any; so
does the exit status). Takes about a minute of CPU for the five kernels.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "analysis"))

from mutation_kernels import (  # noqa: E402
    KERNELS,
    bug_table,
    classify,
    render_bugs,
    render_equivalences,
    render_table,
    run_mutants,
)
from test_mutants import argued  # noqa: E402

from catlass_py.analysis.mutants import mutant_key  # noqa: E402

DOC = ROOT / "docs" / "correctness-checks.md"


def blocks(runs, classified) -> dict[str, str]:
    """The doc's generated blocks by name, each with its markers."""
    out = {}
    for name, text in (("table", render_table(runs, classified)),
                       ("equivalences", render_equivalences(runs, classified)),
                       ("bugs", render_bugs(bug_table()))):
        out[name] = f"<!-- mutation-{name}:begin -->\n{text}\n<!-- mutation-{name}:end -->"
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernel", action="append", default=None, help="a kernel of the table (repeatable)")
    ap.add_argument("--undetected", action="store_true", help="list the mutants neither reported nor equivalent")
    ap.add_argument("--write", action="store_true", help="replace the blocks in docs/correctness-checks.md")
    ns = ap.parse_args(argv)
    names = ns.kernel or list(KERNELS)
    unknown = [n for n in names if n not in KERNELS]
    if unknown:
        ap.error(f"unknown kernel(s) {unknown}; the kernels are {list(KERNELS)}")
    runs, classified = [], {}
    for name in names:
        t0 = time.perf_counter()
        run = run_mutants(name)
        runs.append(run)
        classified[name] = classify(run, argued)
        print(f"{name}: {len(run.results)} mutants in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        if ns.undetected:
            for r, cat, why in classified[name]:
                if cat == "not detected":
                    print(f"  not detected: {mutant_key(r.mutation, run.sites)}\n    ({r.mutation}) {why}",
                          file=sys.stderr)
    generated = blocks(runs, classified)
    print("\n\n".join(generated.values()))
    if ns.write:
        if names != list(KERNELS):
            ap.error("--write needs every kernel")
        doc = DOC.read_text()
        for name, text in generated.items():
            doc, n = re.subn(rf"<!-- mutation-{name}:begin -->.*?<!-- mutation-{name}:end -->",
                             lambda _m, t=text: t, doc, flags=re.S)
            if n != 1:
                ap.error(f"{DOC} has no mutation-{name} block")
        DOC.write_text(doc)
    return 1 if any(cat == "not detected" for c in classified.values() for _, cat, _ in c) else 0


if __name__ == "__main__":
    sys.exit(main())
