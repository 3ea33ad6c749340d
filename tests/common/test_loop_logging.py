"""The train loop logs the learning rate of each row's last update and says it is compiling."""
import logging

from lib.common import config as config_lib
from lib.common import mesh as mesh_lib
from lib.common import metrics, train_loop
from tests.common import regression_app as app


def test_rows_carry_the_schedule_and_the_first_step_is_announced(tmp_path, caplog):
    config = config_lib.apply_overrides(app.get_config("tiny"),
                                        {"train.num_steps": 6, "train.log_every": 2})
    task = app.make_task(config)._replace(learning_rate=lambda s: 0.5 / (1 + s))
    caplog.set_level(logging.INFO)
    train_loop.train(task, train_loop.LoopConfig.from_config(config.train),
                     workdir=str(tmp_path), mesh=mesh_lib.make_mesh())
    rows = metrics.read_metrics(str(tmp_path))
    assert [r["step"] for r in rows] == [2, 4, 6]
    assert [r["lr"] for r in rows] == [0.5 / 2, 0.5 / 4, 0.5 / 6]   # schedule(step - 1)
    text = caplog.text
    assert "compiling the train step" in text and "first step (with compilation) took" in text


def test_without_a_schedule_no_lr_column(tmp_path):
    config = config_lib.apply_overrides(app.get_config("tiny"),
                                        {"train.num_steps": 2, "train.log_every": 2})
    train_loop.train(app.make_task(config), train_loop.LoopConfig.from_config(config.train),
                     workdir=str(tmp_path), mesh=mesh_lib.make_mesh())
    assert "lr" not in metrics.read_metrics(str(tmp_path))[0]
