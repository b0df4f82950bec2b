"""`run.json`: what training run an `output_dir` holds.

The first training run into a folder writes its record there: the task
and its settings, the options that decide what is trained, the model it
trains (its `bert_config.json`, a hash of its vocabulary and the size of a
BiLSTM it puts over the encoder, `Task.bilstm_units`), what its start
weights are (`start_weights`, `checkpoints.weights_identity`), a hash of
its training examples (`Task.training_data`; pretraining's, which a resume
may add to, as a digest per input file) and its step count. A rerun
compares its own record with it (`output_dir_checks`): to resume only the
same run, and to score a model only with data it can read. The workers of
a multi-worker run compare theirs too (`runner`).

Files are compared by what they hold, not where they lie: the same start
weights copied to another folder (or host) start the same run, and other
weights written over the same path do not. The record keeps the start
weights' path too, for people, and for records that cannot say what the
weights were (written before `start_weights`, or whose weights are gone).
"""

import hashlib
import json
import os

import tensorflow as tf

from bert_tf.checkpoints import CHECKPOINT_BASENAME, CheckpointError, weights_identity
from bert_tf.config import CAUSAL_KEY
from bert_tf.errors import UsageError
from bert_tf.file_digests import file_sha256
from bert_tf.training.precision import needs_loss_scaling

RECORD_FILE = "run.json"
# Where a record keeps training data that a resumed run may add to (`Task.training_data_may_grow`).
GROWING_DATA = "training_data_parts"
# The options that decide what a training run computes (not how fast).
_TRAINING_OPTIONS = ("init_checkpoint", "train_batch_size", "learning_rate", "num_train_epochs",
                     "warmup_proportion", "num_train_steps", "num_warmup_steps", "optimizer",
                     "gradient_accumulation_steps", "random_seed")
# Task settings, options and config keys records gained later: a record without one
# says nothing about it. A config key only where the recorded task says the same (a --causal
# run's task says it is one, as its config now does too; a fine-tuning run recorded
# without "causal" trained its model both ways).
_LATER_TASK_SETTINGS = ("masking",)
_LATER_OPTIONS = ("loss_scaling",)
_LATER_CONFIG_KEYS = (CAUSAL_KEY,)


def run_record(task, options, train_steps, train_split=None):
    """The JSON-able description of a training run.

    The serving kind (`Task.serving_kind`) tells the export tools what the
    model may be served as: a NER tagger's head and a classifier's have the
    same names and shapes, so the checkpoint cannot tell them apart.

    >>> from bert_tf.tasks.run_options import RunOptions
    >>> class Toy:
    ...     name = "toy"
    ...     serving_kind = "classifier"
    ...     def record(self):
    ...         return {"task": "toy", "max_seq_length": 8}
    >>> record = run_record(Toy(), RunOptions(output_dir="/tmp/x", learning_rate=1e-4), 10)
    >>> record["task"], record["options"]["learning_rate"], record["train_steps"]
    ({'task': 'toy', 'max_seq_length': 8}, 0.0001, 10)
    >>> record["serving_kind"], record["start_weights"]
    ('classifier', None)
    """
    recorded = {name: getattr(options, name) for name in _TRAINING_OPTIONS}
    recorded["init_checkpoint"] = _start_weights(options.init_checkpoint)
    # float16's loss scale is optimizer state: its checkpoints fit no run without one.
    recorded["loss_scaling"] = needs_loss_scaling(options.mixed_precision)
    record = {"task": task.record(), "serving_kind": task.serving_kind, "options": recorded,
              "start_weights": _start_weights_identity(options.init_checkpoint),
              "train_steps": train_steps}
    model_files = getattr(task, "model_files", None)
    if model_files is not None:
        record["model"] = _model_record(model_files, getattr(task, "bilstm_units", 0))
    data = task.training_data(train_split) if train_split is not None else None
    if data is not None and task.training_data_may_grow:
        record[GROWING_DATA] = sorted(data)  # parts, in no order (hosts list files apart)
    elif data is not None:
        record["training_data_sha256"] = examples_sha256(data)
    return record


def examples_sha256(examples):
    """The SHA-256 of a split's examples (their `repr`: dataclasses and file lists).

    >>> examples_sha256(["a.tfrecord"]) == examples_sha256(["a.tfrecord"]) != examples_sha256([])
    True
    """
    return hashlib.sha256(repr(examples).encode()).hexdigest()


def _model_record(model_files, bilstm_units):
    """The model a run trains: its config, its vocabulary's SHA-256 (ids mean tokens), and
    the units of a BiLSTM over its encoder where it has one (a run recorded without one
    had none: another value, or one now, is another model)."""
    vocab_hash = file_sha256(model_files.vocab_file) if model_files.vocab_file else None
    record = {"bert_config": model_files.config.to_dict(), "vocab_sha256": vocab_hash}
    if bilstm_units:
        record["bilstm_units"] = bilstm_units
    return record


def _start_weights(path):
    """One spelling of a start checkpoint: absolute, and a release folder as its prefix.

    `model`, `model/bert_model.ckpt` and `model/bert_model.ckpt.index` name
    the same weights; URLs are kept as given.

    >>> _start_weights("gs://bucket/bert_model.ckpt"), _start_weights(None)
    ('gs://bucket/bert_model.ckpt', None)
    >>> _start_weights("model/bert_model.ckpt.index") == os.path.abspath("model/bert_model.ckpt")
    True
    """
    if path is None or "://" in path:
        return path
    path = os.path.abspath(path).removesuffix(".index")
    prefix = os.path.join(path, CHECKPOINT_BASENAME)
    return prefix if os.path.exists(prefix + ".index") else path


def _start_weights_identity(path):
    """`weights_identity` of the start weights at `path`; None where none are given, or
    where they do not read here.

    A resumed run does not read its start weights (they may be gone since),
    and a fresh run's load fails naming them; their path is then what is
    compared (`_same_keys`).
    """
    if path is None:
        return None
    try:
        return weights_identity(path)
    except (CheckpointError, OSError):
        return None


def comparable(record):
    """`record` as JSON would give it back, its start weights spelled one way."""
    record = json.loads(json.dumps(record))
    options = record.get("options", {})
    if options.get("init_checkpoint"):
        options["init_checkpoint"] = _start_weights(options["init_checkpoint"])
    return record


def recorded_run(folder):
    """The run recorded in `folder` (its `run.json`, parsed), or None where there is none.

    Raises:
        UsageError: the record is there but does not read.
    """
    path = os.path.join(folder, RECORD_FILE)
    if not tf.io.gfile.exists(path):
        return None
    try:
        with tf.io.gfile.GFile(path) as f:
            record = json.load(f)
        if not (isinstance(record, dict) and isinstance(record.get("task", {}), dict)):
            raise ValueError("not an object with a task object")
        return record
    except (OSError, ValueError, tf.errors.OpError) as error:
        raise UsageError(f"{path}: unreadable run record ({error}); delete it to "
                         "use the checkpoints beside it anyway") from None


def record_differences(recorded, new):
    """How record `new` differs from `recorded`: "key: old in the recorded run, new now".

    Both read as JSON gives them back, their start weights spelled one way;
    what one of them cannot say is left out (`_same_keys`).

    >>> record_differences({"options": {"learning_rate": 1e-4}},
    ...                    {"options": {"learning_rate": 2e-5}})
    ['options.learning_rate: 0.0001 in the recorded run, 2e-05 now']
    """
    return list(_differences(*_same_keys(comparable(recorded), comparable(new))))


def _same_keys(recorded, new):
    """The two records, less what one of them cannot say.

    A record written before runs recorded their model has no "model"; a run
    that reads no text (pretraining on records) may or may not name a
    vocabulary, whose hash then says nothing about what it computes. The
    serving kind follows from the task (compared apart), and older records
    lack it. Start weights whose identity both records give are compared by
    it, not by their path (`_start_weights_compared`).

    >>> config = {"hidden_act": "gelu"}
    >>> _same_keys({"task": {}}, {"task": {}, "model": {"bert_config": config}})
    ({'task': {}}, {'task': {}})
    >>> _same_keys({"model": {"bert_config": config, "vocab_sha256": "07ec"}},
    ...            {"model": {"bert_config": config, "vocab_sha256": None}})[0]
    {'model': {'bert_config': {'hidden_act': 'gelu'}, 'vocab_sha256': None}}
    """
    recorded, new = _start_weights_compared(recorded, new)
    recorded.pop("serving_kind", None)
    new.pop("serving_kind", None)
    if isinstance(recorded.get("task"), dict) and isinstance(new.get("task"), dict):
        new["task"] = {key: value for key, value in new["task"].items()
                       if key in recorded["task"] or key not in _LATER_TASK_SETTINGS}
    if isinstance(recorded.get("options"), dict) and isinstance(new.get("options"), dict):
        new["options"] = {key: value for key, value in new["options"].items()
                          if key in recorded["options"] or key not in _LATER_OPTIONS}
    if "training_data_sha256" not in recorded or "training_data_sha256" not in new:
        recorded.pop("training_data_sha256", None)
        new.pop("training_data_sha256", None)
    if "model" not in recorded or "model" not in new:
        recorded.pop("model", None)
        new.pop("model", None)
        return recorded, new
    recorded["model"], new["model"] = dict(recorded["model"]), dict(new["model"])
    if None in (recorded["model"].get("vocab_sha256"), new["model"].get("vocab_sha256")):
        recorded["model"]["vocab_sha256"] = new["model"]["vocab_sha256"] = None
    old_config, new_config = recorded["model"].get("bert_config"), new["model"].get("bert_config")
    if isinstance(old_config, dict) and isinstance(new_config, dict):
        said = recorded.get("task") if isinstance(recorded.get("task"), dict) else {}
        new["model"]["bert_config"] = {
            key: value for key, value in new_config.items()
            if key in old_config or key not in _LATER_CONFIG_KEYS or said.get(key) != value}
    return recorded, new


def _start_weights_compared(recorded, new):
    """The two records with one account of their start weights: what they are where both
    records say (`start_weights`), else their paths (`options.init_checkpoint`).

    >>> here = {"start_weights": "index sha256 3f", "options": {"init_checkpoint": "/a/bert"}}
    >>> there = {"start_weights": "index sha256 3f", "options": {"init_checkpoint": "/b/bert"}}
    >>> _start_weights_compared(here, there)[1]
    {'start_weights': 'index sha256 3f', 'options': {}}
    >>> _start_weights_compared({"options": {"init_checkpoint": "/b/bert"}}, there)[1]
    {'options': {'init_checkpoint': '/b/bert'}}
    """
    if recorded.get("start_weights") and new.get("start_weights"):
        return tuple(dict(record, options={name: value for name, value
                                           in record.get("options", {}).items()
                                           if name != "init_checkpoint"})
                     for record in (recorded, new))
    return tuple({key: value for key, value in record.items() if key != "start_weights"}
                 for record in (recorded, new))


def _differences(old, new, prefix=""):
    keys = sorted(set(old) | set(new))
    for key in keys:
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            yield from _differences(a, b, f"{prefix}{key}.")
        elif a != b:
            yield f"{prefix}{key}: {a!r} in the recorded run, {b!r} now"
