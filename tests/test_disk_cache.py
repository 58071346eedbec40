"""Arrays kept on disk between processes (:mod:`pinbench.stats.disk_cache`): read back the
same, computed again when what made them changes or the file is damaged, and never an error
where the folder cannot be written."""
import numpy as np
import pytest

from pinbench.stats import disk_cache, location
from pinbench.stats.disk_cache import cached


def test_an_array_is_computed_once_and_read_back(tmp_path, monkeypatch):
    monkeypatch.setenv("PINBENCH_CACHE", str(tmp_path / "cache"))
    source = tmp_path / "module.py"
    source.write_text("x = 1\n")
    calls = []

    def compute():
        calls.append(1)
        return np.arange(4.0) / 3

    first = cached("t", (1, "a"), [str(source)], (4,), compute)
    again = cached("t", (1, "a"), [str(source)], (4,), compute)
    assert calls == [1] and np.array_equal(first, again)  # bit for bit
    cached("t", (2, "a"), [str(source)], (4,), compute)  # another key: computed
    assert len(calls) == 2
    for path in (tmp_path / "cache").iterdir():  # damaged files: computed again, kept again
        path.write_bytes(b"\x93NUMPY garbage")
    assert np.array_equal(cached("t", (1, "a"), [str(source)], (4,), compute), first)
    assert np.array_equal(cached("t", (1, "a"), [str(source)], (4,), compute), first)
    assert len(calls) == 3
    for path in (tmp_path / "cache").glob("t-*.npy"):  # another shape
        np.save(path, np.zeros(3))
    cached("t", (1, "a"), [str(source)], (4,), compute)
    assert len(calls) == 4
    disk_cache._source.cache_clear()
    source.write_text("x = 2\n")  # the code that computes it changed: computed afresh
    cached("t", (1, "a"), [str(source)], (4,), compute)
    assert len(calls) == 5
    assert not list((tmp_path / "cache").glob("*.tmp"))


def test_a_folder_that_cannot_be_written_costs_the_time_only(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setenv("PINBENCH_CACHE", str(blocked / "cache"))  # below a file: no folder
    value = cached("t", (1,), [__file__], (2,), lambda: np.ones(2))
    assert np.array_equal(value, np.ones(2))


def test_a_reference_distribution_read_back_gives_the_same_p_values(tmp_path, monkeypatch):
    """The permutation test's reference kept by one process and read by the next: the same
    p-values to the bit as drawing it."""
    monkeypatch.setenv("PINBENCH_CACHE", str(tmp_path))
    x, y = np.linspace(1.0, 2.0, 9) ** 1.5, np.linspace(0.9, 1.8, 9) ** 1.4
    location._reference.cache_clear()
    drawn = location.brunner_munzel(x, y)  # 9 + 9: C(18, 9) > EXACT_LIMIT, the reference
    assert drawn[1] == "brunner-munzel-permutation"
    assert len(list(tmp_path.glob("reference-*.npy"))) == 1
    location._reference.cache_clear()  # as a new process
    assert location.brunner_munzel(x, y) == drawn
    values, absolute = location._reference(9, 9)
    assert np.array_equal(values, location._draw_reference(9, 9))
    assert np.array_equal(absolute, np.sort(np.abs(values)))


@pytest.fixture(autouse=True)
def _fresh_sources():
    disk_cache._source.cache_clear()
    yield
    disk_cache._source.cache_clear()
    location._reference.cache_clear()
