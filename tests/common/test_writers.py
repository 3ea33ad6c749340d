"""Metric writer, progress/ETA, atomic JSON."""
import json
import os

import pytest

from lib.common import metrics, progress, workdir as wd


def test_metric_writer_jsonl_and_resume_truncation(tmp_path):
    w = metrics.MetricWriter(str(tmp_path), tensorboard=False)
    for s in (10, 20, 30):
        w.write_scalars(s, {"loss": 1.0 / s, "n": 3})
    w.close()
    rows = metrics.read_metrics(str(tmp_path))
    assert [r["step"] for r in rows] == [10, 20, 30] and rows[0]["loss"] == pytest.approx(0.1)
    # a resume from step 20 drops rows of the lost work after it
    w = metrics.MetricWriter(str(tmp_path), resume_step=20, tensorboard=False)
    w.write_scalars(30, {"loss": 0.5})
    w.close()
    assert [r["step"] for r in metrics.read_metrics(str(tmp_path))] == [10, 20, 30]
    with pytest.raises(ValueError, match="not a scalar"):
        metrics.MetricWriter(str(tmp_path / "x"), tensorboard=False).write_scalars(1, {"v": [1, 2]})


def test_non_primary_writer_writes_nothing(tmp_path):
    w = metrics.MetricWriter(str(tmp_path), primary=False)
    w.write_scalars(1, {"loss": 1.0})
    w.close()
    assert not os.path.exists(tmp_path / wd.METRICS)


def test_progress_rate_and_eta():
    t = [0.0]
    lines = []
    p = progress.Progress(total=1000, start=100, every_s=5.0, clock=lambda: t[0], log=lines.append)
    p.update(100)  # first update: starts the clock
    t[0] = 2.0
    assert p.update(120) is None  # less than 5 s since the last line
    t[0] = 10.0
    msg = p.update(200)
    assert p.rate(200) == pytest.approx(10.0)
    assert msg == "train: step 200/1000 (20.0%), 10.00 steps/s, ETA 1m20s"
    assert progress.format_seconds(3725) == "1h02m05s"


def test_write_json_atomic(tmp_path):
    path = str(tmp_path / "a" / "r.json")
    wd.write_json_atomic(path, {"x": 1})
    with pytest.raises(TypeError):
        wd.write_json_atomic(path, {"x": object()})
    assert json.load(open(path)) == {"x": 1}  # the failed write left the old file intact
    assert [f for f in os.listdir(tmp_path / "a")] == ["r.json"]  # no temp files left


def test_write_text_atomic_replaces_whole_or_not_at_all(tmp_path):
    path = str(tmp_path / "b" / "results.md")
    wd.write_text_atomic(path, "| a |\n")
    wd.write_text_atomic(path, "| b |\n")
    assert open(path).read() == "| b |\n"
    with pytest.raises(TypeError):
        wd.write_text_atomic(path, None)          # fails inside the write, after the temp file exists
    assert open(path).read() == "| b |\n"
    assert os.listdir(tmp_path / "b") == ["results.md"]
