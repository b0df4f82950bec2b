"""Tokenizer throughput (lines/s): ours in the graph and in Python, HuggingFace's.

Text to ids for the first `--lines` lines of the Gutenberg pretraining
corpus (all ASCII) and as many SQuAD dev-v1.1 contexts and questions (some
non-ASCII; longer). Graph tokenizers run in a tf.function on batches of
1,000; HuggingFace's fast tokenizers get the same batches. A call is one
pass over a corpus; after `--warmup` untimed passes (tracing), the timed
passes go round robin over the tokenizers (`round_robin.py`), each right
after an untimed pass of its own (a pass of ours takes 40-50 ms, and after
a single-threaded peer's second-long pass it otherwise paid for a core
waking from idle), and the table
(`timing_table`) gives the fastest, median and slowest pass, lines per
second from the median and the CPU share. Speed counts only with the
right ids: after the timings, each tokenizer's ids from its last pass are
compared line by line with those of our Python `FullTokenizer`, the
original's algorithm (tokenizer_parity.py does the same on 311k texts),
and the header says on how many lines each agrees.

    TF_CPP_MIN_LOG_LEVEL=2 .venv/bin/python bench/tokenizer_speed.py \
        --lines=10000 --iterations=3 --warmup=1
"""

import os
import pathlib
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests" / "tokenization")]

from absl import app, flags  # noqa: E402
import bert_tf  # noqa: E402,F401  (before TensorFlow: oneDNN on, as for the runners)
import tensorflow as tf  # noqa: E402
import tensorflow_text as tf_text  # noqa: E402
import peers  # noqa: E402
with peers.needed():
    import tokenizers
    import transformers

import tokenization_corpora  # noqa: E402
from bert_tf.tokenization import BertTokenizerLayer, FullTokenizer  # noqa: E402
from round_robin import time_round_robin  # noqa: E402
from shared_data import require  # noqa: E402
from timing_table import BenchRun, TimedRow, markdown_table  # noqa: E402

VOCAB = str(tokenization_corpora.SHARED_DATA / "vocab" / "bert-base-uncased-vocab.txt")
BATCH = 1000
REFERENCE = "bert_tf FullTokenizer (Python reference)"

FLAGS = flags.FLAGS
flags.DEFINE_integer("lines", 10_000, "Lines (texts) of each corpus.", lower_bound=1)
flags.DEFINE_integer("iterations", 3, "Timed passes per tokenizer and corpus.", lower_bound=1)
flags.DEFINE_integer("warmup", 1, "Untimed passes first (tracing).", lower_bound=0)


def _batches(lines):
    return [lines[i:i + BATCH] for i in range(0, len(lines), BATCH)]


def graph_runner(layer_fn):
    tokenize = tf.function(layer_fn)

    def run(lines):
        return [tokenize(tf.constant(batch)) for batch in _batches(lines)]
    return run


def ragged_ids(batches):
    """Per line, the ids of a graph tokenizer's ragged batches (word dimensions merged)."""
    return [ids for batch in batches for ids in
            (batch.merge_dims(1, -1) if batch.ragged_rank > 1 else batch).to_list()]


def candidates():
    """`{name: (tokenize(lines) -> its own output, that output -> ids per line)}`."""
    layer = BertTokenizerLayer(VOCAB)
    reference = FullTokenizer(VOCAB)
    vocab = layer.vocabulary
    fast_bert = tf_text.FastBertTokenizer(vocab, token_out_type=tf.int32,
                                          lower_case_nfd_strip_accents=True)
    wordpiece = tokenizers.BertWordPieceTokenizer(VOCAB, lowercase=True)
    hf_fast = transformers.BertTokenizerFast(vocab_file=VOCAB, do_lower_case=True)
    hf_slow = transformers.BertTokenizer(vocab_file=VOCAB, do_lower_case=True)
    as_they_are = list

    def concatenated(batches):
        return [ids for batch in batches for ids in batch]

    return {
        REFERENCE: (lambda lines: [
            reference.convert_tokens_to_ids(reference.tokenize(t)) for t in lines], as_they_are),
        "bert_tf BertTokenizerLayer (tf.function)": (graph_runner(lambda x: layer(x)),
                                                     ragged_ids),
        "tf_text FastBertTokenizer (not exact)": (graph_runner(fast_bert.tokenize), ragged_ids),
        "HF tokenizers BertWordPieceTokenizer": (lambda lines: [
            wordpiece.encode_batch(b, add_special_tokens=False) for b in _batches(lines)],
            lambda batches: [encoding.ids for batch in batches for encoding in batch]),
        "HF transformers BertTokenizerFast": (lambda lines: [
            hf_fast(b, add_special_tokens=False)["input_ids"] for b in _batches(lines)],
            concatenated),
        "HF transformers BertTokenizer (slow)": (lambda lines: [
            hf_slow.convert_tokens_to_ids(hf_slow.tokenize(t)) for t in lines], as_they_are),
    }


def agreement(outputs, to_ids):
    """`name: equal/total` lines whose ids equal the reference's, for every tokenizer."""
    expected = to_ids[REFERENCE](outputs[REFERENCE])
    counts = []
    for name, output in outputs.items():
        ids = to_ids[name](output)
        same = sum(ours == theirs for ours, theirs in zip(ids, expected))
        counts.append(f"{name.split(' (')[0]} {same}/{len(expected)}")
    return ", ".join(counts)


def main(argv):
    del argv
    require(VOCAB)
    corpora = {
        "gutenberg": tokenization_corpora.text_lines("gutenberg_pretrain.txt")[:FLAGS.lines],
        "squad dev": tokenization_corpora.squad_texts("dev-v1.1")[:FLAGS.lines],
    }
    tokenizers_by_name = candidates()
    to_ids = {name: convert for name, (_, convert) in tokenizers_by_name.items()}
    rows, agreements = [], []
    with BenchRun() as run:
        for corpus, lines in corpora.items():
            print(f"timing {corpus} ...", file=sys.stderr, flush=True)
            runners = {name: (lambda tokenize=tokenize, lines=lines: tokenize(lines))
                       for name, (tokenize, _) in tokenizers_by_name.items()}
            times, outputs = time_round_robin(runners, FLAGS.warmup, FLAGS.iterations,
                                              rewarm=True)
            rows += [TimedRow((corpus, name), samples, len(lines))
                     for name, samples in times.items()]
            agreements.append(f"{corpus}, lines with the reference's ids: "
                              f"{agreement(outputs, to_ids)}")
    sizes = "; ".join(f"{corpus}: {len(lines)} lines of {sum(map(len, lines)) / len(lines):.0f} "
                      "characters on average" for corpus, lines in corpora.items())
    print(run.header(f"text to ids, {sizes}; {FLAGS.warmup} warm-up + {FLAGS.iterations} "
                     "timed passes each (each after an untimed one), round robin", *agreements))
    print(markdown_table(("corpus", "tokenizer"), rows, run.threads, unit="lines"))


if __name__ == "__main__":
    app.run(main)
