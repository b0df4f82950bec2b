"""`SpanOptions`: how a context is windowed and an answer chosen, with the original's defaults.

These are the original `run_squad.py` flags that decide what a span model
answers, besides the sequence length. `run_squad.py` trains and predicts
with them (`tasks.squad.SquadOptions` adds the length and the logging) and
a span QA SavedModel records them, so the export answers as the run did.
They live here, in the lower layer, so both read the one set of defaults.

Example:

>>> SpanOptions(doc_stride=64).doc_stride, SpanOptions().max_answer_length
(64, 30)
>>> SpanOptions(n_best_size=0)
Traceback (most recent call last):
...
ValueError: n_best_size must be positive, got 0
"""

import dataclasses


@dataclasses.dataclass(frozen=True)
class SpanOptions:
    """The original's span flags.

    Attributes:
        doc_stride: context pieces between window starts.
        max_query_length: question pieces kept.
        n_best_size: best starts and ends paired in each window (and the
            length of `nbest_predictions.json`'s lists).
        max_answer_length: the longest answer, in pieces.
        version_2_with_negative: questions may have no answer (SQuAD 2.0).
        null_score_diff_threshold: with `version_2_with_negative`, answer
            nothing when the null score beats the best span's by more.
    """

    doc_stride: int = 128
    max_query_length: int = 64
    n_best_size: int = 20
    max_answer_length: int = 30
    version_2_with_negative: bool = False
    null_score_diff_threshold: float = 0.0

    def __post_init__(self):
        for field in dataclasses.fields(SpanOptions):  # 0 -> 0.0 for the threshold, say
            object.__setattr__(self, field.name, field.type(getattr(self, field.name)))
        for name in ("doc_stride", "max_query_length", "n_best_size", "max_answer_length"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")

    def span_values(self):
        """`{name: value}` of these options alone (a subclass's own fields left out)."""
        return {field.name: getattr(self, field.name)
                for field in dataclasses.fields(SpanOptions)}
