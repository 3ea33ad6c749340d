"""train_loop.epoch_batches: each epoch a permutation of the rows, a pure function of the step."""
import numpy as np

from lib.common import train_loop


def test_an_epoch_visits_distinct_rows_and_a_step_is_reproducible():
    data = {"x": np.arange(10) * 10, "y": np.arange(10)}
    fn = train_loop.epoch_batches(data, 3, seed=4)
    rows = slice(None)
    epoch0 = np.concatenate([fn(s, rows)["y"] for s in range(3)])   # 3 batches per epoch
    assert len(set(epoch0.tolist())) == 9                          # no row twice; one left out
    assert np.array_equal(fn(1, rows)["x"], 10 * fn(1, rows)["y"])  # the fields stay aligned
    assert np.array_equal(fn(4, rows)["y"], train_loop.epoch_batches(data, 3, seed=4)(4, rows)["y"])
    assert not np.array_equal(np.concatenate([fn(s, rows)["y"] for s in range(3, 6)]), epoch0)
    assert np.array_equal(fn(2, slice(1, 3))["y"], fn(2, rows)["y"][1:3])  # `rows` picks within the batch
