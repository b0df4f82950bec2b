"""Importing bert_tf before TensorFlow turns oneDNN's CPU kernels on, unless told otherwise."""

import os
import subprocess
import sys

import pytest

PROBE = ("import bert_tf; from tensorflow.python.util import _pywrap_util_port as port; "
         "print(port.IsMklEnabled())")


@pytest.mark.parametrize("setting,expected", [(None, "True"), ("0", "False")])
def test_onednn_kernels_follow_the_environment(setting, expected):
    environment = {key: value for key, value in os.environ.items()
                   if key != "TF_ENABLE_ONEDNN_OPTS"}
    if setting is not None:
        environment["TF_ENABLE_ONEDNN_OPTS"] = setting
    environment["TF_CPP_MIN_LOG_LEVEL"] = "3"
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                            env=environment, timeout=120, check=True)
    assert result.stdout.split()[-1] == expected
