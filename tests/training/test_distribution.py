"""Strategies for real: 2 logical CPUs, and TF_CONFIG checked (two real worker processes:
test_multi_worker.py; a TPU that is not there: test_tpu_strategy.py)."""

import json
import os
import re
import subprocess
import sys

import pytest

from bert_tf.training.distribution import DistributionError, check_tf_config, get_strategy
from training.pretraining_runs import environment, golden_records

HERE = os.path.dirname(os.path.abspath(__file__))


def test_a_cluster_of_workers_is_refused_to_a_one_machine_strategy(monkeypatch):
    """Workers launched with TF_CONFIG but without multi_worker_mirrored each trained alone."""
    monkeypatch.setenv("TF_CONFIG", json.dumps({
        "cluster": {"chief": ["a:1"], "worker": ["b:2"]}, "task": {"type": "worker", "index": 0}}))
    for name in ("one_device", "mirrored"):
        with pytest.raises(DistributionError) as failure:
            get_strategy(name)
        assert str(failure.value) == (
            f"TF_CONFIG names a cluster of 2 workers, but --distribution_strategy={name} trains "
            "this process alone; give --distribution_strategy=multi_worker_mirrored, or unset "
            "TF_CONFIG")
        # An evaluation or prediction alone has nothing to train apart.
        assert get_strategy(name, training=False).num_replicas_in_sync == 1
    # One worker (a managed job's chief alone), or a TF_CONFIG it cannot read: no business.
    for text in ('{"cluster": {"chief": ["a:1"]}, "task": {"type": "chief", "index": 0}}', "{"):
        monkeypatch.setenv("TF_CONFIG", text)
        assert get_strategy("one_device").num_replicas_in_sync == 1


def test_bad_requests_name_the_flag():
    with pytest.raises(DistributionError, match="--distribution_strategy='gpus'"):
        get_strategy("gpus")
    with pytest.raises(DistributionError, match="--num_gpus=4 but this machine has 0 GPU"):
        get_strategy("mirrored", num_gpus=4)


def test_mirrored_and_accumulation_give_the_one_device_weights():
    """Same global batches: 2 replicas (with XLA, or with loss scaling), or 2 micro-batches.

    Also: under loss scaling on 2 replicas, steps whose gradient overflows move nothing.
    """
    result = subprocess.run(
        [sys.executable, os.path.join(HERE, "distributed_equivalence.py"), golden_records()],
        capture_output=True, text=True, timeout=600, env=environment())
    assert result.returncode == 0, result.stderr[-3000:]
    line = next(l for l in result.stdout.splitlines() if l.startswith("RESULT "))
    report = json.loads(line[len("RESULT "):])
    assert report["replicas"] == 2
    assert report["moved"] > 1e-3  # training did change the weights
    for name, difference in report["max_weight_difference"].items():
        assert difference < 1e-6, (name, difference)
    losses = list(report["losses"].values())
    assert max(losses) - min(losses) < 1e-6 * losses[0], report["losses"]
    # 3 overflowing steps: skipped (no move, not counted), the scale halved at each.
    assert report["overflowed"] == {"moved": 0.0, "iterations": 3, "scale": 2.0**117}


@pytest.mark.parametrize("tf_config, message", [
    ("{cluster", "TF_CONFIG is not valid JSON"),
    ('{"cluster": {"worker": ["a:1", "b:2"]}}', "not this process's place in it"),
    ('{"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 1}}',
     "task index 1 is not among the 1 worker address"),
    ('{"cluster": {"worker": ["a:1"]}, "task": {"type": "ps", "index": 0}}',
     "task type 'ps' is not a job of its cluster"),
    ('{"cluster": {"worker": ["a"]}, "task": {"type": "worker", "index": 0}}',
     'a list of "host:port" addresses'),
])
def test_a_bad_tf_config_says_what_is_wrong_in_it(tf_config, message):
    with pytest.raises(DistributionError, match=re.escape(message)):
        check_tf_config(tf_config)


def test_a_tf_config_index_given_as_text_is_read_as_tensorflow_reads_it():
    """TensorFlow's resolver takes int(index): "1" worked before the check refused it."""
    text = '{"cluster": {"worker": ["a:1", "b:2"]}, "task": {"type": "worker", "index": "1"}}'
    assert check_tf_config(text) == ({"worker": ["a:1", "b:2"]}, "worker", 1)
    with pytest.raises(DistributionError, match="task index 'one' is not among"):
        check_tf_config(text.replace('"1"', '"one"'))
