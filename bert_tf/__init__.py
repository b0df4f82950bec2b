"""bert_tf: BERT for TensorFlow 2 and Keras 3, faithful to the original release.

Importing bert_tf before TensorFlow turns on TensorFlow's oneDNN CPU
kernels (`TF_ENABLE_ONEDNN_OPTS=1`) unless the environment already says
otherwise. TensorFlow turns them on by itself only on CPUs with AVX-512
VNNI, bfloat16 or AMX instructions; on a 2-core AVX2 AMD EPYC they made
the pretraining step 1.12x (BERT-Mini) and 1.38x (BERT-Small) faster and
the forward pass up to 1.3x (docs/PERFORMANCE.md). The runners import
bert_tf first; a program that imports TensorFlow first keeps TensorFlow's
own choice, and `TF_ENABLE_ONEDNN_OPTS=0` turns the kernels off.
"""

import os

os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")

from bert_tf.config import BertConfig  # noqa: E402

__all__ = ["BertConfig"]
__version__ = "0.1.0"
