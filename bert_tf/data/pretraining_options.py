"""`PretrainingDataOptions`: the one set of pretraining-data flags, checked once.

Exact mode, fast mode (`create_pretraining_data.py`) and dynamic masking
(`run_pretraining.py --dynamic_masking`) all take this object, so a flag has
one name, one default and one check everywhere. The names and defaults are
those of the original `create_pretraining_data.py` flags.
"""

import dataclasses


@dataclasses.dataclass(frozen=True)
class PretrainingDataOptions:
    """How text becomes masked sentence-pair pretraining examples.

    Attributes:
      do_lower_case: lower-case and strip accents before WordPiece (uncased
        vocabularies).
      max_seq_length: tokens per example, [CLS] and both [SEP]s included.
      max_predictions_per_seq: most masked-LM targets per example.
      masked_lm_prob: share of an example's tokens to predict.
      short_seq_prob: chance that a document (static modes) or a pair
        (dynamic mode) aims at a random length below max_seq_length.
      do_whole_word_mask: mask all the WordPieces of a word together.
      dupe_factor: passes over the input, each with fresh pairs and masks
        (static modes; dynamic masking draws fresh ones every epoch).
      random_seed: seed of every draw of the static modes (dynamic masking
        takes its tf.data seed separately, None meaning a fresh run).

    Raises:
      ValueError: naming the flag whose value cannot work.

    Example:
      >>> options = PretrainingDataOptions(max_seq_length=64, dupe_factor=2)
      >>> options.max_num_tokens, options.masked_lm_prob
      (61, 0.15)
      >>> PretrainingDataOptions(masked_lm_prob=0.0)
      Traceback (most recent call last):
      ...
      ValueError: masked_lm_prob must be in (0, 1], got 0.0
    """

    do_lower_case: bool = True
    max_seq_length: int = 128
    max_predictions_per_seq: int = 20
    masked_lm_prob: float = 0.15
    short_seq_prob: float = 0.1
    do_whole_word_mask: bool = False
    dupe_factor: int = 10
    random_seed: int = 12345

    def __post_init__(self):
        checks = [
            ("max_seq_length", self.max_seq_length >= 5, ">= 5 ([CLS] A [SEP] B [SEP])"),
            ("max_predictions_per_seq", self.max_predictions_per_seq >= 1, ">= 1"),
            ("masked_lm_prob", 0.0 < self.masked_lm_prob <= 1.0, "in (0, 1]"),
            ("short_seq_prob", 0.0 <= self.short_seq_prob <= 1.0, "in [0, 1]"),
            ("dupe_factor", self.dupe_factor >= 1, ">= 1"),
        ]
        for name, ok, rule in checks:
            if not ok:
                raise ValueError(f"{name} must be {rule}, got {getattr(self, name)}")

    def check_for_dynamic_masking(self) -> None:
        """Raises ValueError if a sequence cannot hold `max_predictions_per_seq` targets.

        Records from create_pretraining_data only pad their target lists (as
        the original's do), but dynamic masking draws the targets among the
        sequence's positions, which must be at least as many.

        Example:
          >>> PretrainingDataOptions(max_seq_length=16,
          ...                        max_predictions_per_seq=20).check_for_dynamic_masking()
          Traceback (most recent call last):
          ...
          ValueError: max_predictions_per_seq must be at most max_seq_length (16) with dynamic masking, got 20
        """
        if self.max_predictions_per_seq > self.max_seq_length:
            raise ValueError(f"max_predictions_per_seq must be at most max_seq_length "
                             f"({self.max_seq_length}) with dynamic masking, got "
                             f"{self.max_predictions_per_seq}")

    @property
    def max_num_tokens(self) -> int:
        """Tokens of A and B together: max_seq_length less [CLS] and two [SEP]s."""
        return self.max_seq_length - 3
