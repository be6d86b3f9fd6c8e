"""catlass_py.testing: CATLASS's compare as an assertion that names the worst element, and check() of operators
and kernels (golden, race detector, consumed flags, interleavings)."""

import numpy as np
import pytest

from catlass_py import golden, ops
from catlass_py.arch import Pipe
from catlass_py.errors import RaceError, UnpairedFlagError
from catlass_py.testing import CheckResult, assert_compare, check


def test_assert_compare_reports_the_worst_element():
    g = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert assert_compare(g.astype(np.float16), g, 8).passed
    bad = g.copy()
    bad[1, 2] = 100.0
    with pytest.raises(AssertionError, match=r"Compare failed. Error count: 1 of 12 .*worst at index \(1, 2\): "
                                             r"actual 100.0, golden 6.0"):
        assert_compare(bad, g, 8)
    with pytest.raises(AssertionError, match="shape"):
        assert_compare(g[:2], g, 8)


def test_assert_compare_is_exact_on_integers_and_needs_k_for_floats():
    x = np.arange(6, dtype=np.int32)
    assert assert_compare(x, x).passed
    with pytest.raises(AssertionError, match="Error count: 1"):
        assert_compare(x + (x == 3), x)
    with pytest.raises(TypeError, match="k"):
        assert_compare(x.astype(np.float32), x.astype(np.float32))


def test_check_runs_an_operator_with_its_golden_and_interleavings():
    rng = np.random.default_rng(0)
    a, b = rng.uniform(-1, 1, (130, 64)).astype(np.float16), rng.uniform(-1, 1, (64, 260)).astype(np.float16)
    result = check(ops.matmul_add, a, b, np.zeros((130, 260), np.float16), core_num=2, seeds=2,
                   golden=lambda a, b, x: golden.matmul_add(a, b, x), k=64)
    assert isinstance(result, CheckResult) and result.compare.passed
    assert result.launch.race_detector is not None and result.interleavings.seeds == [0, 1]


def test_check_finds_the_race_of_example_05_zero_fill():
    a, b = np.ones((64, 40), np.float16), np.ones((40, 96), np.float16)
    with pytest.raises(RaceError):
        check(ops.grouped_matmul_slice_k, a, b, np.array([20, 20, 40], np.int64), core_num=1)
    check(ops.grouped_matmul_slice_k, a, b, np.array([20, 20, 40], np.int64), core_num=1, races=False)


class _LeavesAFlagSet:
    """A kernel whose vector cores set a cross-core flag their cube core never waits for."""

    def aic(self, ctx, params):
        pass

    def aiv(self, ctx, params):
        ctx.cross_core_set_flag(0, 2, Pipe.S)


def test_check_of_an_operator_needs_unconsumed_flags_to_be_none():
    from catlass_py.arch import launch

    def op(*, core_num, options, return_launch):
        return np.zeros(1), launch(_LeavesAFlagSet(), None, core_num, options=options)

    with pytest.raises(UnpairedFlagError, match="unconsumed set"):
        check(op, core_num=1)
    assert check(op, core_num=1, flags=False).launch.unconsumed_flags


def test_the_fixtures(catlass_check, catlass_compare, catlass_core, catlass_arch):
    assert catlass_check is check and catlass_compare is assert_compare
    core = catlass_core("AIV")
    assert core.resource.ub_buf.size == catlass_arch.ub_size
