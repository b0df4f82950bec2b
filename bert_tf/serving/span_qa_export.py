"""`SpanQAServing`: a question and its context -> the answer, cut from the context.

The served form of a `run_squad.py` model; the whole of the original's
prediction runs in the graph:

1. the question is tokenized and cut to `max_query_length` pieces; the
   context is tokenized with each piece's character span (`OffsetsTokenizer`);
2. the context is cut into windows of `max_seq_length - len(question) - 3`
   pieces every `doc_stride` pieces (`[CLS] question [SEP] window [SEP]`),
   so a context of any length is read whole; each piece belongs to the
   window where it has the most context;
3. in each window the `n_best_size` best start and end logits among its
   context pieces are paired; a span must start on a piece of its own best
   window, not end before it starts and hold at most `max_answer_length`
   pieces; the best span by start + end logit is the answer;
4. the answer is the context's own characters from the first piece's first
   character to the last piece's last one.

For a batch of B questions the signature returns `answer` string [B],
`start` / `end` int32 [B] (character offsets into the context, end
exclusive: `context[start:end] == answer` in Python), and `score` float32
[B] (start + end logit of the best span). With `version_2_with_negative`
it also returns `null_score_diff` (the [CLS] score, smallest over the
windows, minus the best span's) and answers "", -1, -1 when that exceeds
`null_score_diff_threshold` (`score` stays the best span's). Without any
valid span (an empty context) the answer is "", -1, -1 and `score` 0.
"""

import tensorflow as tf

from bert_tf.serving.sources import find_encoder
from bert_tf.serving.span_options import SpanOptions
from bert_tf.serving.signatures import signature, string_spec
from bert_tf.serving.text_module import TextServingModule
from bert_tf.serving.windows import context_windows
from bert_tf.tokenization.offsets_tokenizer import OffsetsTokenizer

_NO_SCORE = float("-inf")


class SpanQAServing(TextServingModule):
    """Serves a span model (`build_span_model`) as question + context -> answer.

    Args:
        span_model: a built Keras model, packed inputs -> {"start_logits",
            "end_logits"} [B, T].
        vocabulary, asset_dir, max_seq_length, do_lower_case: as
            `TextServingModule`.
        jit_compile: as `TextServingModule`.
        **span_options: `SpanOptions`' fields (`doc_stride`, `n_best_size`,
            ...), the original's `run_squad.py` flags of the same names;
            its defaults otherwise.

    Example:

    >>> import tempfile
    >>> from bert_tf.config import BertConfig
    >>> from bert_tf.modeling import build_span_model
    >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "who", "paris", "is", "in", "france"]
    >>> model = build_span_model(BertConfig.named("tiny", vocab_size=len(vocab)))
    >>> module = SpanQAServing(model, vocab, tempfile.mkdtemp(), max_seq_length=8,
    ...                        doc_stride=2, max_query_length=2)
    >>> context = "Paris is in  FRANCE."
    >>> found = module.serve_questions(tf.constant(["who?"]), tf.constant([context]))
    >>> start, end = int(found["start"][0]), int(found["end"][0])
    >>> found["answer"][0].numpy().decode() == context[start:end] != ""
    True
    """

    kind = "span_qa"
    always_pairs = "a question and its context"

    def __init__(self, span_model, vocabulary, asset_dir, max_seq_length=384,
                 do_lower_case=True, jit_compile=False, **span_options):
        self.options = SpanOptions(**span_options)
        if max_seq_length <= self.options.max_query_length + 3:
            raise ValueError(f"max_seq_length ({max_seq_length}) must be greater than "
                             f"max_query_length ({self.options.max_query_length}) + 3")
        super().__init__(find_encoder(span_model).config, vocabulary, asset_dir,
                         max_seq_length, do_lower_case, jit_compile=jit_compile)
        self.serve_model(span_model)

    def text_preprocessor(self, keep_special_tokens):
        return OffsetsTokenizer(self.tokens, self.do_lower_case)

    def metadata_values(self):
        return {**super().metadata_values(), **self.options.span_values()}

    def answer_signatures(self):
        return {"serving_default": signature(self.serve_questions, string_spec("question"),
                                             string_spec("context"))}

    def serve_questions(self, question, context):
        """The answers to `question` in `context` (tf.string [B] each)."""
        tf.debugging.assert_equal(tf.size(question), tf.size(context),
                                  message="question and context must have the same length")
        batch_size = tf.size(question, tf.int64)
        # Offsets count the characters of valid UTF-8: invalid bytes go first.
        context = tf.strings.unicode_transcode(context, "UTF-8", "UTF-8", errors="ignore")
        query = self.preprocessor(question).ids[:, :self.options.max_query_length]
        pieces = self.preprocessor(context)
        windows = context_windows(query.row_lengths(), pieces.ids.row_lengths(),
                                  self.max_seq_length, self.options.doc_stride)
        # Each window piece's index in the batch's flat context pieces.
        window_pieces = (tf.ragged.range(windows.length) + windows.start[:, None]
                         + tf.gather(pieces.ids.row_starts(), windows.example)[:, None])
        starts, ends = self._logits(self.pack(
            [tf.gather(query, windows.example), tf.gather(pieces.ids.flat_values, window_pieces)]))
        doc_offset = tf.gather(query.row_lengths(), windows.example) + 2
        first, last, score = self._best_spans(windows, doc_offset, starts, ends, batch_size)
        found = score > _NO_SCORE
        score = tf.where(found, score, 0.0)
        outputs = {}
        if self.options.version_2_with_negative:
            null_diff = _null_scores(windows, starts, ends, batch_size) - score
            outputs["null_score_diff"] = tf.cast(null_diff, tf.float32)
            found &= null_diff <= self.options.null_score_diff_threshold
        # Piece indices within each context -> flat piece indices of the batch.
        base = pieces.ids.row_starts()
        start = _gather_or_minus_one(pieces.starts.flat_values, first + base, found)
        end = _gather_or_minus_one(pieces.ends.flat_values, last + base, found)
        outputs.update(
            answer=tf.where(found, tf.strings.substr(context, tf.maximum(start, 0),
                                                     end - start, unit="UTF8_CHAR"), ""),
            start=start, end=end, score=tf.cast(score, tf.float32))
        return outputs

    def _logits(self, packed):
        """(start, end) logits float32 [windows, T] of the packed windows."""
        def run():
            outputs = self.inference(packed)
            return (tf.cast(outputs["start_logits"], tf.float32),
                    tf.cast(outputs["end_logits"], tf.float32))

        # A batch without windows (only empty contexts) has nothing to run.
        nothing = tf.zeros([0, 1])
        return tf.cond(tf.shape(packed["input_ids"])[0] > 0, run, lambda: (nothing, nothing))

    def _best_spans(self, windows, doc_offset, starts, ends, batch_size):
        """(first piece, last piece, score) of each example's best span; score -inf if none.

        Pieces are counted within the example's context. Candidates are
        ranked by start + end logit in float64, ties going to the first in
        the original's order: window, then start rank, then end rank.
        """
        positions = tf.ragged.range(windows.length) + doc_offset[:, None]
        at = tf.stack([tf.cast(positions.value_rowids(), tf.int64), positions.flat_values], 1)

        def top(logits):
            values = positions.with_flat_values(tf.gather_nd(logits, at)).to_tensor(_NO_SCORE)
            k = tf.minimum(self.options.n_best_size, tf.shape(values)[1])
            logit, index = tf.math.top_k(values, k)
            return logit, tf.cast(index, tf.int64)

        (start_logit, start_at), (end_logit, end_at) = top(starts), top(ends)
        length = windows.length[:, None]
        start_ok = (start_at < length) & tf.gather(
            windows.max_context.to_tensor(False), start_at, batch_dims=1)
        end_ok = end_at < length
        start_at, end_at = start_at[:, :, None], end_at[:, None, :]
        valid = (start_ok[:, :, None] & end_ok[:, None, :] & (end_at >= start_at)
                 & (end_at < start_at + self.options.max_answer_length))
        score = tf.where(valid, tf.cast(start_logit, tf.float64)[:, :, None]
                         + tf.cast(end_logit, tf.float64)[:, None, :], _NO_SCORE)
        window_start = windows.start[:, None, None]
        shape = tf.shape(score)

        def per_example(values, fill):
            """[W, k, k] -> [B, candidates + 1], a `fill` column last."""
            flat = tf.reshape(tf.broadcast_to(values, shape), [shape[0], shape[1] * shape[2]])
            dense = tf.RaggedTensor.from_value_rowids(
                flat, windows.example, batch_size).merge_dims(1, 2).to_tensor(fill)
            return tf.concat([dense, tf.fill([batch_size, 1], tf.cast(fill, dense.dtype))], 1)

        scores = per_example(score, _NO_SCORE)
        best = tf.reduce_max(scores, axis=1)
        candidates = tf.range(tf.shape(scores, out_type=tf.int64)[1])
        first_best = tf.reduce_min(
            tf.where(tf.equal(scores, best[:, None]), candidates, candidates[-1]), axis=1)

        def chosen(piece):
            return tf.gather(per_example(piece + window_start, tf.constant(0, tf.int64)),
                             first_best, batch_dims=1)

        return chosen(start_at), chosen(end_at), best


def _null_scores(windows, starts, ends, batch_size):
    """Each example's smallest [CLS] start + end logit over its windows (float64, as in
    Python); 0 for an example without windows (an empty context), as in Python."""
    null = -tf.math.unsorted_segment_max(
        -(tf.cast(starts[:, 0], tf.float64) + tf.cast(ends[:, 0], tf.float64)),
        windows.example, batch_size)
    return tf.where(windows.first_window[1:] > windows.first_window[:-1], null, 0.0)


def _gather_or_minus_one(values, indices, found):
    """values[indices] where `found`, else -1 (`indices` there may be anything)."""
    size = tf.size(values, tf.int64)
    return tf.gather(tf.concat([values, [-1]], 0), tf.where(found, indices, size))
