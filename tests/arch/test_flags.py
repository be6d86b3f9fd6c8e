"""Counter semantics of cross-core flags (Ascend C CrossCoreSetFlag)."""

import pytest

from catlass_py.arch import ATLAS_A2, CoreId, CoreType, FlagBoard
from catlass_py.errors import ArgumentError, FlagOverflowError


def _board(block_dim=2):
    cores = []
    for b in range(block_dim):
        cores += [CoreId(CoreType.AIC, b), CoreId(CoreType.AIV, b, 0), CoreId(CoreType.AIV, b, 1)]
    return FlagBoard(ATLAS_A2, cores), cores


def test_mode2_aic_set_increments_both_aivs_of_its_ai_core_only():
    board, (aic0, v00, v01, aic1, v10, v11) = _board()
    grown = board.set(aic0, 3, 2, seq=1)
    assert set(grown) == {v00, v01}
    assert [board.counter(c, 3) for c in (aic0, v00, v01, aic1, v10, v11)] == [0, 1, 1, 0, 0, 0]
    assert board.try_wait(v00, 3) == (1,)
    assert board.try_wait(v00, 3) is None
    assert board.counter(v01, 3) == 1


def test_mode2_aiv_set_counts_on_aic_only_when_both_aivs_have_set():
    board, (aic0, v00, v01, *_) = _board()
    assert board.set(v00, 1, 2, seq=10) == []
    assert board.set(v00, 1, 2, seq=11) == []
    assert board.counter(aic0, 1) == 0
    assert board.set(v01, 1, 2, seq=12) == [aic0]
    assert board.counter(aic0, 1) == 1
    assert board.try_wait(aic0, 1) == (10, 12)
    assert board.set(v01, 1, 2, seq=13) == [aic0]
    assert board.try_wait(aic0, 1) == (11, 13)


def test_mode1_needs_both_aivs_and_releases_both():
    board, (aic0, v00, v01, *_) = _board()
    assert board.set(v01, 10, 1, seq=1) == []
    assert set(board.set(v00, 10, 1, seq=2)) == {v00, v01}
    assert board.counter(v00, 10) == board.counter(v01, 10) == 1
    with pytest.raises(ArgumentError, match="mode 1"):
        board.set(aic0, 10, 1, seq=3)


def test_mode0_is_a_barrier_over_all_cores_of_one_type():
    board, (aic0, v00, v01, aic1, v10, v11) = _board()
    assert board.set(aic0, 9, 0, seq=1) == []
    assert set(board.set(aic1, 9, 0, seq=2)) == {aic0, aic1}
    assert board.counter(v00, 9) == 0
    for i, v in enumerate((v00, v01, v10)):
        assert board.set(v, 8, 0, seq=10 + i) == []
    assert set(board.set(v11, 8, 0, seq=20)) == {v00, v01, v10, v11}


def test_more_than_15_pending_sets_overflow():
    board, (aic0, v00, v01, *_) = _board()
    for i in range(15):
        board.set(aic0, 0, 2, seq=i)
    with pytest.raises(FlagOverflowError, match="15"):
        board.set(aic0, 0, 2, seq=99)
    for i in range(15):
        board.set(v00, 1, 2, seq=100 + i)
    with pytest.raises(FlagOverflowError):
        board.set(v00, 1, 2, seq=200)


def test_flag_id_and_mode_range():
    board, (aic0, *_) = _board()
    with pytest.raises(ArgumentError, match="0..15"):
        board.set(aic0, 16, 2, seq=1)
    with pytest.raises(ArgumentError, match="mode"):
        board.set(aic0, 0, 3, seq=1)
    with pytest.raises(ArgumentError):
        board.try_wait(aic0, -1)


def test_leftover_reports_unconsumed_sets():
    board, (aic0, v00, v01, *_) = _board()
    board.set(aic0, 2, 2, seq=1)
    board.try_wait(v00, 2)
    assert board.leftover() == [(v01, 2, 1)]
