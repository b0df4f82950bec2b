"""`RunOptions`: everything the runner flow needs to know, passed explicitly.

The scripts fill it from their absl flags (the original runners' names and
defaults); tests and Python users build it directly, so a whole runner can
run in-process. Every number is checked here, once, with the flag's name in
the message: a negative learning rate or a zero batch size is refused before
any work starts.
"""

import dataclasses
import math
import os

import numpy as np

from bert_tf.errors import UsageError

# The Python types each field type accepts (never a bool for a number), and their names.
_TYPES = {bool: bool, int: (int, np.integer), float: (int, float, np.integer, np.floating),
          str: str}
_TYPE_NAMES = {bool: "True or False", int: "an integer", float: "a number", str: "a string"}
# Fields with another default that None also means something for.
_MAY_BE_NONE = ("random_seed",)
_POSITIVE = ("train_batch_size", "eval_batch_size", "predict_batch_size",
             "gradient_accumulation_steps", "steps_per_execution", "save_checkpoints_steps")


@dataclasses.dataclass
class RunOptions:
    """How to run a task: phases, where, how long, how fast.

    Attributes mirror the original runners' flags; `num_train_steps` (when
    set) replaces epochs, `num_warmup_steps` (when set) the warmup proportion.

    Example:

    >>> options = RunOptions(output_dir="/tmp/run", do_train=True, train_batch_size=32,
    ...                      gradient_accumulation_steps=4)
    >>> options.micro_batch_size, options.requested_splits()
    (8, ['train'])
    >>> RunOptions(output_dir="/tmp/run", learning_rate=-1.0)
    Traceback (most recent call last):
    bert_tf.errors.UsageError: --learning_rate=-1.0 must be positive
    """

    output_dir: str
    do_train: bool = False
    do_eval: bool = False
    do_predict: bool = False
    init_checkpoint: str = None
    export_dir: str = None
    train_batch_size: int = 32
    eval_batch_size: int = 8
    predict_batch_size: int = 8
    learning_rate: float = 5e-5
    num_train_epochs: float = 3.0
    warmup_proportion: float = 0.1
    num_train_steps: int = None
    num_warmup_steps: int = None
    max_eval_steps: int = None
    optimizer: str = "adamw"
    mixed_precision: str = "float32"
    jit_compile: bool = None  # None: `compilation.use_xla` decides
    gradient_accumulation_steps: int = 1
    steps_per_execution: int = 1000  # the original's --iterations_per_loop
    save_checkpoints_steps: int = 1000
    random_seed: int = 12345  # None: an unseeded shuffle (pretraining's records)
    distribution_strategy: str = "one_device"
    num_gpus: int = 0
    tpu: str = None
    tpu_zone: str = None
    gcp_project: str = None
    worker_wait_seconds: int = 900  # distribution.WORKER_WAIT_SECONDS; 0: for ever

    def __post_init__(self):
        if not self.output_dir:
            raise UsageError("--output_dir is required")
        self._check_types()
        for name in _POSITIVE:
            if getattr(self, name) < 1:
                raise UsageError(f"--{name}={getattr(self, name)} must be at least 1")
        if not self.learning_rate > 0:
            raise UsageError(f"--learning_rate={self.learning_rate} must be positive")
        if not self.num_train_epochs > 0:
            raise UsageError(f"--num_train_epochs={self.num_train_epochs} must be positive")
        if not 0 <= self.warmup_proportion <= 1:
            raise UsageError(f"--warmup_proportion={self.warmup_proportion} must be in [0, 1]")
        for name in ("num_train_steps", "max_eval_steps"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise UsageError(f"--{name}={value} must be at least 1")
        if self.worker_wait_seconds < 0:
            raise UsageError(f"--worker_wait_seconds={self.worker_wait_seconds} must not be "
                             "negative")
        if self.num_warmup_steps is not None and self.num_warmup_steps < 0:
            raise UsageError(f"--num_warmup_steps={self.num_warmup_steps} must not be negative")
        if self.train_batch_size % self.gradient_accumulation_steps:
            raise UsageError(f"--train_batch_size={self.train_batch_size} is not divisible by "
                             f"--gradient_accumulation_steps={self.gradient_accumulation_steps}")

    def _check_types(self):
        """Refuses a value of another type than its field's (paths may be `os.PathLike`).

        A Python caller's `do_train="False"` trained (a non-empty string is
        true), a `num_train_steps=1.5` failed deep in the training graph,
        and a `train_batch_size="32"` in a comparison naming no option.
        """
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if value is None and (field.default is None or field.name in _MAY_BE_NONE):
                continue
            if field.type is str and isinstance(value, os.PathLike):
                setattr(self, field.name, os.fspath(value))
                continue
            wanted = _TYPES[field.type]
            if not isinstance(value, wanted) or (field.type is not bool
                                                 and isinstance(value, bool)):
                raise UsageError(f"--{field.name}={value!r}: expected "
                                 f"{_TYPE_NAMES[field.type]}, got {type(value).__name__}")
            if field.type is float and not math.isfinite(value):
                raise UsageError(f"--{field.name}={value}: expected a finite number")

    @property
    def micro_batch_size(self):
        """Examples per micro-batch (one of `gradient_accumulation_steps` per step)."""
        return self.train_batch_size // self.gradient_accumulation_steps

    def requested_splits(self):
        """The splits the phases need: "train", "dev" and/or "test"."""
        return [split for split, wanted in (("train", self.do_train), ("dev", self.do_eval),
                                            ("test", self.do_predict)) if wanted]
