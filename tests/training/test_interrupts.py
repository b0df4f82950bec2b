"""SIGTERM / SIGINT during training: finish the step, save, say where, exit non-zero;
a rerun resumes there. One output folder per run (a real second process)."""

import os
import re
import signal
import subprocess
import sys
import threading

import pytest
import tensorflow as tf

from bert_tf.training.interrupts import TrainingInterrupted
from bert_tf.training.run_dir import OutputDirInUseError, OutputDirLock
from tests_shared import wait_for_line
from training.pretraining_runs import environment
from training.tiny_training import dataset_fn, make_trainer

RUN_SCRIPT = os.path.join(os.path.dirname(__file__), "tiny_training_run.py")


@pytest.fixture(scope="module")
def terminated_run(tmp_path_factory):
    """A 100,000-step run (checkpoints every 1000) sent SIGTERM after its third step,
    while a second run tries the same folder."""
    folder = tmp_path_factory.mktemp("terminated")
    output_dir, log = str(folder / "out"), str(folder / "stderr.txt")
    with open(log, "w") as stderr:
        process = subprocess.Popen([sys.executable, RUN_SCRIPT, output_dir, "100000"],
                                   stdout=subprocess.DEVNULL, stderr=stderr, env=environment())
    try:
        wait_for_line(log, r"step 3/100000 loss=", process)
        try:
            OutputDirLock(output_dir).__enter__()
            second = None
        except OutputDirInUseError as error:
            second = str(error)
        process.send_signal(signal.SIGTERM)
        returncode = process.wait(timeout=120)
    finally:
        process.kill()
    return {"output_dir": output_dir, "returncode": returncode, "stderr": open(log).read(),
            "second": second, "pid": process.pid}


def test_sigterm_saves_the_step_reached_and_exits_non_zero(terminated_run):
    stderr = terminated_run["stderr"]
    assert terminated_run["returncode"] == 128 + signal.SIGTERM, stderr[-3000:]
    stopped = re.search(r"SIGTERM received: stopped at step (\d+) and saved (\S+ckpt-(\d+)); "
                        r"rerun the same command to resume from there", stderr)
    assert stopped, stderr[-3000:]
    step = int(stopped.group(1))
    last_logged = max(int(s) for s in re.findall(r"step (\d+)/100000 loss=", stderr))
    assert step == int(stopped.group(3)) == last_logged  # the step in progress, finished
    assert 3 <= step < 1000  # long before the first periodic checkpoint
    assert tf.train.latest_checkpoint(terminated_run["output_dir"]).endswith(f"ckpt-{step}")
    resumed = make_trainer(terminated_run["output_dir"])
    assert resumed.checkpoints.restore_latest() == step


def test_second_run_on_the_folder_fails_naming_the_holder(terminated_run):
    assert re.search(rf"output_dir \S+out is in use by process {terminated_run['pid']} on host "
                     rf"\S+, started .* UTC: \S+tiny_training_run.py \S+out 100000; wait for "
                     "that run to end", terminated_run["second"] or "")
    with OutputDirLock(terminated_run["output_dir"]):  # free once the holder has gone
        pass


def test_sigint_in_process_stops_after_the_current_call(tmp_path):
    """A real SIGINT to this process while 2-step calls run: one more call at most."""
    trainer = make_trainer(tmp_path, steps_per_execution=2, save_checkpoints_steps=1000)
    trainer.train(dataset_fn(), num_steps=2)  # traced and warm
    handler_before = signal.getsignal(signal.SIGINT)  # SIG_IGN when pytest runs in the background
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(TrainingInterrupted, match=r"SIGINT received: stopped at step") as caught:
        trainer.train(dataset_fn(), num_steps=1_000_000)
    timer.join()
    assert caught.value.exit_code == 130 and caught.value.step % 2 == 0
    assert int(trainer.global_step.numpy()) == caught.value.step
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith(f"ckpt-{caught.value.step}")
    assert signal.getsignal(signal.SIGINT) is handler_before  # handlers restored


# Training whose input never yields: the main thread waits inside TensorFlow, where
# Python signal handlers do not run.
STUCK_RUN = """
import sys, tensorflow as tf
from bert_tf.training.interrupts import StopSignals
never = tf.data.Dataset.range(1).repeat().interleave(lambda _: tf.data.Dataset.range(0))
with StopSignals():
    print("waiting for input", file=sys.stderr, flush=True)
    next(iter(never))
"""


def test_a_second_ctrl_c_ends_a_run_stuck_inside_tensorflow(tmp_path):
    log = tmp_path / "stderr.txt"
    with open(log, "w") as stderr:
        process = subprocess.Popen([sys.executable, "-c", STUCK_RUN], stdout=subprocess.DEVNULL,
                                   stderr=stderr, env=environment(), cwd=os.getcwd())
    try:
        wait_for_line(str(log), "waiting for input", process)
        process.send_signal(signal.SIGINT)
        with pytest.raises(subprocess.TimeoutExpired):  # the first one waits for the call
            process.wait(timeout=1)
        process.send_signal(signal.SIGINT)
        returncode = process.wait(timeout=30)
    finally:
        process.kill()
    assert returncode == 130
    assert "second SIGINT (Ctrl-C) while TensorFlow held the main thread" in log.read_text()
