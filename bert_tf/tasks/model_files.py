"""The files a runner's model is made of, found and checked before any work.

A model is a config, a vocabulary and (usually) start weights. Users give
them as the original's flags, often leaving the config and vocabulary to be
found beside `--init_checkpoint`. This module resolves them once for every
runner and refuses combinations that would silently compute something else:
a vocabulary with more tokens than the model's embedding table (ids past the
table fail deep in the graph on a CPU and read garbage on a GPU), a casing
that contradicts a released checkpoint's name or an uncased vocabulary
(`--do_lower_case=False` with one; the reverse gets a warning), or a
sequence length the position table cannot hold. Sentence pairs given to a
model with one token type (`type_vocab_size: 1`) are refused where a task
meets them (`ModelFiles.require_pairs`). A vocabulary that differs from
the one stored beside the checkpoint is almost always a mistake, so it
gets a warning; a left-to-right checkpoint keeps its `"causal"` mark under
a `--bert_config_file` without it.
"""

import dataclasses
import filecmp
import os

from absl import logging

from bert_tf.checkpoints import (CheckpointError, checkpoint_folder, config_beside,
                                 config_changes, resolve_config)
from bert_tf.checkpoints.folders import model_in_folder
from bert_tf.checkpoints.tf1 import resolve_checkpoint_prefix
from bert_tf.config_uses import as_causal, is_causal, require_segment_pairs
from bert_tf.errors import UsageError
from bert_tf.tokenization.vocab import check_casing, load_vocab, validate_case_matches_checkpoint

# [CLS] + one token + [SEP]: the shortest sequence any task can pack.
MIN_SEQ_LENGTH = 3
# Embedding rows a model may have past its vocabulary (tables padded to a multiple
# of 8 or 128 for speed); a vocabulary shorter by more is likely the wrong one.
PADDING_ROWS = 128


@dataclasses.dataclass(frozen=True)
class ModelFiles:
    """A resolved model: its `BertConfig`, vocabulary file and start weights.

    `config_source`: where the config was read, as the flag that gave it
    (`--bert_config_file=...` or `--init_checkpoint=...`), for messages.
    """

    config: object
    vocab_file: str
    init_checkpoint: str = None
    config_source: str = None

    def require_pairs(self, pairs, error=UsageError):
        """Refuses sentence pairs where the model has one token type (`type_vocab_size: 1`).

        Args:
            pairs: what pairs two texts: a task that always does (refused
                before any work as a `UsageError`), or a data file (and line)
                found so while reading (`error=ValueError`: data that does not fit).

        Raises:
            `error`, naming the config, its `type_vocab_size` and `pairs`
            (`config_uses.require_segment_pairs`).
        """
        try:
            require_segment_pairs(self.config, self.config_source or "the model's config",
                                  pairs)
        except ValueError as refused:
            raise error(str(refused)) from None


def vocab_beside(init_checkpoint):
    """`vocab.txt` in the checkpoint's folder, or None."""
    if not init_checkpoint:
        return None
    candidate = os.path.join(checkpoint_folder(init_checkpoint), "vocab.txt")
    return candidate if os.path.exists(candidate) else None


def _checked_against_stored(config, bert_config_file, init_checkpoint):
    """`--bert_config_file`'s config, checked against the one stored beside the checkpoint.

    Shapes that differ fail when the weights load, but some differences keep
    every shape (`num_attention_heads`, `hidden_act`): the weights then load
    into a model that computes something else, with a warning. A model
    pretrained left to right (`"causal": true` beside it) stays one: a
    config file without the mark built it attending both ways, without a
    word, and pretraining it further so was not refused.
    """
    try:
        stored = config_beside(init_checkpoint)
    except (CheckpointError, ValueError):  # none beside it, or one that does not read
        return config
    changes = config_changes(config, stored, "beside it")
    if changes:
        logging.warning("--bert_config_file=%s differs from the config stored beside "
                        "--init_checkpoint=%s: %s; the weights will compute another model "
                        "unless that is intended", bert_config_file, init_checkpoint,
                        ", ".join(changes))
    if is_causal(stored) and not is_causal(config):
        logging.info("--init_checkpoint=%s holds a left-to-right model (\"causal\": true "
                     "beside it): so is this run's", init_checkpoint)
        return as_causal(config)
    return config


def _model_in_folder(init_checkpoint):
    """The model an `--init_checkpoint` folder means; None where no folder is given or it
    holds none. A folder of two is refused here, before any work: which one is meant is for
    the path to say (`folders.model_in_folder`)."""
    if init_checkpoint and os.path.isdir(init_checkpoint):
        return model_in_folder(init_checkpoint)
    return None


def resolve_model_files(bert_config_file=None, vocab_file=None, init_checkpoint=None,
                        do_lower_case=True, max_seq_length=None, needs_vocab=True):
    """Finds and checks a runner's config, vocabulary and start weights.

    Args:
        bert_config_file: `--bert_config_file`; default: the one beside the checkpoint.
        vocab_file: `--vocab_file`; default: `vocab.txt` beside the checkpoint.
        init_checkpoint: `--init_checkpoint` (original, HuggingFace or ours), or None.
        do_lower_case: `--do_lower_case`, checked against released checkpoint names.
        max_seq_length: `--max_seq_length`, checked against the position table.
        needs_vocab: False for runners that read no text (pretraining records): no
            vocabulary is then required, and the casing is not checked.

    Raises:
        UsageError: naming the flags, when the files do not fit together.
        CheckpointError: an `--init_checkpoint` folder that holds two models
            (`bert_tf.checkpoints.folders`), or none.

    Example:

    >>> import json, os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with open(os.path.join(folder, "vocab.txt"), "w") as f:
    ...     _ = f.write("[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\nhi\\n")
    >>> with open(os.path.join(folder, "bert_config.json"), "w") as f:
    ...     json.dump({"vocab_size": 4, "hidden_size": 8, "num_hidden_layers": 1,
    ...                "num_attention_heads": 2, "intermediate_size": 16, "hidden_act": "gelu",
    ...                "max_position_embeddings": 16, "type_vocab_size": 2}, f)
    >>> resolve_model_files(init_checkpoint=folder)  # configs alone: no weights to start from
    Traceback (most recent call last):
    bert_tf.checkpoints.load_rules.CheckpointError: ...: folder holds no bert_model.ckpt.index, ...
    >>> _ = open(os.path.join(folder, "bert_model.ckpt.index"), "w")  # a release's files
    >>> resolve_model_files(init_checkpoint=folder)
    Traceback (most recent call last):
    bert_tf.errors.UsageError: --vocab_file=...vocab.txt has 5 tokens but the model's embedding table has vocab_size=4 rows (bert_config.json); give the vocabulary the model was trained with
    """
    in_folder = _model_in_folder(init_checkpoint)
    if needs_vocab:
        try:
            validate_case_matches_checkpoint(do_lower_case, init_checkpoint)
        except ValueError as error:
            raise UsageError(str(error)) from None
    config = resolve_config(bert_config_file, init_checkpoint)  # names a keras-hub preset
    if in_folder is None and init_checkpoint and os.path.isdir(init_checkpoint):
        # No weights to start from (a folder of configs): said now, as the load would say
        # it once the data was read and tokenized.
        resolve_checkpoint_prefix(init_checkpoint)
    config_source = (f"--bert_config_file={bert_config_file}" if bert_config_file
                     else f"--init_checkpoint={init_checkpoint}")
    if bert_config_file and init_checkpoint:
        config = _checked_against_stored(config, bert_config_file, init_checkpoint)
    if max_seq_length is not None:
        if max_seq_length > config.max_position_embeddings:
            raise UsageError(f"--max_seq_length={max_seq_length} exceeds the model's "
                             f"max_position_embeddings {config.max_position_embeddings}")
        if max_seq_length < MIN_SEQ_LENGTH:
            raise UsageError(f"--max_seq_length={max_seq_length} is too short: a sequence "
                             f"needs [CLS], a token and [SEP] (at least {MIN_SEQ_LENGTH})")
    beside = vocab_beside(init_checkpoint)
    vocab_file = vocab_file or beside
    if not needs_vocab and not vocab_file:
        return ModelFiles(config, None, init_checkpoint, config_source)
    if not vocab_file:
        raise UsageError("--vocab_file is required (no vocab.txt beside --init_checkpoint)")
    vocab = load_vocab(vocab_file)
    check_casing(vocab, vocab_file, do_lower_case)
    vocab_size = len(vocab)
    if vocab_size > config.vocab_size:
        raise UsageError(
            f"--vocab_file={vocab_file} has {vocab_size} tokens but the model's embedding table "
            f"has vocab_size={config.vocab_size} rows ({bert_config_file or 'bert_config.json'});"
            " give the vocabulary the model was trained with")
    if vocab_size + PADDING_ROWS < config.vocab_size:
        logging.warning("--vocab_file=%s has %d tokens, %d fewer than the model's vocab_size=%d "
                        "rows: is it the vocabulary the model was trained with?", vocab_file,
                        vocab_size, config.vocab_size - vocab_size, config.vocab_size)
    if beside and not filecmp.cmp(vocab_file, beside, shallow=False):
        logging.warning("--vocab_file=%s differs from %s stored beside --init_checkpoint; the "
                        "ids will not mean what the model learned unless that is intended",
                        vocab_file, beside)
    return ModelFiles(config, vocab_file, init_checkpoint, config_source)
