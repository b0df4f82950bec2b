"""Importing bert_tf before TensorFlow turns oneDNN's CPU kernels on, unless told otherwise."""

import os
import subprocess
import sys

import pytest

# `onednn_enabled` asks TensorFlow; the oneDNN LayerNorm is never chosen without it (on
# AMX CPUs it is with it).
PROBE = ("import bert_tf; from bert_tf.cpu_features import onednn_enabled; "
         "from bert_tf.modeling.token_dense import onednn_layer_norm_is_faster; "
         "print(onednn_enabled(), onednn_layer_norm_is_faster('float32') and 'chosen')")


@pytest.mark.parametrize("setting,expected", [(None, "True"), ("0", "False False")])
def test_onednn_kernels_follow_the_environment(setting, expected):
    environment = {key: value for key, value in os.environ.items()
                   if key != "TF_ENABLE_ONEDNN_OPTS"}
    if setting is not None:
        environment["TF_ENABLE_ONEDNN_OPTS"] = setting
    environment["TF_CPP_MIN_LOG_LEVEL"] = "3"
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                            env=environment, timeout=120, check=True)
    assert result.stdout.strip().startswith(expected), result.stdout
