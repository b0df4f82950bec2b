"""Every numeric option is checked once, naming its flag."""

import pytest

from bert_tf.errors import UsageError
from bert_tf.tasks.run_options import RunOptions


@pytest.mark.parametrize("field,value,message", [
    ("learning_rate", -1.0, "--learning_rate=-1.0 must be positive"),
    ("learning_rate", 0.0, "--learning_rate=0.0 must be positive"),
    ("train_batch_size", 0, "--train_batch_size=0 must be at least 1"),
    ("eval_batch_size", -8, "--eval_batch_size=-8 must be at least 1"),
    ("num_train_epochs", 0.0, "--num_train_epochs=0.0 must be positive"),
    ("num_train_steps", 0, "--num_train_steps=0 must be at least 1"),
    ("num_warmup_steps", -1, "--num_warmup_steps=-1 must not be negative"),
    ("warmup_proportion", 1.5, "--warmup_proportion=1.5 must be in [0, 1]"),
    ("gradient_accumulation_steps", 3, "not divisible by --gradient_accumulation_steps=3"),
])
def test_bad_numbers_are_refused(field, value, message):
    with pytest.raises(UsageError, match=message.replace("[", r"\[").replace("]", r"\]")):
        RunOptions(output_dir="/tmp/x", **{field: value})


def test_output_dir_is_required():
    with pytest.raises(UsageError, match="--output_dir is required"):
        RunOptions(output_dir="")


@pytest.mark.parametrize("field,value,message", [
    ("do_train", "False", "--do_train='False': expected True or False, got str"),
    ("num_train_steps", 1.5, "--num_train_steps=1.5: expected an integer, got float"),
    ("train_batch_size", "32", "--train_batch_size='32': expected an integer, got str"),
    ("learning_rate", "2e-5", "--learning_rate='2e-5': expected a number, got str"),
    ("learning_rate", True, "--learning_rate=True: expected a number, got bool"),
    ("num_train_epochs", float("inf"), "--num_train_epochs=inf: expected a finite number"),
])
def test_values_of_another_type_are_refused(field, value, message):
    """A Python caller's do_train="False" trained; num_train_steps=1.5 failed in the graph."""
    with pytest.raises(UsageError, match=f"^{message}$"):
        RunOptions(output_dir="/tmp/x", **{field: value})


def test_paths_may_be_path_objects_and_numbers_numpy_ones():
    import pathlib

    import numpy as np
    options = RunOptions(output_dir=pathlib.Path("/tmp/x"), train_batch_size=np.int64(16),
                         learning_rate=np.float32(1e-4), num_train_epochs=2)
    assert options.output_dir == "/tmp/x" and options.micro_batch_size == 16
    assert RunOptions(output_dir="/tmp/x", random_seed=None).random_seed is None  # unseeded


def test_steps_that_repeat_more_data_than_the_epochs_ask_for_are_warned_about(caplog):
    """A batch of 100 over 40 examples trained 2.5 epochs under --num_train_epochs=1."""
    import types

    from bert_tf.tasks.task import Task
    task = types.SimpleNamespace(split_unit="examples")
    examples = list(range(40))
    with caplog.at_level("WARNING"):
        assert Task.train_steps(task, examples, RunOptions(
            output_dir="/tmp/x", train_batch_size=8, num_train_epochs=3.0)) == 15
    assert "epochs, not" not in caplog.text
    with caplog.at_level("WARNING"):
        assert Task.train_steps(task, examples, RunOptions(
            output_dir="/tmp/x", train_batch_size=100, num_train_epochs=1.0)) == 1
    assert ("1 step(s) of batch 100 over 40 training examples: 2.50 epochs, not "
            "--num_train_epochs=1") in caplog.text
