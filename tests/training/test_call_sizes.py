"""Calls bounded in time: small at first, then as many steps as fit, one trace throughout."""

import os
import signal
import threading

import pytest

from bert_tf.training import TrainingInterrupted
from tests_shared import steps_per_call
from training.tiny_training import dataset_fn, make_trainer


def test_first_two_calls_run_one_step_then_steps_per_execution_where_it_fits(tmp_path):
    trainer = make_trainer(tmp_path, steps_per_execution=4, max_call_seconds=3600.0,
                           save_checkpoints_steps=1000)
    counts = steps_per_call(trainer)
    trainer.train(dataset_fn(), num_steps=11)
    assert counts == [1, 1, 4, 4, 1]
    trainer.train(dataset_fn(), num_steps=16)  # measured already: full calls from the start
    assert counts[5:] == [4, 1]
    assert trainer.train_steps.experimental_get_tracing_count() == 1


def test_calls_shrink_to_one_step_when_one_step_takes_longer_than_the_bound(tmp_path):
    trainer = make_trainer(tmp_path, steps_per_execution=4, max_call_seconds=1e-9,
                           save_checkpoints_steps=1000)
    counts = steps_per_call(trainer)
    trainer.train(dataset_fn(), num_steps=6)
    assert counts == [1] * 6 and int(trainer.global_step.numpy()) == 6
    assert trainer.train_steps.experimental_get_tracing_count() == 1


def test_sigint_stops_within_the_time_bound_not_after_steps_per_execution(tmp_path):
    """2000 steps per call would take seconds; calls of about 0.1 s end long before."""
    trainer = make_trainer(tmp_path, steps_per_execution=2000, max_call_seconds=0.1,
                           save_checkpoints_steps=100_000)
    counts = steps_per_call(trainer)
    trainer.train(dataset_fn(), num_steps=2)  # built and measured
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(TrainingInterrupted) as caught:
        trainer.train(dataset_fn(), num_steps=1_000_000)
    timer.join()
    assert 2 < caught.value.step < 2 + 2000
    assert len(counts) > 3 and max(counts) < 2000
