"""Learning proof on real text: BERT-Mini on the Gutenberg corpus, and keras-hub alike.

The corpus (`../shared/data/corpus/gutenberg_pretrain.txt`, 477 public-domain
books' worth of documents) is split by document: every 20th document is held
out. The original-format pretraining records of both parts are made with
this project's create_pretraining_data (max_seq_length 128, 20 predictions,
seed 12345). Then, with the same budget (steps, batch, learning-rate schedule,
AdamW recipe, clipping):

* ours: `BertPretrainer` (masked LM + next sentence, the paper's objective)
  trained by `Trainer`, the loop of run_pretraining.py;
* keras-hub: `keras_hub.models.BertMaskedLM` over a `BertBackbone` of the
  same size (masked LM only: keras-hub has no NSP task), trained with
  `Model.fit` and the masked_lm_weights as sample weights.

Every `--eval_every` steps both are scored on the held-out records: the
weighted masked-LM accuracy (the original's `masked_lm_accuracy`). The
script prints the two curves as a Markdown table.

Example (about 15-20 minutes on 2 cores):

    TF_CPP_MIN_LOG_LEVEL=2 .venv/bin/python bench/pretraining_gutenberg.py
"""

import os
import pathlib
import sys
import tempfile
import time

from shared_data import SHARED_DATA, require

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from absl import app, flags  # noqa: E402
import bert_tf  # noqa: E402,F401  (before TensorFlow: oneDNN on, as for the runners)
import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

from bert_tf.config import NAMED_SIZES, BertConfig  # noqa: E402
from bert_tf.data.pretraining_data import create_exact  # noqa: E402
from bert_tf.data.pretraining_options import PretrainingDataOptions  # noqa: E402
from bert_tf.modeling.pretrainer import BertPretrainer  # noqa: E402
from bert_tf.training.optimization import create_optimizer  # noqa: E402
from bert_tf.tasks.pretraining_inputs import pretraining_dataset_fn  # noqa: E402
from bert_tf.tasks.pretraining_objective import pretraining_objective  # noqa: E402
from bert_tf.training.trainer import Trainer  # noqa: E402
import peers  # noqa: E402
from round_robin import define_choices_flag  # noqa: E402

CORPUS = SHARED_DATA / "corpus" / "gutenberg_pretrain.txt"
VOCAB = SHARED_DATA / "vocab" / "bert-base-uncased-vocab.txt"

FLAGS = flags.FLAGS
flags.DEFINE_enum("size", "mini", list(NAMED_SIZES), "Named model size.")
flags.DEFINE_integer("steps", 240, "Training steps for each implementation.")
flags.DEFINE_integer("eval_every", 40, "Steps between held-out evaluations.")
flags.DEFINE_integer("eval_batches", 20, "Held-out batches per evaluation.")
flags.DEFINE_integer("batch_size", 32, "Sequences per step.")
flags.DEFINE_float("learning_rate", 5e-4, "Peak learning rate; warmup is 10% of the steps.")
flags.DEFINE_integer("dupe_factor", 2, "Maskings of the training text.")
define_choices_flag("implementations", ["ours", "keras_hub"], ["ours", "keras_hub"],
                    "Which to train.")
peers.check_flag("implementations", {"keras_hub": ("keras_hub",)})


def make_records(folder):
    """Splits the corpus by document and writes train / held-out records."""
    text = CORPUS.read_text(encoding="utf-8")
    documents = [d for d in text.split("\n\n") if d.strip()]
    parts = {"train": [d for i, d in enumerate(documents) if i % 20],
             "heldout": [d for i, d in enumerate(documents) if i % 20 == 0]}
    records = {}
    for name, docs in parts.items():
        source = os.path.join(folder, f"{name}.txt")
        with open(source, "w", encoding="utf-8") as f:
            f.write("\n\n".join(docs) + "\n")
        records[name] = os.path.join(folder, f"{name}.tfrecord")
        options = PretrainingDataOptions(max_seq_length=128, max_predictions_per_seq=20,
                                         dupe_factor=FLAGS.dupe_factor if name == "train" else 1)
        create_exact([source], [records[name]], str(VOCAB), options)
    return records


def train_ours(config, records, report):
    strategy = tf.distribute.get_strategy()
    trainer = Trainer(BertPretrainer(config),
                      create_optimizer(FLAGS.learning_rate, FLAGS.steps, FLAGS.steps // 10),
                      pretraining_objective(), strategy, tempfile.mkdtemp(),
                      global_batch_size=FLAGS.batch_size, steps_per_execution=FLAGS.eval_every,
                      save_checkpoints_steps=FLAGS.steps, jit_compile=True)
    train = pretraining_dataset_fn(records["train"], 128, 20, FLAGS.batch_size, True, seed=0)
    heldout = pretraining_dataset_fn(records["heldout"], 128, 20, FLAGS.batch_size, False)
    for step in range(FLAGS.eval_every, FLAGS.steps + 1, FLAGS.eval_every):
        trainer.train(train, step)
        report("ours", step, trainer.evaluate(heldout, FLAGS.eval_batches)["masked_lm_accuracy"])


def _keras_hub_inputs(batch):
    x = {"token_ids": batch["input_ids"], "segment_ids": batch["segment_ids"],
         "padding_mask": batch["input_mask"], "mask_positions": batch["masked_lm_positions"]}
    return x, batch["masked_lm_ids"], batch["masked_lm_weights"]


def train_keras_hub(config, records, report):
    import keras_hub

    backbone = keras_hub.models.BertBackbone(
        vocabulary_size=config.vocab_size, num_layers=config.num_hidden_layers,
        num_heads=config.num_attention_heads, hidden_dim=config.hidden_size,
        intermediate_dim=config.intermediate_size, max_sequence_length=128)
    model = keras_hub.models.BertMaskedLM(backbone, preprocessor=None)
    optimizer = create_optimizer(FLAGS.learning_rate, FLAGS.steps, FLAGS.steps // 10)
    optimizer.global_clipnorm = 1.0  # one device: Keras' own clipping is exact
    model.compile(optimizer=optimizer,
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  weighted_metrics=[keras.metrics.SparseCategoricalAccuracy()])
    train = pretraining_dataset_fn(records["train"], 128, 20, FLAGS.batch_size, True,
                                   seed=0)(None).map(_keras_hub_inputs)
    heldout = pretraining_dataset_fn(records["heldout"], 128, 20, FLAGS.batch_size,
                                     False)(None).take(FLAGS.eval_batches).map(_keras_hub_inputs)
    for step in range(FLAGS.eval_every, FLAGS.steps + 1, FLAGS.eval_every):
        model.fit(train, steps_per_epoch=FLAGS.eval_every, epochs=1, verbose=0)
        metrics = model.evaluate(heldout, verbose=0, return_dict=True)
        report("keras_hub", step, metrics["sparse_categorical_accuracy"])


def main(argv):
    del argv
    require(CORPUS, VOCAB)
    start = time.time()
    config = BertConfig.named(FLAGS.size, max_position_embeddings=128)
    with tempfile.TemporaryDirectory() as folder:
        records = make_records(folder)
        print(f"# records made in {time.time() - start:.0f} s; {FLAGS.size}, batch "
              f"{FLAGS.batch_size}, {FLAGS.steps} steps, lr {FLAGS.learning_rate}", flush=True)
        curves = {}

        def report(name, step, accuracy):
            curves.setdefault(name, {})[step] = (accuracy, time.time() - start)
            print(f"# {name} step {step}: held-out masked_lm_accuracy {accuracy:.4f} "
                  f"({time.time() - start:.0f} s)", flush=True)

        trainers = {"ours": train_ours, "keras_hub": train_keras_hub}
        for name in FLAGS.implementations:
            phase = time.time()
            trainers[name](config, records, report)
            print(f"# {name}: {time.time() - phase:.0f} s", flush=True)
    names = list(curves)
    print("| step | " + " | ".join(f"{n} masked_lm_accuracy" for n in names) + " |")
    print("|---:|" + "---:|" * len(names))
    for step in sorted(curves[names[0]]):
        print(f"| {step} | " + " | ".join(f"{curves[n][step][0]:.4f}" for n in names) + " |")


if __name__ == "__main__":
    app.run(main)
