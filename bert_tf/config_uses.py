"""What a model's config allows it to be used for: its direction and sentence pairs.

A `bert_config.json` says more than sizes. `run_pretraining.py --causal`
marks its left-to-right model `"causal": true`, and every model built from
that config attends left to right too; a use that needs attention both
ways (a masked-LM export, pretraining on without `--causal`) is refused.
A model with one token type (`type_vocab_size: 1`) has no embedding for
the second text of a pair, so pairs are refused for it. Each check names
where the config came from and what asked for the use.
"""

import dataclasses

from bert_tf.config import CAUSAL_KEY, ConfigError


def as_causal(config):
    """`config` marked as a left-to-right model's (`CAUSAL_KEY`)."""
    return dataclasses.replace(config, extra={**config.extra, CAUSAL_KEY: True})


def is_causal(config):
    """Whether `config` is a left-to-right model's: each position attends to itself and the
    positions before it only, in pretraining and in every use after it.

    >>> from bert_tf.config import BertConfig
    >>> config = BertConfig.named("tiny", vocab_size=10)
    >>> is_causal(config), is_causal(as_causal(config))
    (False, True)
    """
    return config.extra.get(CAUSAL_KEY) is True


def require_bidirectional(config, source, reason):
    """Refuses a left-to-right model's config where only a model that attends both ways fits.

    Args:
        config: the model's `BertConfig`.
        source: where it was read from (a flag and file), named in the message.
        reason: why the use needs attention both ways, named in the message.

    Raises:
        ConfigError: naming `source`, `reason` and how to use the model so anyway.

    >>> from bert_tf.config import BertConfig
    >>> require_bidirectional(as_causal(BertConfig.named("tiny", vocab_size=10)), "x.json",
    ...                       "which a masked-LM export would ask to fill in a [MASK]")
    Traceback (most recent call last):
    bert_tf.config.ConfigError: x.json: a left-to-right model ("causal": true, from
    run_pretraining.py --causal), which a masked-LM export would ask to fill in a [MASK]; remove
    the key from its bert_config.json to use it with attention both ways
    """
    if is_causal(config):
        raise ConfigError(f'{source}: a left-to-right model ("{CAUSAL_KEY}": true, from '
                          f"run_pretraining.py --causal), {reason}; remove the key from its "
                          "bert_config.json to use it with attention both ways")


def require_segment_pairs(config, source, pairs):
    """Refuses sentence pairs for a model with one token type (`type_vocab_size: 1`).

    The second text of a pair has segment id 1, for which such a model
    (RoBERTa-style, or a distilled model saved as BERT) has no token-type
    embedding: the lookup fails on a CPU without XLA, and under XLA or on
    a GPU reads row 0 or garbage without a word. Its single texts are fine.

    Args:
        config: the model's `BertConfig`.
        source: where it was read from (a flag and file), named in the message.
        pairs: what pairs two texts (a data file and line, a task that always
            does), named in the message.

    Raises:
        ConfigError: naming `source`, its `type_vocab_size` and `pairs`.

    >>> from bert_tf.config import BertConfig
    >>> config = BertConfig.named("tiny", vocab_size=10, type_vocab_size=1)
    >>> require_segment_pairs(config, "config.json", "task swag (a context and each ending)")
    Traceback (most recent call last):
    bert_tf.config.ConfigError: config.json: type_vocab_size=1, so the model has no token-type
    embedding for the second text of a pair (segment id 1), but task swag (a context and each
    ending) pairs two texts; use a model with type_vocab_size >= 2 (single texts need only one)
    """
    if config.type_vocab_size < 2:
        raise ConfigError(f"{source}: type_vocab_size={config.type_vocab_size}, so the model "
                          "has no token-type embedding for the second text of a pair (segment "
                          f"id 1), but {pairs} pairs two texts; use a model with "
                          "type_vocab_size >= 2 (single texts need only one)")
