"""tests/allocator.py: jemalloc in LD_PRELOAD for the session's later processes, unless the
user chose otherwise or the machine lacks it."""
import os
import subprocess
import sys

import pytest

from tests import allocator


def test_export_sets_the_library_unless_told_otherwise(monkeypatch, tmp_path):
    (tmp_path / allocator.LIBRARY).write_bytes(b"")
    monkeypatch.setattr(allocator, "SEARCH", (str(tmp_path / "none"), str(tmp_path)))
    want = str(tmp_path / allocator.LIBRARY)
    env = {}
    assert allocator.export(env) == want and env == {"LD_PRELOAD": want}
    mine = {"LD_PRELOAD": "/opt/my.so"}                  # the user's own preload stays
    assert allocator.export(mine) is None and mine == {"LD_PRELOAD": "/opt/my.so"}
    system = {allocator.CHOICE_ENV: "system"}
    assert allocator.export(system) is None and "LD_PRELOAD" not in system
    monkeypatch.setattr(allocator, "SEARCH", (str(tmp_path / "none"),))
    assert allocator.library_path() is None and allocator.export({}) is None


@pytest.mark.skipif(allocator.library_path() is None, reason="jemalloc is not installed")
def test_a_subprocess_of_the_session_allocates_through_jemalloc():
    probe = "print(any('libjemalloc' in line for line in open('/proc/self/maps')))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout.strip()
    expected = allocator.LIBRARY in os.environ.get("LD_PRELOAD", "")
    assert out == str(expected)
    if os.environ.get(allocator.CHOICE_ENV) != "system":     # jemalloc, or the user's own
        assert os.environ.get("LD_PRELOAD"), "the session did not export jemalloc"
