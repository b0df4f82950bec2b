"""Times pretraining steps against HuggingFace (PyTorch) and keras-hub.

One training step = forward, masked-LM loss on the 20 gathered prediction
positions + next-sentence loss, backward, global-norm clipping to 1.0 and an
AdamW update (weight decay 0.01, none on LayerNorm and bias), with dropout on,
batch 32 x sequence 128 of real records written by the original tool
(`../shared/data/golden/sample_text_seed12345_dupe10.tfrecord`). For each
model size:

* `ours`: `Trainer.train_steps` (the loop every runner uses) over
  `BertPretrainer`, without and with XLA (`--jit_compile`);
* `hf`: `transformers.BertForPreTraining` on PyTorch, the masked-LM head applied
  to the same gathered positions and the same losses, `torch.optim.AdamW`;
* `hf_all_positions`: the same model called the usual HuggingFace way
  (`labels=`, `next_sentence_label=`): its head scores every position;
* `keras_hub`: `keras_hub.models.BertBackbone` with keras-hub's
  `MaskedLMHead` on the gathered positions (what `BertMaskedLM` builds) and a
  dense next-sentence head, trained with `Model.train_on_batch` and the same
  recipe on Keras' own AdamW, compiled without and with XLA (Keras' default,
  `jit_compile="auto"`, is no XLA on a machine without a GPU or TPU).

After warm-up (tracing, XLA compilation), timed steps go round robin over the
implementations, so load from other processes spreads over all of them. The
table (`timing_table`) gives the fastest, median and slowest step, sequences
per second from the median, the CPU share (process CPU time / wall time /
threads: well under 100% means other processes took the cores), and the
matmul GFLOP/s of the median step with their share of the float32 matmul
peak (`matmul_peak`). A step's FLOPs are `matmul_flops.pretraining_step`:
3 x (encoder forward + masked-LM head on the 20 positions + pooler and NSP
layer), counted as each implementation computes it: `hf_all_positions`
runs its masked-LM head on all 128 positions, and ours its last encoder
block on the 20 positions and [CLS] only (`our_pretraining_step`).

Example:

    TF_CPP_MIN_LOG_LEVEL=2 .venv/bin/python bench/pretraining_speed.py \
        --sizes=mini,small --iterations=5 --warmup=2
"""

import os
import pathlib
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from absl import app, flags  # noqa: E402
import bert_tf  # noqa: E402,F401  (before TensorFlow: oneDNN on, as for the runners)
import keras  # noqa: E402
import numpy as np  # noqa: E402
import peers  # noqa: E402
with peers.needed():
    import torch
    import transformers

from bert_tf.config import NAMED_SIZES, BertConfig  # noqa: E402
from bert_tf.modeling.pretrainer import BertPretrainer  # noqa: E402
import matmul_flops  # noqa: E402
from peer_models import hf_bert_config, keras_hub_backbone  # noqa: E402
from matmul_peak import define_peak_flags  # noqa: E402
from round_robin import (define_choices_flag, define_threads_flag,  # noqa: E402
                         time_round_robin, use_threads)
from step_runners import (PREDICTIONS, SEQ_LENGTH, keras_adamw,  # noqa: E402
                          hf_pretraining_loss, pretraining_batch,
                          pretraining_step, torch_step)
from timing_table import BenchRun, TimedRow, markdown_table  # noqa: E402

IMPLEMENTATIONS = ("ours", "hf", "hf_all_positions", "keras_hub")

FLAGS = flags.FLAGS
define_choices_flag("sizes", ["mini", "small"], NAMED_SIZES, "Named model sizes to time.")
define_choices_flag("implementations", IMPLEMENTATIONS, IMPLEMENTATIONS, "Which trainers to time.")
peers.check_flag("implementations", {"keras_hub": ("keras_hub",)})
flags.DEFINE_integer("batch_size", 32, "Sequences per step.", lower_bound=1)
flags.DEFINE_integer("iterations", 5, "Timed steps per implementation.", lower_bound=1)
flags.DEFINE_integer("warmup", 2, "Untimed steps first (tracing, XLA).", lower_bound=1)
define_threads_flag()
define_peak_flags()


def our_runners(config, batch):
    """One `Trainer.train_steps` call of one step, without and with XLA."""
    return {("ours", jit): pretraining_step(BertPretrainer(config), batch, jit_compile=jit)
            for jit in (False, True)}


def hf_runners(config, batch):
    """BertForPreTraining's encoder and heads, the MLM head on the gathered positions."""
    model = transformers.BertForPreTraining(hf_bert_config(config))
    return {("hf", False): torch_step(model, hf_pretraining_loss(model, batch), 1e-4)}


def hf_all_positions_runners(config, batch):
    """BertForPreTraining as usually called: labels on the masked positions, -100 elsewhere."""
    model = transformers.BertForPreTraining(hf_bert_config(config))
    labels = np.full(batch["input_ids"].shape, -100, "int64")
    for row in range(len(labels)):
        real = batch["masked_lm_weights"][row] > 0
        labels[row, batch["masked_lm_positions"][row][real]] = batch["masked_lm_ids"][row][real]
    inputs = {"input_ids": torch.from_numpy(batch["input_ids"]).long(),
              "attention_mask": torch.from_numpy(batch["input_mask"]).long(),
              "token_type_ids": torch.from_numpy(batch["segment_ids"]).long(),
              "labels": torch.from_numpy(labels),
              "next_sentence_label": torch.from_numpy(batch["next_sentence_labels"][:, 0]).long()}
    return {("hf_all_positions", False): torch_step(model, lambda: model(**inputs).loss, 1e-4)}


def keras_hub_runners(config, batch):
    """keras-hub's backbone and MaskedLMHead (as in BertMaskedLM) plus an NSP dense layer.

    Compiled without and with XLA: Keras' default `jit_compile="auto"`
    turns XLA off on a machine without a GPU or TPU, so both are asked for.
    """
    x = {"token_ids": batch["input_ids"], "segment_ids": batch["segment_ids"],
         "padding_mask": batch["input_mask"], "mask_positions": batch["masked_lm_positions"]}
    y = {"mlm": batch["masked_lm_ids"], "nsp": batch["next_sentence_labels"]}
    weights = {"mlm": batch["masked_lm_weights"],
               "nsp": np.ones(len(batch["input_ids"]), "float32")}
    runners = {}
    for jit in (False, True):
        model = keras_hub_pretrainer(config)
        # On one device Keras' own clipping is exact.
        model.compile(optimizer=keras_adamw(global_clipnorm=1.0), jit_compile=jit, loss={
            "mlm": keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            "nsp": keras.losses.SparseCategoricalCrossentropy(from_logits=True)})
        assert model.jit_compile == jit
        runners[("keras_hub", jit)] = (
            lambda model=model: model.train_on_batch(x, y, sample_weight=weights))
    return runners


def keras_hub_pretrainer(config):
    """keras-hub's `BertBackbone`, its `MaskedLMHead` on the masked positions, an NSP layer."""
    import keras_hub

    backbone = keras_hub_backbone(config)
    inputs = {**backbone.input,
              "mask_positions": keras.Input((None,), dtype="int32", name="mask_positions")}
    outputs = backbone({k: inputs[k] for k in backbone.input})
    mlm = keras_hub.layers.MaskedLMHead(
        vocabulary_size=config.vocab_size, token_embedding=backbone.token_embedding,
        intermediate_activation="gelu", name="mlm")(outputs["sequence_output"],
                                                    inputs["mask_positions"])
    nsp = keras.layers.Dense(2, name="nsp")(outputs["pooled_output"])
    return keras.Model(inputs, {"mlm": mlm, "nsp": nsp})


BUILDERS = {"ours": our_runners, "hf": hf_runners,
            "hf_all_positions": hf_all_positions_runners, "keras_hub": keras_hub_runners}


def step_flops(config, name, batch_size):
    """Matmul FLOPs of one step as `name` computes it.

    `hf_all_positions` scores every position; ours runs its last block only
    at the predictions and [CLS].
    """
    if name == "ours":
        return matmul_flops.our_pretraining_step(config, batch_size, SEQ_LENGTH, PREDICTIONS)
    predictions = SEQ_LENGTH if name == "hf_all_positions" else PREDICTIONS
    return matmul_flops.pretraining_step(config, batch_size, SEQ_LENGTH, predictions)


def main(argv):
    del argv
    use_threads(FLAGS.threads)
    batch = pretraining_batch(FLAGS.batch_size)
    rows = []
    with BenchRun(FLAGS.threads, ["float32"], FLAGS.peak_sizes) as run:
        for size in FLAGS.sizes:
            print(f"timing {size} ...", file=sys.stderr, flush=True)
            config = BertConfig.named(size)
            runners = {}
            for name in FLAGS.implementations:
                runners.update(BUILDERS[name](config, batch))
            times, _ = time_round_robin(runners, FLAGS.warmup, FLAGS.iterations)
            rows += [TimedRow((size, name, "yes" if jit else "no"), samples, FLAGS.batch_size,
                              step_flops(config, name, FLAGS.batch_size))
                     for (name, jit), samples in times.items()]
    print(run.header(f"pretraining steps: batch {FLAGS.batch_size} x seq {SEQ_LENGTH}, "
                     f"{PREDICTIONS} masked-LM predictions + NSP, AdamW, clip 1.0, dropout on; "
                     f"{FLAGS.warmup} warm-up + {FLAGS.iterations} timed steps each, "
                     "round robin"))
    print(markdown_table(("size", "implementation", "XLA"), rows, FLAGS.threads, run.peaks))


if __name__ == "__main__":
    app.run(main)
