"""`--init_checkpoint`: start a run from the original's weights or from ours.

An original TF1 checkpoint (or one exported by us with `save_tf1_checkpoint`,
or HuggingFace safetensors) is read by name with `bert_tf.checkpoints.restore`.
A training checkpoint written by `Trainer` (`output_dir/ckpt-N`) is an
object-based TensorFlow checkpoint; its model weights are read into a model
of the same kind. Either way only weights are taken: the new run starts at
step 0 with a fresh optimizer, as the original does.
"""

import re

import tensorflow as tf
from absl import logging

from bert_tf.checkpoints import CheckpointError, is_huggingface, restore
from bert_tf.checkpoints.tf1 import (is_training_checkpoint, read_checkpoint,
                                     resolve_checkpoint_prefix)


def initialize_from_checkpoint(model, path):
    """Loads `model`'s weights from `path`, whichever of our formats it is.

    Args:
        model: a built Keras model containing our encoder and/or heads.
        path: an original-format checkpoint (prefix, `.index` or folder),
            HuggingFace safetensors, or a `Trainer` checkpoint prefix/folder.

    Raises:
        CheckpointError: naming the file, when it does not fit the model.
    """
    if is_huggingface(path):
        return restore(model, path)
    prefix = resolve_checkpoint_prefix(path)
    if not is_training_checkpoint(read_checkpoint(prefix).get_variable_to_shape_map()):
        return restore(model, prefix)
    status = tf.train.Checkpoint(model=model).read(prefix)
    try:
        status.assert_existing_objects_matched()
    except AssertionError as e:  # its message lists unmatched variables, values and all
        unmatched = re.search(r"Found (\d+) Python objects", str(e))
        count = (f"{unmatched.group(1)} of this model's weights are not in it; "
                 if unmatched else "")
        raise CheckpointError(
            f"{prefix}: a training checkpoint of another kind of model ({count}this run "
            "builds another); pass the bert_model.ckpt exported beside it instead") from None
    status.expect_partial()  # the optimizer's slots are not wanted
    logging.info("%s: restored the model weights of a training checkpoint", prefix)
    return None
