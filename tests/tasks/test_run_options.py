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
