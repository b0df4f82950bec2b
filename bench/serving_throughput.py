"""Served text in, answers out: our SavedModels next to HuggingFace on PyTorch, on CPU.

Exports all-MiniLM-L6-v2 (real weights, HF safetensors) as our `encoder`
SavedModel and, with a random 2-label head, as our `classifier` SavedModel,
each plainly and with `jit_compile=True` (XLA inside the export, lengths
rounded up to multiples of 16; the warm-up calls compile),
loads them with `tf.saved_model.load` and times their signatures on raw
SST-2 dev sentences: batch 1 (latency) and batch 32. HuggingFace's
`BertModel` / `BertForSequenceClassification` (same weights, the same head
copied in) get the same sentences through the fast tokenizer, tokenization
included, under `torch.no_grad()`, padded to `--max_seq_length` and padded
to the batch's longest sentence (what HF users usually do, and what our
exports do). Calls go round robin
(`round_robin.py`); the table gives sentences/s from the median call, the
median ms per call and the CPU share the process got. After the table, the
largest difference between our served outputs and HF's.

    TF_CPP_MIN_LOG_LEVEL=2 .venv/bin/python bench/serving_throughput.py \
        --iterations=10 --warmup=2
"""

import os
import pathlib
import sys
import tempfile

from shared_data import SHARED_DATA, define_path_flag

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from absl import app, flags  # noqa: E402
import bert_tf  # noqa: E402,F401  (before TensorFlow: oneDNN on, as for the runners)
import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import peers  # noqa: E402
with peers.needed():
    import torch
    import transformers

from bert_tf import serving  # noqa: E402
from bert_tf.checkpoints import config_beside, restore  # noqa: E402
from bert_tf.modeling import BertEncoder, ClassificationHead  # noqa: E402
from round_robin import define_threads_flag, time_round_robin, use_threads  # noqa: E402
from timing_table import load_average, summarize  # noqa: E402

FLAGS = flags.FLAGS
define_path_flag("model_dir", SHARED_DATA / "models" / "all-MiniLM-L6-v2",
                 "HuggingFace BERT folder (safetensors, config.json, vocab.txt).")
define_path_flag("sentences", SHARED_DATA / "glue" / "SST-2" / "dev.tsv",
                 "TSV with a header whose first column is the text.")
flags.DEFINE_integer("max_seq_length", 128, "Length the exports pack texts to.")
flags.DEFINE_list("batch_sizes", ["1", "32"], "Sentences per call.")
flags.register_validator("batch_sizes", lambda sizes: all(s.isdigit() and int(s) for s in sizes),
                         "--batch_sizes: each must be a positive whole number")
flags.DEFINE_integer("iterations", 10, "Timed calls per runner and batch size.", lower_bound=1)
flags.DEFINE_integer("warmup", 2, "Untimed calls first.", lower_bound=0)
define_threads_flag()
LABELS = ["negative", "positive"]


def _sentences(count):
    lines = pathlib.Path(FLAGS.sentences).read_text(encoding="utf-8").splitlines()[1:]
    return [line.split("\t")[0] for line in lines[:count]]


def _our_exports(folder):
    """The encoder from the HF folder, and encoder + random head as a classifier.

    Returns ({(kind, compiled): loaded SavedModel}, the head).
    """
    vocab = os.path.join(FLAGS.model_dir, "vocab.txt")
    encoder = BertEncoder(config_beside(FLAGS.model_dir))
    restore(encoder, FLAGS.model_dir)
    head = ClassificationHead(len(LABELS), name="classifier")
    classifier = keras.Model(encoder.input, head(encoder(encoder.input)["pooled_output"]))
    loaded = {}
    for compiled in (False, True):
        for kind, model, labels in (("encoder", encoder, None),
                                    ("classifier", classifier, LABELS)):
            path = serving.export(kind, model, os.path.join(folder, f"{kind}-{compiled}"),
                                  vocab_file=vocab, labels=labels,
                                  max_seq_length=FLAGS.max_seq_length, jit_compile=compiled)
            loaded[kind, compiled] = tf.saved_model.load(path)
    return loaded, head


def _hf_models(head):
    encoder = transformers.BertModel.from_pretrained(FLAGS.model_dir).eval()
    classifier = transformers.BertForSequenceClassification.from_pretrained(
        FLAGS.model_dir, num_labels=len(LABELS)).eval()
    with torch.no_grad():
        classifier.classifier.weight.copy_(torch.from_numpy(head.dense.kernel.numpy().T))
        classifier.classifier.bias.copy_(torch.from_numpy(head.dense.bias.numpy()))
    tokenizer = transformers.BertTokenizerFast.from_pretrained(FLAGS.model_dir)
    return encoder, classifier, tokenizer


def _hf_runner(model, tokenizer, texts, padding, output):
    def run():
        with torch.no_grad():
            inputs = tokenizer(texts, padding=padding, truncation=True,
                               max_length=FLAGS.max_seq_length, return_tensors="pt")
            outputs = model(**inputs)
            return (outputs.pooler_output if output == "pooled"
                    else torch.softmax(outputs.logits, -1)).numpy()
    return run


def main(argv):
    del argv
    use_threads(FLAGS.threads)
    with tempfile.TemporaryDirectory() as folder:
        ours, head = _our_exports(folder)
    hf_encoder, hf_classifier, tokenizer = _hf_models(head)
    print(f"load average before: {load_average()}; threads: {FLAGS.threads}")
    print("| model | runner | batch | sentences/s | ms/call (median, min-max) | CPU share |")
    print("|---|---|---|---|---|---|")
    differences = []
    for batch in map(int, FLAGS.batch_sizes):
        texts = _sentences(batch)
        text = tf.constant(texts)
        for kind, hf_model, output in (("encoder", hf_encoder, "pooled"),
                                       ("classifier", hf_classifier, "probabilities")):
            key = "pooled_output" if output == "pooled" else "probabilities"
            plain = ours[kind, False].signatures["serving_default"]
            compiled = ours[kind, True].signatures["serving_default"]
            runners = {
                "bert_tf SavedModel": lambda s=plain, k=key: s(text=text)[k].numpy(),
                "bert_tf SavedModel, XLA": lambda s=compiled, k=key: s(text=text)[k].numpy(),
                f"HF pad to {FLAGS.max_seq_length}": _hf_runner(hf_model, tokenizer, texts,
                                                                "max_length", output),
                "HF pad to longest": _hf_runner(hf_model, tokenizer, texts, "longest", output),
            }
            times, outputs = time_round_robin(runners, FLAGS.warmup, FLAGS.iterations)
            for name, samples in times.items():
                summary = summarize(samples, FLAGS.threads)
                print(f"| {kind} | {name} | {batch} | {batch / summary.median:.1f} | "
                      f"{1000 * summary.median:.1f} ({1000 * summary.fastest:.1f}-"
                      f"{1000 * summary.slowest:.1f}) | {100 * summary.cpu_share:.0f}% |")
            reference = outputs["bert_tf SavedModel"]
            differences += [(kind, batch, name, float(np.abs(reference - value).max()))
                            for name, value in outputs.items() if name != "bert_tf SavedModel"]
    print(f"load average after: {load_average()}")
    for kind, batch, name, difference in differences:
        print(f"max |bert_tf SavedModel - {name}| {kind} batch {batch}: {difference:.2e}")


if __name__ == "__main__":
    app.run(main)
