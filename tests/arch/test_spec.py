import pytest

from catlass_py.arch import ASCEND_950, ATLAS_A2, ArchSpec, load_arch
from catlass_py.errors import ConfigError

KIB = 1024


def test_atlas_a2_buffer_sizes_match_catlass_arch_hpp():
    assert ATLAS_A2.buffer_sizes() == {
        "L1": 512 * KIB, "L0A": 64 * KIB, "L0B": 64 * KIB, "BT": 1 * KIB,
        "L0C": 128 * KIB, "UB": 192 * KIB, "FB": 7 * KIB,
    }
    assert ATLAS_A2.aiv_per_aic == 2
    assert ATLAS_A2.max_pending_sets == 15
    assert (ATLAS_A2.aiv_inter_block_barrier_id, ATLAS_A2.aic_inter_block_barrier_id,
            ATLAS_A2.aiv_inter_subblock_barrier_id) == (8, 9, 10)


def test_ascend_950_differs_where_catlass_says():
    assert ASCEND_950.l0c_size == 256 * KIB
    assert ASCEND_950.ub_size == 248 * KIB
    assert ASCEND_950.bt_size == 4 * KIB
    assert ASCEND_950.fb_size == 16 * KIB
    assert ASCEND_950.l1_size == ATLAS_A2.l1_size


def test_spec_is_frozen():
    with pytest.raises(Exception):
        ATLAS_A2.l1_size = 1


def test_load_arch_from_toml_file_with_base(tmp_path):
    path = tmp_path / "small.toml"
    path.write_text('[arch]\nbase = "AtlasA2"\nname = "TinyA2"\ncore_num = 4\nub_size = 65536\n')
    spec = load_arch(path)
    assert isinstance(spec, ArchSpec)
    assert (spec.name, spec.core_num, spec.ub_size, spec.l1_size) == ("TinyA2", 4, 65536, ATLAS_A2.l1_size)


def test_load_arch_rejects_bad_values():
    with pytest.raises(ConfigError, match="core_num"):
        load_arch('base = "AtlasA2"\ncore_num = 0\n')
    with pytest.raises(ConfigError, match="l1_sise"):
        load_arch('base = "AtlasA2"\nl1_sise = 5\n')
