"""Tokenizer throughput (lines/s): ours in the graph and in Python, HuggingFace's.

Text to ids for 10,000 lines of the Gutenberg pretraining corpus (all ASCII)
and 10,000 SQuAD dev-v1.1 contexts and questions (some non-ASCII; longer),
best of three passes after a warm-up. Graph tokenizers run in a tf.function
on batches of 1,000; HuggingFace's fast tokenizers get the same batches.

    python bench/tokenizer_speed.py [--lines N]
"""

import argparse
import os
import pathlib
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests" / "tokenization")]

import tensorflow as tf  # noqa: E402
import tensorflow_text as tf_text  # noqa: E402
import tokenizers  # noqa: E402
import transformers  # noqa: E402

import tokenization_corpora  # noqa: E402
from bert_tf.tokenization import BertTokenizerLayer, FullTokenizer  # noqa: E402

VOCAB = str(tokenization_corpora.SHARED_DATA / "vocab" / "bert-base-uncased-vocab.txt")
BATCH = 1000


def _batches(lines):
    return [lines[i:i + BATCH] for i in range(0, len(lines), BATCH)]


def graph_runner(layer_fn):
    tokenize = tf.function(layer_fn)

    def run(lines):
        for batch in _batches(lines):
            tokenize(tf.constant(batch))
    return run


def candidates():
    layer = BertTokenizerLayer(VOCAB)
    reference = FullTokenizer(VOCAB)
    vocab = layer.vocabulary
    fast_bert = tf_text.FastBertTokenizer(vocab, token_out_type=tf.int32,
                                          lower_case_nfd_strip_accents=True)
    wordpiece = tokenizers.BertWordPieceTokenizer(VOCAB, lowercase=True)
    hf_fast = transformers.BertTokenizerFast(vocab_file=VOCAB, do_lower_case=True)
    hf_slow = transformers.BertTokenizer(vocab_file=VOCAB, do_lower_case=True)
    return {
        "bert_tf BertTokenizerLayer (tf.function)": graph_runner(lambda x: layer(x)),
        "bert_tf FullTokenizer (Python reference)": lambda lines: [
            reference.convert_tokens_to_ids(reference.tokenize(t)) for t in lines],
        "tf_text FastBertTokenizer (not exact)": graph_runner(fast_bert.tokenize),
        "HF tokenizers BertWordPieceTokenizer": lambda lines: [
            wordpiece.encode_batch(b, add_special_tokens=False) for b in _batches(lines)],
        "HF transformers BertTokenizerFast": lambda lines: [
            hf_fast(b, add_special_tokens=False)["input_ids"] for b in _batches(lines)],
        "HF transformers BertTokenizer (slow)": lambda lines: [
            hf_slow.convert_tokens_to_ids(hf_slow.tokenize(t)) for t in lines],
    }


def lines_per_second(run, lines, passes=3):
    run(lines[:BATCH])  # warm-up (tracing)
    best = float("inf")
    for _ in range(passes):
        start = time.perf_counter()
        run(lines)
        best = min(best, time.perf_counter() - start)
    return len(lines) / best


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=10_000)
    args = parser.parse_args()
    corpora = {
        "gutenberg": tokenization_corpora.text_lines("gutenberg_pretrain.txt")[:args.lines],
        "squad dev": tokenization_corpora.squad_texts("dev-v1.1")[:args.lines],
    }
    for name, lines in corpora.items():
        chars = sum(map(len, lines)) / len(lines)
        print(f"{name}: {len(lines)} lines, {chars:.0f} characters on average")
    header = f"{'tokenizer':44s}" + "".join(f"{name + ' lines/s':>20s}" for name in corpora)
    print(header)
    print("-" * len(header))
    for name, run in candidates().items():
        speeds = [lines_per_second(run, lines) for lines in corpora.values()]
        print(f"{name:44s}" + "".join(f"{s:20,.0f}" for s in speeds), flush=True)


if __name__ == "__main__":
    main()
