"""Batches rendered ahead by worker processes are the batches rendered in process."""
import numpy as np

from lib.dynamic_detr import prefetch

KW = dict(seed=3, count=2, size=32, num_classes=3, min_objects=1, max_objects=3, min_scale=6,
          max_scale=14)


def test_prefetched_batches_equal_in_process_ones():
    with prefetch.Prefetcher(1, 3, **KW) as ahead:
        for step in (0, 1, 2, 9, 10, 4):                 # forward runs, a jump, a jump back
            got, want = ahead(step), prefetch.train_batch(step, **KW)
            assert set(got) == set(want)
            for k in want:
                np.testing.assert_array_equal(got[k], want[k])
            assert set(ahead.pending) <= set(range(step + 1, step + 3))
    assert ahead.pool is None
    inline = prefetch.Prefetcher(0, 0, **KW)
    np.testing.assert_array_equal(inline(5)["images"], prefetch.train_batch(5, **KW)["images"])
    assert not np.array_equal(inline(5)["images"], inline(6)["images"])
