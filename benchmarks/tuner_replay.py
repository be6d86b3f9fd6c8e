"""Rank CATLASS's published tuner result under other cost parameters without re-simulating the sweep.

    python benchmarks/tuner_replay.py --record                  # simulate every configuration once (minutes)
    python benchmarks/tuner_replay.py                           # rank under the shipped parameters
    python benchmarks/tuner_replay.py '{"gm_latency_cycles": 840}' '{"launch_overhead_us": 4.6}'
    python benchmarks/tuner_replay.py --filter _31 '{...}'      # only configurations whose name contains _31

The tuner README case of CATLASS (``tools/tuner/README.md``: example 00_basic_matmul, 256x512x1024 fp16 on an
Ascend910B2; best L1 64x128x128, L0 64x128x64, swizzle <3,1>, 12.74 us; baseline 32x128x128 / 32x128x32 <3,0>,
19.38 us) over the tuner's ``catlass`` space (3402 configurations, docs/tuning.md). ``--record`` keeps each
configuration's timing-only event stream (``EventRecorder``) in ``--cache``; a replay times the streams with the
cost model under each JSON object of cost parameters, as ``benchmarks/calibrate.py`` does for the calibration
points, and prints the published best's rank, the baseline's and the best few. Recording all 3402 takes about
10 minutes on one core and 550 MB; loading them about 3 minutes and each replay of all about 5 (``--filter``
narrows both). Delete the cache after changing a kernel or what events carry; parameters that only the cost
model reads need no new recording.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from pathlib import Path

from catlass_py.arch import LaunchParams
from catlass_py.arch.spec import get_arch
from catlass_py.assemblies.settings import parse_settings
from catlass_py.calibration import EventRecorder, replay
from catlass_py.tune.evaluate import _script, example_arch
from catlass_py.tune.space import legal_configs, space_of

EXAMPLE, ARGS, ARCH, CORES = "00_basic_matmul", ["256", "512", "1024"], "910B2", 24
BEST, BASELINE = "64x128x128_64x128x64_31", "32x128x128_32x128x32_30"
"""The README's best (12.74 us) and first case (19.38 us), by :func:`name`."""


def name(config: dict[str, str]) -> str:
    """File name of a configuration: L1 tile, L0 tile, swizzle without the comma."""
    return f"{config['l1_tile']}_{config['l0_tile']}_{config['swizzle'].replace(',', '')}"


def record_all(cache: Path, only: str = "") -> None:
    """Record every legal configuration of the space whose name contains ``only`` and is not yet in ``cache``."""
    example = _script(EXAMPLE)
    arch = example_arch(example)
    configs = [c for c in legal_configs(example.assemble, space_of(EXAMPLE, "catlass"), arch) if only in name(c)]
    cache.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    for i, cfg in enumerate(configs):
        path = cache / f"{name(cfg)}.pkl"
        if path.exists():
            continue
        recorder = EventRecorder()
        example.run(list(ARGS), cores=CORES, observers=(recorder,), options=LaunchParams(numerics=False),
                    config=parse_settings(example.assemble, dict(cfg), arch))
        with open(path, "wb") as fh:
            pickle.dump(recorder.launches, fh, protocol=pickle.HIGHEST_PROTOCOL)
        if i % 100 == 0:
            print(f"{i}/{len(configs)} recorded ({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("params", nargs="*", help="JSON objects of cost parameters (default: the shipped ones)")
    ap.add_argument("--record", action="store_true", help="simulate the configurations not yet recorded (with --filter:"
                    " only those)")
    ap.add_argument("--filter", default="", help="only configurations whose name contains this text")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--cache", default=str(Path.home() / ".cache" / "catlass_py" / "tuner_replay"))
    ns = ap.parse_args(argv)
    cache = Path(ns.cache)
    if ns.record:
        record_all(cache, ns.filter)
    paths = sorted(p for p in cache.glob("*.pkl") if ns.filter in p.stem)
    if not paths:
        print(f"no recordings in {cache} (run with --record)", file=sys.stderr)
        return 1
    streams = {}
    for p in paths:
        with open(p, "rb") as fh:
            streams[p.stem] = pickle.load(fh)
    base = get_arch(ARCH)
    for text in ns.params or ["{}"]:
        params = json.loads(text)
        arch = base.model_copy(update={"cost": base.cost.model_copy(update=params)}) if params else base
        times = {k: replay(v, arch).microseconds for k, v in streams.items()}
        order = sorted(times, key=times.get)
        rank = {k: i + 1 for i, k in enumerate(order)}
        print(f"{text}: {len(times)} configurations; published best {BEST} rank {rank.get(BEST)} "
              f"({times.get(BEST, float('nan')):.2f} us, published 12.74), baseline rank {rank.get(BASELINE)} "
              f"({times.get(BASELINE, float('nan')):.2f} us, published 19.38)")
        for k in order[:ns.top]:
            print(f"  {rank[k]:5d}  {k}  {times[k]:.2f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
