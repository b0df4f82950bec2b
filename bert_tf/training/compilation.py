"""Whether a pass is XLA-compiled: the user's choice, else the one measured faster.

On CPU, TensorFlow runs matmuls with oneDNN kernels; XLA:CPU uses its own
matmuls but fuses the element-wise work around them (GELU, LayerNorm, bias,
dropout) and removes the per-op overhead. Measured on two 2-core machines
(Intel Cascade Lake and AMD EPYC, `bench/encoder_forward.py`,
`bench/pretraining_speed.py`, `bench/finetune_step.py`; docs/PERFORMANCE.md):

* inference: XLA is faster than the plain graph for models up to hidden
  size 512 (Mini, Small, MiniLM; +4% to +40%) and level or slower from
  Base (hidden 768) up, where the matmuls are most of the time and
  oneDNN's are the faster ones. Since the uncompiled graph keeps oneDNN's
  matmuls and fuses only the element-wise work between them with XLA
  (`modeling/xla_elementwise.py`), it beats whole-pass XLA from hidden
  size 384 up (AVX2 machine, batch 32 x 128: MiniLM 914 against 1065 ms,
  Small 879 against 1013, Base 5595 against 6389; AVX-512 AMD machine:
  Small 571-596 against 588-682, Base 3579-3631 against 3886-3899) and is
  level at Mini (290 against 280 ms; 163-168 against 166-172), so XLA
  stays the default up to hidden size 256;
* training steps: XLA was slower at every size measured (Mini, Small,
  MiniLM), partly because Keras' dropout draws from a slow generator under
  XLA. With `modeling.dropout.Dropout` it is level on AMD (within 2% at
  Mini, Small and MiniLM), not worth its compile time in every run, so it
  stays off unless asked for.

Where the encoder's dense layers run as matmuls that TensorFlow fuses with
their bias and activation (`modeling.token_dense.fused_inference_is_faster`:
bfloat16 on any CPU, float32 on CPUs with AMX), inference is not compiled
either. In bfloat16, XLA:CPU's dots do not use the CPU's bfloat16
instructions (AMX, `avx512_bf16`) and oneDNN's do: on the Intel AMX machine
a 2048 x 2048 bfloat16 matmul ran at 293 GFLOP/s with XLA and 1305
without, and the forward pass in `mixed_bfloat16` took 1.6-2.6x as long
with XLA (Mini to Base). In float32 there, the fused pass was level with
XLA at Mini and 1.11x faster at Small.

On a GPU or TPU, training steps and inference are compiled. On an H200
(2026-11-26, `bench/gpu_training_step.py`, BERT-Large, batch 64 x 128)
the compiled pretraining step took 121, 83 and 111 ms in float32 (TF32
matmuls), `mixed_bfloat16` and `mixed_float16`, against 219, 257 and 256
ms uncompiled: 1.8x to 3.1x faster. Under the `tpu` strategy every step is
compiled anyway. `--jit_compile` / `--nojit_compile` override all of this.

The optimizer update after the forward and backward pass (clipping, loss
scaling, AdamW; `gradient_update`) is compiled with a compiled step on a
GPU, and not on a CPU (`update_use_xla`). Uncompiled on a GPU, each of its
ops for each weight is a kernel launch of its own, and under loss scaling
the host waits for the finite flag before it launches the update; XLA
fuses the update and turns that condition into selects. On an H100 with
the update compiled (2026-11-26, same bench), the BERT-Large step took 63,
69 and 109 ms in `mixed_float16`, `mixed_bfloat16` and float32 (TF32),
against HF's 126, 125 and 155 ms; with it uncompiled our step had been
1.09-1.31x HF's speed on an H200. On the CPU, XLA's element-wise Adam took
twice as long as TensorFlow's fused kernel (BERT-Mini's update, 105
against 50 ms).
"""

import tensorflow as tf

from bert_tf.modeling.token_dense import fused_inference_is_faster

XLA_INFERENCE_MAX_HIDDEN_SIZE = 256


def use_xla(requested, hidden_size, training, compute_dtype="float32",
            cpuinfo="/proc/cpuinfo"):
    """Whether to XLA-compile a training (or inference) pass of an encoder of `hidden_size`.

    Args:
        requested: the user's `--jit_compile` (True/False), or None for the default.
        hidden_size: the encoder's width; None when the model has no `BertEncoder`.
        training: a training step (forward + backward), else a forward pass.
        compute_dtype: the model's compute dtype ("float32", "bfloat16", ...).
        cpuinfo: where the CPU's flags are read (`cpu_features.cpu_flags`).

    Example (on a CPU):

    >>> use_xla(None, 768, training=False), use_xla(None, 256, training=True)
    (False, False)
    >>> use_xla(True, 768, training=True), use_xla(None, 256, False, compute_dtype="bfloat16")
    (True, False)
    """
    if requested is not None:
        return bool(requested)
    if hidden_size is None:
        return False
    if tf.config.list_logical_devices("GPU") or tf.config.list_logical_devices("TPU"):
        return True
    if training:
        return False
    return hidden_size <= XLA_INFERENCE_MAX_HIDDEN_SIZE and not fused_inference_is_faster(
        compute_dtype, cpuinfo)


def encoder_hidden_size(model):
    """The hidden size of the `BertEncoder` inside `model` (or `model` itself); None if none.

    >>> from bert_tf.config import BertConfig
    >>> from bert_tf.modeling.classifier import build_classifier
    >>> encoder_hidden_size(build_classifier(BertConfig.named("tiny", vocab_size=10), 2))
    128
    """
    config = getattr(model, "config", None)
    if hasattr(config, "hidden_size"):
        return config.hidden_size
    for layer in getattr(model, "layers", ()):
        hidden_size = encoder_hidden_size(layer)
        if hidden_size is not None:
            return hidden_size
    return None


def update_use_xla(step_compiled):
    """Whether to XLA-compile the optimizer update of a training step.

    Args:
        step_compiled: whether the step's forward and backward pass is compiled.

    On a CPU (the machine this example runs on) the update stays uncompiled:

    >>> update_use_xla(True), update_use_xla(False)
    (False, False)
    """
    return bool(step_compiled) and bool(tf.config.list_logical_devices("GPU"))
