"""With the `tensorboard` extra installed, a run writes event files holding its metrics."""
import glob
import os
import struct

import pytest

from lib.common import config as config_lib
from lib.common import mesh as mesh_lib
from lib.common import train_loop
from tests.common import regression_app as app

tensorboardX = pytest.importorskip("tensorboardX")


def _scalars(path):
    """{tag: [(step, value)]} read back from a TFRecord event file."""
    from tensorboardX.proto import event_pb2
    out = {}
    with open(path, "rb") as f:
        data = f.read()
    pos = 0
    while pos < len(data):
        (n,) = struct.unpack("<Q", data[pos:pos + 8])
        event = event_pb2.Event.FromString(data[pos + 12:pos + 12 + n])
        pos += 12 + n + 4
        for v in event.summary.value:
            out.setdefault(v.tag, []).append((event.step, v.simple_value))
    return out


def test_event_files_hold_the_logged_metrics_and_the_learning_rate(tmp_path):
    config = config_lib.apply_overrides(app.get_config("tiny"),
                                        {"train.num_steps": 4, "train.log_every": 2})
    task = app.make_task(config)._replace(learning_rate=lambda s: 0.25)
    train_loop.train(task, train_loop.LoopConfig.from_config(config.train),
                     workdir=str(tmp_path), mesh=mesh_lib.make_mesh())
    files = glob.glob(os.path.join(tmp_path, "tensorboard", "events.out.tfevents.*"))
    assert len(files) == 1
    scalars = _scalars(files[0])
    assert [s for s, _ in scalars["loss"]] == [2, 4]
    assert scalars["lr"] == [(2, 0.25), (4, 0.25)]
