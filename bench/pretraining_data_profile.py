"""Where the time of `create_pretraining_data.py` fast mode goes, phase by phase.

    TF_CPP_MIN_LOG_LEVEL=2 CUDA_VISIBLE_DEVICES= .venv/bin/python \
        bench/pretraining_data_profile.py [--input_copies=4]

Runs fast mode in this process as the command line does (TensorFlow imported
through `bert_tf.scripts`, same flags as `pretraining_data_speed.py`), and
prints the main process's phases in order: CPU seconds (all its threads,
which load from other processes changes least) and wall seconds. "waiting
for workers" is what is left of `create_sharded`'s wall time; its CPU is the
pool's threads receiving records. Then the same shards go through the
workers' code (`RecordMaker.records`) once more in this process, to split a
worker's time: masking (shuffle and draws), encoding, the rest of making
instances, and pickling a shard's documents and records between processes.
The interpreter's teardown is not included (cheap since the import's objects
are frozen, see `bert_tf/scripts/__init__.py`).
"""

import argparse
import collections
import contextlib
import pathlib
import pickle
import random
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from shared_data import SHARED_DATA, path_argument  # noqa: E402

CPU, WALL = time.process_time, time.perf_counter
SPENT = collections.defaultdict(lambda: [0.0, 0.0])  # phase -> [CPU s, wall s]


@contextlib.contextmanager
def phase(name):
    cpu, wall = CPU(), WALL()
    yield
    SPENT[name][0] += CPU() - cpu
    SPENT[name][1] += WALL() - wall


def timed(name, function):
    def wrapper(*args, **kwargs):
        with phase(name):
            return function(*args, **kwargs)
    return wrapper


def timed_iterator(name, iterator):
    while True:
        with phase(name):
            item = next(iterator, StopIteration)
        if item is StopIteration:
            return
        yield item


def _report(title, names):
    print(f"\n{title}\n| phase | CPU s | wall s |\n|---|---:|---:|")
    for name in names:
        cpu, wall = SPENT[name]
        # The interpreter's start has no wall time this process can see.
        print(f"| {name} | {cpu:.2f} | {'-' if wall is None else f'{wall:.2f}'} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--input_file", type=path_argument,
                        default=str(SHARED_DATA / "corpus" / "gutenberg_pretrain.txt"))
    parser.add_argument("--vocab_file", type=path_argument,
                        default=str(SHARED_DATA / "vocab" / "bert-base-uncased-vocab.txt"))
    parser.add_argument("--input_copies", type=int, default=1)
    parser.add_argument("--num_workers", type=int, default=2)
    args = parser.parse_args()
    SPENT["interpreter start, argparse"] = [CPU(), None]
    with phase("import TensorFlow (bert_tf.scripts)"):
        import bert_tf.scripts  # noqa: F401
    with phase("import the data modules"):
        from absl import logging
        from bert_tf.data import record_run, sharded_pretraining_data as sharded
        from bert_tf.data.example_encoder import ExampleEncoder
        from bert_tf.data.instance_records import RecordMaker, RunSummary
        from bert_tf.data.masking import MaskedLmMasker
        from bert_tf.data.pretraining_options import PretrainingDataOptions
        from bert_tf.data.tfrecord_writer import RoundRobinRecordWriter
    logging.set_verbosity(logging.ERROR)  # not the warnings about long sentences
    options = PretrainingDataOptions(max_seq_length=128, max_predictions_per_seq=20,
                                     dupe_factor=5, random_seed=12345)
    with tempfile.TemporaryDirectory() as folder:
        inputs = [args.input_file]
        if args.input_copies > 1:
            inputs = [f"{folder}/copy-{i}.txt" for i in range(args.input_copies)]
            for path in inputs:
                pathlib.Path(path).write_bytes(pathlib.Path(args.input_file).read_bytes())
        outputs = [f"{folder}/out-{i}.tfrecord" for i in range(2)]
        shards = []
        tokenize = sharded.tokenize_documents

        def tokenize_shard(documents, *rest):
            name = "tokenize: first shard (traces the tokenizer)" if not shards else \
                "tokenize: the other shards"
            with phase(name):
                shards.append(tokenize(documents, *rest))
            return shards[-1]

        record_run.LineTokenizer = timed("tokenizer build", record_run.LineTokenizer)
        record_run.check_text_file = timed("file checks, vocabulary", record_run.check_text_file)
        record_run.load_vocab = timed("file checks, vocabulary", record_run.load_vocab)
        sharded.tokenize_documents = tokenize_shard
        iter_shards = sharded.iter_shards
        sharded.iter_shards = lambda *a: timed_iterator("read and shard text", iter_shards(*a))
        RoundRobinRecordWriter.write_all = timed("write records", RoundRobinRecordWriter.write_all)
        with phase("create_sharded"):
            sharded.create_sharded(inputs, outputs, args.vocab_file, options, args.num_workers)
    inner = ("file checks, vocabulary", "tokenizer build", "read and shard text",
             "tokenize: first shard (traces the tokenizer)", "tokenize: the other shards",
             "write records")
    SPENT["waiting for workers"] = [SPENT["create_sharded"][i] - sum(SPENT[n][i] for n in inner)
                                    for i in range(2)]
    _report(f"Main process, {args.input_copies} x {pathlib.Path(args.input_file).name}, "
            f"{len(shards)} shards, {args.num_workers} workers",
            ("interpreter start, argparse", "import TensorFlow (bert_tf.scripts)",
             "import the data modules", *inner, "waiting for workers"))

    vocab = record_run.load_vocab(args.vocab_file)
    with phase("build RecordMaker"):
        maker = RecordMaker(vocab, options)
    MaskedLmMasker.mask = timed("masking (shuffle, draws)", MaskedLmMasker.mask)
    ExampleEncoder.encode = timed("encoding records", ExampleEncoder.encode)
    for number, documents in enumerate(shards):
        with phase("pickle and unpickle a shard's documents"):
            documents = pickle.loads(pickle.dumps(documents))
        with phase("all of RecordMaker.records"):
            records = maker.records(documents, random.Random(f"profile/{number}"), RunSummary())
        with phase("pickle a shard's records"):
            pickle.dumps(records)
    SPENT["making instances (the rest)"] = [
        SPENT["all of RecordMaker.records"][i] - SPENT["masking (shuffle, draws)"][i]
        - SPENT["encoding records"][i] for i in range(2)]
    _report(f"Workers' code, all {len(shards)} shards in this process",
            ("build RecordMaker", "pickle and unpickle a shard's documents",
             "making instances (the rest)", "masking (shuffle, draws)", "encoding records",
             "pickle a shard's records"))


if __name__ == "__main__":
    main()
