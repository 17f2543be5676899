"""tests/python/scene_files/fake_reference/examples/workers/l3/bump_double/test_bump_double.py —
program tests as the reference's examples/workers write them: plain functions with its fixtures
and marks."""

import pytest

from .main import run


@pytest.mark.platforms(["a2a3sim", "a2a3"])
@pytest.mark.runtime("tensormap_and_ringbuffer")
@pytest.mark.device_count(2)
def test_bump_double(st_platform, st_device_ids, capsys):
    rc = run(st_platform, [int(d) for d in st_device_ids])
    out = capsys.readouterr().out
    assert rc == 0
    assert "checks PASSED" in out


@pytest.mark.platforms(["a2a3sim"])
@pytest.mark.manual
def test_wrong_on_purpose(st_platform):
    assert st_platform == "a5sim", "a program whose check fails is FAILED"


@pytest.mark.platforms(["a5sim"])
@pytest.mark.manual(["a5sim"])
def test_needs_a_fixture_we_lack(st_platform, st_network1_peer):
    pass


def test_not_a_program(tmp_path):
    pass
