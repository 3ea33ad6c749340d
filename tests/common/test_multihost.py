"""The multi-host path for real: two JAX processes on this machine (gloo collectives).

Each process loads only its half of every batch (`process_slice` +
`make_array_from_process_local_data`); together they must end with the parameters of
one process that sees the whole batch, and only process 0 writes metrics.
"""
import json
import os
import socket
import subprocess

import numpy as np
import pytest

from tests.common import harness_utils as hu


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_two_processes_match_one_process(tmp_path):
    single = str(tmp_path / "single")
    proc = hu.run_app(single, "tiny")
    assert proc.returncode == 0, proc.stderr[-3000:]

    multi = str(tmp_path / "multi")
    port = _free_port()
    procs = [
        subprocess.Popen(
            hu.app_cmd(multi, "tiny", "--distributed", f"--coordinator_address=127.0.0.1:{port}",
                       "--num_processes=2", f"--process_id={i}", "--cpu_collectives=gloo"),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=hu.clean_env())
        for i in range(2)
    ]
    outs = [p.communicate(timeout=240) for p in procs]
    for p, (_, err) in zip(procs, outs):
        assert p.returncode == 0, err[-3000:]
    assert "process 0 of 2, 1 local / 2 global devices" in outs[0][1]
    assert "process 1 of 2, 1 local / 2 global devices" in outs[1][1]

    for a, b in zip(hu.final_params(multi), hu.final_params(single)):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6)
    # process 0 alone wrote metrics: every logged step appears exactly once
    steps = [json.loads(line)["step"] for line in open(os.path.join(multi, "metrics.jsonl"))]
    assert steps == list(range(5, 61, 5))
    single_loss = [json.loads(l)["loss"] for l in open(os.path.join(single, "metrics.jsonl"))]
    multi_loss = [json.loads(l)["loss"] for l in open(os.path.join(multi, "metrics.jsonl"))]
    np.testing.assert_allclose(multi_loss, single_loss, rtol=1e-4)
