"""Strategies for real: 2 logical CPUs, 2 worker processes, and a TPU that is not there."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest
import tensorflow as tf

from bert_tf.training import distribution, worker_watch
from bert_tf.training.distribution import DistributionError, check_tf_config, get_strategy
from tests_shared import wait_for_line
from training.pretraining_runs import environment, golden_records, pretraining_command

HERE = os.path.dirname(os.path.abspath(__file__))


def test_tpu_without_a_tpu_fails_at_once():
    start = time.time()
    with pytest.raises(DistributionError, match="no TPU here.*--tpu"):
        get_strategy("tpu")
    with pytest.raises(DistributionError, match="--tpu=no-such-tpu-name: cannot resolve"):
        get_strategy("tpu", tpu="no-such-tpu-name")
    assert time.time() - start < 10


def test_a_tpu_address_where_nothing_answers_fails_at_once():
    """TensorFlow waited for ever, without a word, to connect to such an address (a process
    of its own: a hang would outlive the test)."""
    with socket.socket() as listener:  # a port that was free: nothing listens there now
        listener.bind(("127.0.0.1", 0))
        port = listener.getsockname()[1]
    code = ("from bert_tf.training.distribution import get_strategy\n"
            f"get_strategy('tpu', tpu='grpc://127.0.0.1:{port}')")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60, env=environment())
    assert (f"DistributionError: --tpu=grpc://127.0.0.1:{port}: nothing answers at "
            f"127.0.0.1:{port} within 10 s" in result.stderr), result.stderr[-2000:]


def test_an_address_that_answers_as_no_tpu_worker_is_named_in_one_line(monkeypatch):
    """What a server there that is not a TPU worker answered came as a traceback."""
    def refuse(resolver):
        raise tf.errors.UnimplementedError(None, None, "Received http2 header with status: "
                                           "404\nAdditional GRPC error information ...")
    monkeypatch.setattr(distribution.worker_watch, "answers", lambda address, timeout: True)
    monkeypatch.setattr(tf.config, "experimental_connect_to_cluster", refuse)
    with pytest.raises(DistributionError) as failure:
        get_strategy("tpu", tpu="grpc://10.0.0.2:8470")
    assert str(failure.value) == ("--tpu=grpc://10.0.0.2:8470: cannot connect to this TPU "
                                  "(Received http2 header with status: 404)")


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


def _free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("localhost", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def _two_workers(tmp_path, output_dir, *flags, per_worker=((), ())):
    """Starts two pretraining workers on localhost; returns their processes and log paths."""
    workers = [f"localhost:{port}" for port in _free_ports(2)]
    logs = [tmp_path / f"worker{index}.log" for index in range(2)]
    processes = [
        subprocess.Popen(pretraining_command(str(tmp_path), str(output_dir), *flags,
                                             *per_worker[index]),
                         stdout=subprocess.DEVNULL, stderr=open(log, "w"),
                         env=environment(TF_CONFIG=json.dumps(
                             {"cluster": {"worker": workers},
                              "task": {"type": "worker", "index": index}})))
        for index, log in enumerate(logs)]
    return processes, logs


def _wait_all(processes, seconds):
    try:
        for process in processes:
            process.wait(timeout=seconds)
    finally:
        for process in processes:
            process.kill()


def test_a_signal_to_one_worker_stops_every_worker_at_the_same_step(tmp_path):
    """A scheduler may stop one worker first: the others must not wait for it in a collective."""
    output_dir = tmp_path / "out"
    processes, logs = _two_workers(
        tmp_path, output_dir, "--distribution_strategy=multi_worker_mirrored", "--do_train",
        "--train_batch_size=8", "--num_train_steps=100000", "--num_warmup_steps=1",
        "--save_checkpoints_steps=100000", "--iterations_per_loop=1000")
    try:
        wait_for_line(logs[1], r"step 2/100000", processes[1])
        processes[1].send_signal(signal.SIGTERM)
        sent = time.time()
        for process in processes:
            process.wait(timeout=120)
        stopped_after = time.time() - sent
    finally:
        for process in processes:
            process.kill()
    texts = [log.read_text() for log in logs]
    assert [p.returncode for p in processes] == [143, 143], texts[0][-2000:] + texts[1][-2000:]
    steps = [int(re.search(r"stopped at step (\d+)", text).group(1)) for text in texts]
    assert steps[0] == steps[1] > 2
    assert "SIGTERM received by another worker" in texts[0]
    assert "SIGTERM received:" in texts[1]
    assert f"ckpt-{steps[0]}.index" in os.listdir(output_dir)
    # Calls stay time-bounded under multi-worker training too: far short of 1000 steps.
    assert steps[0] < 1000 and stopped_after < 60


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


def test_a_worker_waiting_for_absent_workers_says_so_and_gives_up():
    """TensorFlow waits for ever, silently, for a worker that never starts (worker 0)."""
    absent = f"localhost:{_free_ports(1)[0]}"
    waiting = (f"import json, subprocess, sys, time; subprocess.Popen([sys.executable, "
               f"{worker_watch.__file__!r}, str(__import__('os').getpid()), '2', 'run_x', "
               f"json.dumps({{{absent!r}: 'worker 1'}}), '0.5']); time.sleep(60)")
    start = time.time()
    result = subprocess.run([sys.executable, "-c", waiting], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == -signal.SIGKILL and time.time() - start < 30
    lines = result.stderr.splitlines()
    assert f"run_x: waited 0 s for the other workers of TF_CONFIG: nothing answers for " \
           f"worker 1 at {absent}" in lines[0].replace("waited 1 s", "waited 0 s")
    assert lines[-1] == (f"run_x: error: the other workers of TF_CONFIG did not join within "
                         f"2.0 s (nothing answers for worker 1 at {absent}); start every worker, "
                         "or give --worker_wait_seconds more time")


def test_a_wait_shorter_than_the_report_period_ends_on_time():
    """--worker_wait_seconds=10 waited 30 s: the watcher looked at the time only when it
    reported (every 30 s)."""
    waiting = (f"import json, subprocess, sys, time; subprocess.Popen([sys.executable, "
               f"{worker_watch.__file__!r}, str(__import__('os').getpid()), '1', 'run_x', "
               f"json.dumps({{'localhost:{_free_ports(1)[0]}': 'worker 1'}}), '30']); "
               f"time.sleep(60)")
    start = time.time()
    result = subprocess.run([sys.executable, "-c", waiting], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == -signal.SIGKILL
    assert time.time() - start < 15
    assert "did not join within 1.0 s" in result.stderr

def test_workers_started_with_other_flags_stop_naming_them(tmp_path):
    """Another learning rate on one worker trained on silently, the weights drifting apart."""
    processes, logs = _two_workers(
        tmp_path, tmp_path / "out", "--distribution_strategy=multi_worker_mirrored", "--do_train",
        "--train_batch_size=8", "--num_train_steps=2", "--num_warmup_steps=1",
        per_worker=(("--learning_rate=1e-3",), ("--learning_rate=5e-2",)))
    _wait_all(processes, 300)
    for process, log, rate in zip(processes, logs, ("0.001", "0.05")):
        last = log.read_text().splitlines()[-1]
        assert process.returncode == 2, last
        assert last == ("run_pretraining: error: the workers of this run were started with "
                        f"different settings: learning_rate (this worker: learning_rate={rate}); "
                        "start every worker with the same command line and files")


def test_a_killed_worker_ends_the_others_with_one_line(tmp_path):
    processes, logs = _two_workers(
        tmp_path, tmp_path / "out", "--distribution_strategy=multi_worker_mirrored", "--do_train",
        "--train_batch_size=8", "--num_train_steps=100000", "--num_warmup_steps=1",
        "--save_checkpoints_steps=100000", "--iterations_per_loop=2")
    try:
        wait_for_line(logs[1], r"step 2/100000", processes[1])
        processes[1].kill()
        processes[0].wait(timeout=120)
    finally:
        _wait_all(processes, 10)
    last = logs[0].read_text().splitlines()[-1]
    assert processes[0].returncode == 1, last
    assert last.startswith("run_pretraining: error: another worker of this run stopped or "
                           "cannot be reached (")
    assert last.endswith("Restart every worker with the same command to resume from the last "
                         "checkpoint")


def test_two_workers_train_write_one_checkpoint_and_evaluate_as_one_process(tmp_path):
    """Both workers take part in every step and write one set of files.

    Their evaluation files have other lengths: each worker read its own file
    and dropped its own remainder, and one was left without a batch (an empty
    one failed the model). The evaluation must be that of one process.
    """
    records = [r.numpy() for r in tf.data.TFRecordDataset(golden_records()).take(19)]
    for name, part in (("a.tfrecord", records[:13]), ("b.tfrecord", records[13:])):
        with tf.io.TFRecordWriter(str(tmp_path / name)) as writer:
            for record in part:
                writer.write(record)
    output_dir = tmp_path / "out"
    steps = ("--num_train_steps=2", "--num_warmup_steps=1")
    evaluation = (f"--eval_input_file={tmp_path / 'a.tfrecord'},{tmp_path / 'b.tfrecord'}",
                  "--eval_batch_size=4", "--do_eval")
    processes, logs = _two_workers(
        tmp_path, output_dir, "--distribution_strategy=multi_worker_mirrored", "--do_train",
        "--train_batch_size=8", "--save_checkpoints_steps=2", "--iterations_per_loop=2",
        *steps, *evaluation)
    _wait_all(processes, 400)
    texts = [log.read_text() for log in logs]
    assert [p.returncode for p in processes] == [0, 0], texts[0][-2000:] + texts[1][-2000:]
    names = sorted(os.listdir(output_dir))
    assert [n for n in names if n.startswith("ckpt-")] == [
        "ckpt-2.data-00000-of-00001", "ckpt-2.index"]
    assert "bert_model.ckpt.index" in names and "train" in names
    assert not [n for n in names if n.startswith(".worker")]  # the other worker's scratch
    # Both workers took part in every step: each logged the same final loss.
    losses = [re.findall(r"step 2/2 loss=(\S+)", text) for text in texts]
    assert len(losses[0]) == 1 and losses[0] == losses[1]

    two_workers = (output_dir / "eval_results.txt").read_text()
    one = subprocess.run(pretraining_command(str(tmp_path), str(output_dir), *steps,
                                             *evaluation),
                         capture_output=True, text=True, timeout=300, env=environment())
    assert one.returncode == 0, one.stderr[-3000:]
    results = [dict(line.split(" = ") for line in text.splitlines())
               for text in (two_workers, (output_dir / "eval_results.txt").read_text())]
    assert results[0].keys() == results[1].keys()
    for key in results[0]:
        assert float(results[0][key]) == pytest.approx(float(results[1][key]), rel=1e-5), key
    # 19 records in global batches of 4: 4 batches, as on one device.
    assert "over 4 batches" in texts[0]
