"""Where `BertTokenizerLayer`'s time goes: time per TF op, on both corpora.

Runs the layer's graph in a TF1-style session with full tracing on the
texts of tokenizer_speed.py (10,000 Gutenberg lines, 10,000 SQuAD dev
contexts and questions) in batches of 1,000, and prints the ops that took
the most time, summed over the batches (mean of the passes). Tracing adds
its own cost to every op, so compare shares, not totals, with the speed
benchmark.

    python bench/tokenizer_profile.py [--lines N] [--top K] [--passes P]
"""

import argparse
import collections
import os
import pathlib
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests" / "tokenization")]

import tensorflow as tf  # noqa: E402

import tokenization_corpora  # noqa: E402
from bert_tf.tokenization import BertTokenizerLayer  # noqa: E402
from shared_data import require  # noqa: E402

VOCAB = str(tokenization_corpora.SHARED_DATA / "vocab" / "bert-base-uncased-vocab.txt")
BATCH = 1000


def op_times(lines, passes):
    """({op name: (op type, ms per pass)}, wall ms per pass) of the layer on `lines`."""
    graph = tf.Graph()
    with graph.as_default():
        text = tf.compat.v1.placeholder(tf.string, [None])
        ids = BertTokenizerLayer(VOCAB)(text)
        fetches = [ids.flat_values, ids.row_splits]
    session = tf.compat.v1.Session(graph=graph)
    batches = [lines[i:i + BATCH] for i in range(0, len(lines), BATCH)]
    session.run(fetches, {text: batches[0]})  # warm-up
    options = tf.compat.v1.RunOptions(trace_level=tf.compat.v1.RunOptions.FULL_TRACE)
    micros, types = collections.Counter(), {}
    start = time.perf_counter()
    for _ in range(passes):
        for batch in batches:
            metadata = tf.compat.v1.RunMetadata()
            session.run(fetches, {text: batch}, options=options, run_metadata=metadata)
            for device in metadata.step_stats.dev_stats:
                for node in device.node_stats:
                    micros[node.node_name] += node.op_end_rel_micros
                    types[node.node_name] = node.timeline_label.split("(")[0].split(" = ")[-1]
    wall = (time.perf_counter() - start) * 1000 / passes
    return {name: (types[name], us / 1000 / passes) for name, us in micros.items()}, wall


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=10_000)
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--passes", type=int, default=3)
    args = parser.parse_args()
    require(VOCAB)
    corpora = {
        "gutenberg": tokenization_corpora.text_lines("gutenberg_pretrain.txt")[:args.lines],
        "squad dev": tokenization_corpora.squad_texts("dev-v1.1")[:args.lines],
    }
    print(f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for name, lines in corpora.items():
        times, wall = op_times(lines, args.passes)
        total = sum(ms for _, ms in times.values())
        print(f"\n{name}: {len(lines)} texts; {wall:.1f} ms wall, {total:.1f} ms in ops, "
              f"per pass (traced)")
        ranked = sorted(times.items(), key=lambda item: -item[1][1])[:args.top]
        for op, (kind, ms) in ranked:
            print(f"  {ms:7.1f} ms {100 * ms / total:5.1f}%  {kind:28s} {op}")


if __name__ == "__main__":
    main()
