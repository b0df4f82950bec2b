"""Two real worker processes of `multi_worker_mirrored` on localhost, and the watch
that ends a worker whose peers never come or go away."""

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
import tensorflow as tf

from bert_tf.training import worker_watch
from tests_shared import free_ports, run_script, wait_for_line
from training.pretraining_runs import (ONE_LAYER_CONFIG, TINY_CONFIG, environment,
                                       golden_records, pretraining_command, pretraining_flags)


def _two_workers(tmp_path, output_dir, *flags, per_worker=((), ()), config=ONE_LAYER_CONFIG):
    """Starts two pretraining workers on localhost; returns their processes and log paths.

    Their model is one layer deep unless `config` says otherwise: the workers' stops and
    errors do not depend on depth.
    """
    workers = [f"localhost:{port}" for port in free_ports(2)]
    logs = [tmp_path / f"worker{index}.log" for index in range(2)]
    processes = [
        subprocess.Popen(pretraining_command(str(tmp_path), str(output_dir), *flags,
                                             *per_worker[index], config=config),
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
    """A scheduler may stop one worker first: the others must not wait for it in a collective.

    Then the rerun that resumes it, with worker 1 given a folder without the checkpoint.
    """
    output_dir = tmp_path / "out"
    flags = ("--distribution_strategy=multi_worker_mirrored", "--do_train",
             "--train_batch_size=8", "--num_train_steps=100000", "--num_warmup_steps=1",
             "--save_checkpoints_steps=100000", "--iterations_per_loop=1000")
    processes, logs = _two_workers(tmp_path, output_dir, *flags)
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
    # Step 2 itself where the signal came before the workers agreed on the next call (the
    # suite's load can leave that moment after the log line this test waits for).
    assert steps[0] == steps[1] >= 2
    assert "SIGTERM received by another worker" in texts[0]
    assert "SIGTERM received:" in texts[1]
    assert f"ckpt-{steps[0]}.index" in os.listdir(output_dir)
    # Calls stay time-bounded under multi-worker training too: far short of 1000 steps.
    assert steps[0] < 1000 and stopped_after < 60

    # Rerunning every worker resumes, where each reads the checkpoints: worker 1 given a
    # folder of its own (a host's local disk) started at step 0 while worker 0 resumed at
    # step N, and the weights drifted apart without a word. Every worker stops, before
    # any step, naming what each resumed from.
    elsewhere = tmp_path / "elsewhere"
    processes, logs = _two_workers(
        tmp_path, output_dir, *flags, per_worker=((), (f"--output_dir={elsewhere}",)))
    _wait_all(processes, 120)
    for process, log, folder in zip(processes, logs, (output_dir, elsewhere)):
        text = log.read_text()
        last = text.splitlines()[-1]
        assert process.returncode == 2, last
        assert not re.search(r"step \d+/100000", text)  # no training step
        assert last == ("run_pretraining: error: the workers of this run resumed from "
                        f"different checkpoints: worker 0 from ckpt-{steps[0]} (step "
                        f"{steps[0]}), worker 1 from no checkpoint (step 0); --output_dir must "
                        f"be one folder shared by every worker (this worker's is {folder})")
    assert not [name for name in os.listdir(elsewhere) if name.startswith("ckpt-")]


def test_a_worker_waiting_for_absent_workers_says_so_and_gives_up():
    """TensorFlow waits for ever, silently, for a worker that never starts (worker 0)."""
    absent = f"localhost:{free_ports(1)[0]}"
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
               f"json.dumps({{'localhost:{free_ports(1)[0]}': 'worker 1'}}), '30']); "
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
    # Two layers: the steps' losses and the evaluation compare every layer's weights.
    processes, logs = _two_workers(
        tmp_path, output_dir, "--distribution_strategy=multi_worker_mirrored", "--do_train",
        "--train_batch_size=8", "--save_checkpoints_steps=2", "--iterations_per_loop=2",
        *steps, *evaluation, config=TINY_CONFIG)
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
    # The same evaluation by one process alone (this one: nothing to test of a process).
    one = run_script("run_pretraining.py", *pretraining_flags(str(tmp_path), str(output_dir),
                                                              *steps, *evaluation))
    assert one.returncode == 0, one.stderr[-3000:]
    results = [dict(line.split(" = ") for line in text.splitlines())
               for text in (two_workers, (output_dir / "eval_results.txt").read_text())]
    assert results[0].keys() == results[1].keys()
    for key in results[0]:
        assert float(results[0][key]) == pytest.approx(float(results[1][key]), rel=1e-5), key
    # 19 records in global batches of 4: 4 batches, as on one device.
    assert "over 4 batches" in texts[0]
