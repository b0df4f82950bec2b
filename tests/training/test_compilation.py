"""The default XLA choice: the user's flag, else what was measured faster on this kind of CPU."""

import tensorflow as tf

from bert_tf.training.compilation import use_xla
from tests_shared import write_cpuinfo


def test_inference_is_compiled_up_to_hidden_256_unless_tensorflow_fuses_the_dense_layers(
        tmp_path):
    if tf.config.list_logical_devices("GPU"):
        return  # a GPU compiles every inference pass; this is the CPU's rule
    avx512 = write_cpuinfo(tmp_path, "avx2 avx512f avx512_bf16")
    amx = write_cpuinfo(tmp_path, "avx2 avx512f avx512_bf16 amx_bf16 amx_tile")
    assert use_xla(None, 256, training=False, cpuinfo=avx512)
    # From Small up, oneDNN's matmuls with XLA-fused element-wise work between them win.
    assert not use_xla(None, 512, training=False, cpuinfo=avx512)
    # bfloat16: XLA:CPU's dots leave the bfloat16 instructions unused.
    assert not use_xla(None, 256, training=False, compute_dtype="bfloat16", cpuinfo=avx512)
    # float32 with AMX: TensorFlow's fused dense layers were level or faster.
    assert not use_xla(None, 256, training=False, cpuinfo=amx)
    # Training steps only when asked; the flag wins everywhere.
    assert not use_xla(None, 256, training=True, cpuinfo=avx512)
    assert use_xla(True, 768, training=True, compute_dtype="bfloat16", cpuinfo=amx)
    assert not use_xla(False, 256, training=False, cpuinfo=avx512)


def test_a_gpu_compiles_training_steps_and_inference(monkeypatch, tmp_path):
    # CI has no GPU: only the device listing stands in for one. The rule's
    # measurement (an H200, XLA 1.8x-3.1x faster) is in docs/PERFORMANCE.md.
    gpu = [tf.config.LogicalDevice("/device:GPU:0", "GPU")]
    monkeypatch.setattr(tf.config, "list_logical_devices",
                        lambda kind=None: gpu if kind == "GPU" else [])
    avx512 = write_cpuinfo(tmp_path, "avx2 avx512f avx512_bf16")
    assert use_xla(None, 1024, training=True, compute_dtype="bfloat16", cpuinfo=avx512)
    assert use_xla(None, 768, training=False, cpuinfo=avx512)
    assert not use_xla(False, 1024, training=True, cpuinfo=avx512)
    # A model without a BertEncoder keeps the plain graph.
    assert not use_xla(None, None, training=True, cpuinfo=avx512)
