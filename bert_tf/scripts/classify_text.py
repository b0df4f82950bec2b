"""Classifies text with a model that run_classifier.py fine-tuned and exported.

    python classify_text.py --model_dir=/tmp/mrpc_output \
      --text="The cat sat on the mat." --text_b="A cat was sitting on a mat."

`--model_dir` is a `run_classifier.py` output folder (bert_model.ckpt,
bert_config.json, vocab.txt, labels.txt). Prints the predicted label and
the probability of each label.
"""

import os

from absl import flags

from bert_tf.checkpoints import resolve_config, restore
from bert_tf.errors import UsageError
from bert_tf.scripts import cli
from bert_tf.tasks import classification
from bert_tf.tasks.prediction import probabilities
from bert_tf.tokenization import BertPreprocessor

FLAGS = flags.FLAGS
flags.DEFINE_string("model_dir", None, "Folder written by run_classifier.py --do_train.")
flags.DEFINE_multi_string("text", None, "Text to classify (repeat for several).")
flags.DEFINE_multi_string("text_b", None, "Second text of each pair, for pair tasks.")
flags.DEFINE_integer("max_seq_length", 128, "Sequence length after WordPiece.")
flags.DEFINE_bool("do_lower_case", True, "Lower-case the input (uncased models).")


def classify(model_dir, texts, texts_b=None, max_seq_length=128, do_lower_case=True):
    """Returns `(labels, probabilities [N, num_labels])` for the texts (or pairs)."""
    labels_file = os.path.join(model_dir, "labels.txt")
    if not os.path.exists(labels_file):
        raise FileNotFoundError(f"{labels_file}: not found; is --model_dir a "
                                "run_classifier.py output folder?")
    with open(labels_file, encoding="utf-8") as f:
        labels = [line.strip() for line in f if line.strip()]
    model = classification.build_classifier(resolve_config(init_checkpoint=model_dir),
                                            len(labels))
    restore(model, model_dir)
    preprocessor = BertPreprocessor(os.path.join(model_dir, "vocab.txt"),
                                    seq_length=max_seq_length, do_lower_case=do_lower_case)
    inputs = preprocessor((list(texts), list(texts_b)) if texts_b else list(texts))
    logits = model(inputs, training=False).numpy()
    return labels, probabilities(logits)


def run():
    """Prints the predicted label and every label's probability for each text."""
    if FLAGS.text_b and len(FLAGS.text_b) != len(FLAGS.text):
        raise UsageError("give one --text_b for each --text")
    labels, probabilities = classify(FLAGS.model_dir, FLAGS.text, FLAGS.text_b,
                                     FLAGS.max_seq_length, FLAGS.do_lower_case)
    for text, row in zip(FLAGS.text, probabilities):
        ranked = sorted(zip(labels, row), key=lambda pair: -pair[1])
        print(f"{ranked[0][0]}\t{text}")
        print("    " + "  ".join(f"{label}={p:.3f}" for label, p in ranked))


def console_main():
    cli.run_main(run, "classify_text", required=["model_dir", "text"])


if __name__ == "__main__":
    console_main()
