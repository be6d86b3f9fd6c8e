"""The tuner: rank an example's legal configurations by the cost model's prediction, without a board.

Counterpart of CATLASS's msTuner_CATLASS (``tools/tuner/README.md``), which instantiates every configuration of a
search space (``tools/library/scripts/search_space.py``) and times each on an NPU. Here every configuration is
predicted by a timing-only run of the example (``LaunchParams(numerics=False)``: the kernel's control flow, flags
and instruction stream through the cost model, no numpy work), so a sweep needs no hardware and its cost does
not grow with the problem's arithmetic.

* :mod:`catlass_py.tune.space` - the search space of each example (tile-shape ranges, swizzles, stages), the
  legality check (the assembly's own ``ConfigError`` rules) and the roofline bound used for pruning;
* :mod:`catlass_py.tune.evaluate` - one configuration's prediction (what a worker runs);
* :mod:`catlass_py.tune.cache` - the on-disk result cache keyed by (example, args, arch, cores, config, model
  version);
* :mod:`catlass_py.tune.sweep` - the sweep over one or many shapes on a process pool or Ray, streamed; the
  ranking, the CSV/JSON writer and the picture;
* :mod:`catlass_py.tune.command` - ``catlass-py tune``.

``docs/tuning.md`` documents the spaces, the cache and the executors.
"""

from catlass_py.tune.cache import ResultCache, model_version, task_key
from catlass_py.tune.evaluate import Task, evaluate, evaluate_batch
from catlass_py.tune.space import SPACES, SearchSpace, TileRange, legal_configs, roofline_us, space_of
from catlass_py.tune.sweep import (
    LocalExecutor,
    Ranking,
    RayExecutor,
    Row,
    RowWriter,
    SerialExecutor,
    SweepStats,
    draw_search,
    sweep,
)

__all__ = [
    "LocalExecutor", "Ranking", "RayExecutor", "ResultCache", "Row", "RowWriter", "SPACES", "SearchSpace",
    "SerialExecutor", "SweepStats", "Task", "TileRange", "draw_search", "evaluate", "evaluate_batch",
    "legal_configs", "model_version", "roofline_us", "space_of", "sweep", "task_key",
]
