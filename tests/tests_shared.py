"""Helpers shared by tests: the shared data folder, tiny random encoder inputs."""

import os
import pathlib

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
SHARED_DATA = pathlib.Path(os.environ.get("BERT_TF_SHARED_DATA", REPO.parent / "shared" / "data"))


def shared_path(*parts):
    """Path of a file under ../shared/data; fails loudly (never skips) if absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.fail(f"missing shared test data {path} (set BERT_TF_SHARED_DATA)")
    return path


def random_inputs(config, batch=3, length=9, seed=0, pad_from=None):
    """Random `input_ids`/`input_mask`/`segment_ids` with padding in all rows but the first.

    Row i has `length - i` real tokens (unless `pad_from` fixes the padding start).
    """
    rng = np.random.default_rng(seed)
    ids = rng.integers(1, config.vocab_size, size=(batch, length)).astype("int32")
    mask = np.ones((batch, length), "int32")
    for row in range(batch):
        real = pad_from if pad_from is not None else length - row
        mask[row, real:] = 0
    ids = ids * mask
    segments = np.zeros((batch, length), "int32")
    segments[:, length // 2:] = 1
    return {"input_ids": ids, "input_mask": mask, "segment_ids": segments * mask}


def weights_by_name(model):
    """`{original checkpoint name: numpy copy}` of every variable of `model`."""
    from bert_tf.checkpoints import tf1_variable_map
    return {name: np.array(ref.variable.numpy()) for name, ref in tf1_variable_map(model).items()}
