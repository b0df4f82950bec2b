"""Writes demo/data/authors/: which author wrote a sentence (the demo's fine-tuning task).

Sentences come from the Gutenberg corpus documents that the demo's
pretraining corpus does *not* contain (it holds every 4th document), so the
classifier is tested on text the pretrained model never saw. Kept for
provenance; the output is committed and the demo only reads it.

    python demo/make_author_task.py ../shared/data/corpus/gutenberg_pretrain.txt
"""

import os
import random
import sys

# First document index of each author in gutenberg_pretrain.txt.
AUTHORS = [(0, "austen"), (196, "blake"), (211, "chesterton"), (321, "milton"),
           (334, "shakespeare"), (414, "whitman")]
TRAIN, DEV = 150, 40
SKIP = ("project gutenberg", "etext", "ebook", "@", "http", "scanned", "produced by")


def author_of(index):
    return [name for start, name in AUTHORS if start <= index][-1]


def main(corpus):
    documents = [d for d in open(corpus, encoding="utf-8").read().split("\n\n") if d.strip()]
    sentences = {name: [] for _, name in AUTHORS}
    for index, document in enumerate(documents):
        if index % 4 == 0:  # in the pretraining corpus
            continue
        for line in document.splitlines():
            words = line.split()
            if 6 <= len(words) <= 60 and not any(s in line.lower() for s in SKIP):
                sentences[author_of(index)].append(" ".join(words))
    rng = random.Random(12345)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "authors")
    os.makedirs(out, exist_ok=True)
    splits = {"train": [], "dev": []}
    for name, lines in sentences.items():
        chosen = rng.sample(sorted(set(lines)), TRAIN + DEV)
        splits["train"] += [(s, name) for s in chosen[:TRAIN]]
        splits["dev"] += [(s, name) for s in chosen[TRAIN:]]
    for split, rows in splits.items():
        rng.shuffle(rows)
        with open(os.path.join(out, f"{split}.tsv"), "w", encoding="utf-8") as f:
            f.write("sentence\tlabel\n")
            f.writelines(f"{s}\t{label}\n" for s, label in rows)
    with open(os.path.join(out, "labels.txt"), "w", encoding="utf-8") as f:
        f.writelines(f"{name}\n" for _, name in AUTHORS)


if __name__ == "__main__":
    main(sys.argv[1])
