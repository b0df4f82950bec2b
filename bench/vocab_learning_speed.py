"""WordPiece vocabulary learning: ours against tensorflow-text's learner, same output.

`learn_vocab.py` counts the corpus' words (in the graph), then learns the
vocabulary from the counts. This bench counts once, then times the
learning alone: ours (`bert_tf.data.wordpiece_learner`) and
tensorflow-text's `wordpiece_tokenizer_learner_lib.learn`, whose algorithm
ours follows, round robin on the same counts with the same arguments
(`learn_vocab.py`'s defaults). Speed counts only with the same vocabulary:
the header says whether the two are equal, entry for entry.

    TF_CPP_MIN_LOG_LEVEL=2 .venv/bin/python bench/vocab_learning_speed.py --iterations=3
"""

import os
import pathlib
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from absl import app, flags  # noqa: E402
from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib  # noqa: E402

from bert_tf.data import vocab_learning, wordpiece_learner  # noqa: E402
from round_robin import time_round_robin  # noqa: E402
from timing_table import BenchRun, TimedRow, markdown_table  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_string("input_file", str(REPO / "demo" / "data" / "corpus.txt"),
                    "Text to learn from (default: the demo's 1.2 MB of books).")
flags.DEFINE_integer("vocab_size", 8000, "Most entries of the vocabulary.", lower_bound=1)
flags.DEFINE_integer("min_count", 10, "Lowest threshold the search tries.", lower_bound=1)
flags.DEFINE_integer("iterations", 3, "Timed calls per learner.", lower_bound=1)


def main(argv):
    del argv
    counts = vocab_learning.count_words(FLAGS.input_file)
    reserved = vocab_learning.reserved_tokens()
    runners = {
        "bert_tf wordpiece_learner": lambda: wordpiece_learner.learn(
            counts, FLAGS.vocab_size, reserved, min_count=FLAGS.min_count),
        "tensorflow-text learner": lambda: wordpiece_tokenizer_learner_lib.learn(
            counts, FLAGS.vocab_size, reserved, lower_thresh=FLAGS.min_count),
    }
    with BenchRun() as run:
        times, vocabs = time_round_robin(runners, 0, FLAGS.iterations)
    ours, theirs = vocabs.values()
    print(run.header(
        f"{FLAGS.input_file}: {len(counts)} distinct words; vocab_size {FLAGS.vocab_size}, "
        f"min_count {FLAGS.min_count}; {FLAGS.iterations} timed calls each, round robin",
        f"vocabularies: {len(ours)} and {len(theirs)} entries, "
        f"{'equal' if ours == theirs else 'DIFFERENT'} entry for entry"))
    rows = [TimedRow((name,), samples, len(counts)) for name, samples in times.items()]
    print(markdown_table(("learner",), rows, run.threads, unit="words", time_unit="s"))


if __name__ == "__main__":
    app.run(main)
