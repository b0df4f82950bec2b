"""Token parity of our two tokenizers with HuggingFace's slow BertTokenizer.

Runs the reference `FullTokenizer` and the in-graph `BertTokenizerLayer` on
every text of the real data in ../shared/data (pretraining corpora, SQuAD
contexts and questions, CoNLL-2003 sentences, GLUE sentences) and compares
them with `transformers.BertTokenizer`'s BasicTokenizer + WordpieceTokenizer,
HuggingFace's port of the original algorithm, used through its components
because its `tokenize()` lower-cases one character at a time (no final sigma)
and keeps its special tokens whole.

Two documented HuggingFace deviations from the original are counted apart
("HF-only"): it deletes every C* character (the original only Cc/Cf, keeping
private-use and unassigned ones) and NFC-normalises before splitting. Its
100-character word limit is set to the original's 200.

    python bench/tokenizer_parity.py [--cased] [--every N]
"""

import argparse
import os
import pathlib
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests" / "tokenization")]

import peers  # noqa: E402
with peers.needed():
    import transformers

import tokenization_corpora  # noqa: E402
from bert_tf.tokenization import BertTokenizerLayer, FullTokenizer  # noqa: E402
from shared_data import require  # noqa: E402
from tokenization_support import graph_ids, hf_deviates, hf_pieces  # noqa: E402

VOCAB = tokenization_corpora.SHARED_DATA / "vocab" / "bert-base-uncased-vocab.txt"


def compare(texts, reference, layer, hf):
    """(mismatch counts by kind, a few unexplained examples, seconds taken)."""
    start = time.time()
    ours = [reference.tokenize(t) for t in texts]
    theirs = [hf_pieces(hf, t) for t in texts]
    graph = graph_ids(layer, texts)
    counts = {"ref": 0, "fast": 0, "fast_ref": 0, "hf_only": 0}
    examples = []
    for text, mine, hers, ids in zip(texts, ours, theirs, graph):
        mine_ids = reference.convert_tokens_to_ids(mine)
        hers_ids = reference.convert_tokens_to_ids(hers)
        counts["fast_ref"] += ids != mine_ids
        if mine_ids != hers_ids or ids != hers_ids:
            counts["ref"] += mine_ids != hers_ids
            counts["fast"] += ids != hers_ids
            if hf_deviates(text):
                counts["hf_only"] += 1
            elif len(examples) < 3:
                examples.append((text[:120], mine[:20], hers[:20]))
    return counts, examples, time.time() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cased", action="store_true", help="do_lower_case=False")
    parser.add_argument("--every", type=int, default=1, help="take every N-th text")
    args = parser.parse_args()
    require(VOCAB)
    lower = not args.cased
    reference = FullTokenizer(str(VOCAB), do_lower_case=lower)
    layer = BertTokenizerLayer(str(VOCAB), do_lower_case=lower)
    hf = transformers.BertTokenizer(vocab_file=str(VOCAB), do_lower_case=lower)
    hf.wordpiece_tokenizer.max_input_chars_per_word = 200

    print(f"do_lower_case={lower}; vocabulary {VOCAB.name}; every {args.every} text(s)")
    header = (f"{'source':20s} {'texts':>8s} {'ref!=HF':>8s} {'fast!=HF':>9s} "
              f"{'fast!=ref':>9s} {'HF-only':>8s} {'seconds':>8s}")
    print(header)
    print("-" * len(header))
    totals = [0] * 5
    unexplained = []
    for name, texts in tokenization_corpora.all_sources(args.every).items():
        counts, examples, seconds = compare(texts, reference, layer, hf)
        row = [len(texts), counts["ref"], counts["fast"], counts["fast_ref"], counts["hf_only"]]
        totals = [a + b for a, b in zip(totals, row)]
        print(f"{name:20s} {row[0]:8d} {row[1]:8d} {row[2]:9d} {row[3]:9d} {row[4]:8d} "
              f"{seconds:8.1f}", flush=True)
        unexplained.extend((name, *e) for e in examples)
    print("-" * len(header))
    print(f"{'total':20s} {totals[0]:8d} {totals[1]:8d} {totals[2]:9d} {totals[3]:9d} "
          f"{totals[4]:8d}")
    print("HF-only: mismatches on texts where HuggingFace's documented deviations apply.")
    for name, text, mine, hers in unexplained:
        print(f"\nunexplained in {name}: {text!r}\n  ours: {mine}\n  HF:   {hers}")


if __name__ == "__main__":
    main()
