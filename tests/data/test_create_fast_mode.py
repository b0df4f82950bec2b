"""Fast mode (`create_sharded`): deterministic, bounded, same distribution as exact mode.

Exact mode is held to the original tool by test_create_golden.py, so fast
mode's output statistics on the real corpus are compared with exact mode's.
"""

import concurrent.futures
import random
import threading

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.data.documents import read_documents, tokenize_documents
from bert_tf.data.instance_records import RecordMaker, RunSummary
from bert_tf.data.line_tokenizer import LineTokenizer
from bert_tf.data.pretraining_data import create_exact
from bert_tf.data.pretraining_options import PretrainingDataOptions
from bert_tf.data.sharded_pretraining_data import create_sharded, iter_shards, ordered_map
from bert_tf.data.worker_pool import worker_pool
from bert_tf.tokenization.vocab import load_vocab
from tests_shared import shared_path

OPTIONS = PretrainingDataOptions(dupe_factor=2)
SHARD_BYTES = 1_000_000


def _split_corpus(tmp_path, count):
    """The first 30 documents of the real corpus, cut into `count` files."""
    documents = shared_path("golden", "gutenberg30.txt").read_text("utf-8").split("\n\n")
    paths = []
    for i in range(count):
        path = tmp_path / f"part{i}.txt"
        path.write_text("\n\n".join(documents[i::count]), encoding="utf-8")
        paths.append(str(path))
    return paths


def _in_process_records(paths, vocab_file, shard_bytes, seed=12345):
    tokenize, maker = LineTokenizer(vocab_file), RecordMaker(load_vocab(vocab_file), OPTIONS)
    return [maker.records(tokenize_documents(shard.documents, tokenize, OPTIONS.max_num_tokens),
                          random.Random(shard.seed(seed)), RunSummary())
            for shard in iter_shards(paths, shard_bytes)]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The real corpus with its books cut into documents of 20 sentences.

    Each document draws its target length once, so a corpus of 476 books
    makes noisy statistics; 2241 documents average the noise down.
    """
    books = shared_path("corpus", "gutenberg_pretrain.txt").read_text("utf-8").split("\n\n")
    documents = []
    for book in books:
        lines = [line for line in book.split("\n") if line.strip()]
        documents += ["\n".join(lines[i:i + 20]) for i in range(0, len(lines), 20)]
    path = tmp_path_factory.mktemp("corpus") / "gutenberg_20.txt"
    path.write_text("\n\n".join(documents), encoding="utf-8")
    return [str(path)]


def test_output_is_the_shards_in_order_whatever_the_workers(tmp_path, uncased_vocab_file):
    """2 workers, 2 files in 6 shards, 3 outputs: each shard's records, dealt round-robin."""
    paths = _split_corpus(tmp_path, 2)
    shard_bytes = 60_000
    shards = _in_process_records(paths, uncased_vocab_file, shard_bytes)
    assert len(shards) == 6
    outputs = [str(tmp_path / f"out{i}.tfrecord") for i in range(3)]
    summary = create_sharded(paths, outputs, uncased_vocab_file, OPTIONS, num_workers=2,
                             shard_bytes=shard_bytes)
    expected = [record for shard in shards for record in shard]
    written = [[r.numpy() for r in tf.data.TFRecordDataset(p)] for p in outputs]
    assert summary.num_instances == len(expected)
    assert [written[i % 3][i // 3] for i in range(len(expected))] == expected


def _text_size(documents):
    return sum(len(line) for document in documents for line in document.sentences)


def test_shards_deal_whole_documents_of_one_file(tmp_path):
    paths = _split_corpus(tmp_path, 2)
    for path in paths:
        documents = list(read_documents([path]))
        # A file within one block: ceil(size / shard_bytes) shards, dealt round-robin.
        shards = list(iter_shards([path], 40_000))
        count = -(-_text_size(documents) // 40_000)
        assert [s.index for s in shards] == list(range(count))
        assert [s.documents for s in shards] == [documents[i::count] for i in range(count)]
        # Several blocks: every document once, no shard empty.
        shards = list(iter_shards([path], 2_000))
        assert sorted(d for s in shards for d in s.documents) == sorted(documents)
        assert [s.index for s in shards] == list(range(len(shards)))
        assert {s.path for s in shards} == {path} and all(s.documents for s in shards)
    assert [s.path for s in iter_shards(paths, 40_000)] == sorted(
        s.path for s in iter_shards(paths, 40_000))


def test_a_file_gives_the_same_records_alone_or_in_a_list(tmp_path, uncased_vocab_file):
    paths = _split_corpus(tmp_path, 2)
    together = _in_process_records(paths, uncased_vocab_file, 150_000)
    alone = _in_process_records(paths[1:], uncased_vocab_file, 150_000)
    assert together[-len(alone):] == alone
    assert _in_process_records(paths[1:], uncased_vocab_file, 150_000, seed=1) != alone


def test_workers_start_without_tensorflow(uncased_vocab_file):
    """Each worker imported TensorFlow (3 s here), most of the run on a small corpus."""
    with worker_pool(1, load_vocab(uncased_vocab_file), OPTIONS) as pool:
        imported = pool.submit(eval, "sorted({'tensorflow', 'numpy'} & "
                                     "set(__import__('sys').modules))").result()
    assert imported == []


def test_ordered_map_reads_ahead_at_most_the_window():
    pulled = []
    lock = threading.Lock()

    def items():
        for i in range(20):
            with lock:
                pulled.append(i)
            yield (i,)

    with concurrent.futures.ThreadPoolExecutor(2) as executor:
        results = ordered_map(executor, lambda x: x * x, items(), window=4)
        for taken, value in enumerate(results):
            assert value == taken * taken
            assert len(pulled) <= taken + 4


def _statistics(paths, vocab):
    spec = {"input_mask": tf.io.FixedLenFeature([128], tf.int64),
            "input_ids": tf.io.FixedLenFeature([128], tf.int64),
            "masked_lm_positions": tf.io.FixedLenFeature([20], tf.int64),
            "masked_lm_weights": tf.io.FixedLenFeature([20], tf.float32),
            "next_sentence_labels": tf.io.FixedLenFeature([1], tf.int64)}
    parts = [tf.io.parse_example(b, spec) for b in tf.data.TFRecordDataset(paths).batch(4096)]
    r = {k: np.concatenate([p[k].numpy() for p in parts]) for k in spec}
    lengths = r["input_mask"].sum(axis=1)
    rows, slots = np.nonzero(r["masked_lm_weights"])
    fed = r["input_ids"][rows, r["masked_lm_positions"][rows, slots]]
    return {"instances": len(lengths), "random_next": r["next_sentence_labels"].mean(),
            "short": np.mean(lengths < 128), "mean_length": lengths.mean(),
            "masked_share": np.mean(fed == vocab["[MASK]"]),
            "predictions_per_token": rows.size / lengths.sum()}


def test_same_distribution_as_exact_mode(corpus, uncased_vocab_file, tmp_path):
    """Fast mode with 2 workers on the real corpus, in shards of 1 MB, written to 3 files.

    Tolerances: 2.5 standard deviations of the difference between two
    exact-mode runs with different seeds (measured over 12 seeds).
    """
    vocab = load_vocab(uncased_vocab_file)
    exact = str(tmp_path / "exact.tfrecord")
    create_exact(corpus, [exact], uncased_vocab_file, OPTIONS)
    outputs = [str(tmp_path / f"fast{i}.tfrecord") for i in range(3)]
    create_sharded(corpus, outputs, uncased_vocab_file, OPTIONS, num_workers=2,
                   shard_bytes=SHARD_BYTES)
    fast = _statistics(outputs, vocab)
    original = _statistics([exact], vocab)
    assert abs(fast["instances"] / original["instances"] - 1) < 0.022
    assert abs(fast["random_next"] - original["random_next"]) < 0.014
    assert abs(fast["short"] - original["short"]) < 0.022
    assert abs(fast["mean_length"] / original["mean_length"] - 1) < 0.015
    assert abs(fast["masked_share"] - original["masked_share"]) < 0.01
    assert abs(fast["predictions_per_token"] / original["predictions_per_token"] - 1) < 0.01
