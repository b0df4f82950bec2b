"""Command lines of run_pretraining.py for the tests that run it, in process or as a process."""

import json
import os
import sys

from tests_shared import REPO, shared_path

# A 2-layer, width-32 model over the real uncased vocabulary (the golden records use it).
TINY_CONFIG = {"vocab_size": 30522, "hidden_size": 32, "num_hidden_layers": 2,
               "num_attention_heads": 4, "intermediate_size": 37, "hidden_act": "gelu",
               "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
               "max_position_embeddings": 128, "type_vocab_size": 2, "initializer_range": 0.02}
# The same, one layer deep, for runs whose assertions do not depend on depth (nothing
# compares their weights layer by layer): a second layer costs a run about a second of
# tracing.
ONE_LAYER_CONFIG = dict(TINY_CONFIG, num_hidden_layers=1)


def golden_records():
    return str(shared_path("golden", "sample_text_seed12345_dupe10.tfrecord"))


def pretraining_flags(folder, output_dir, *flags, config=TINY_CONFIG):
    """run_pretraining.py's flags for the golden records and `config` written in `folder`."""
    config_file = os.path.join(folder, "bert_config.json")
    with open(config_file, "w", encoding="utf-8") as f:
        json.dump(config, f)
    return [f"--bert_config_file={config_file}", f"--input_file={golden_records()}",
            f"--output_dir={output_dir}", "--max_seq_length=128",
            "--max_predictions_per_seq=20", "--learning_rate=1e-3", *flags]


def pretraining_command(folder, output_dir, *flags, config=TINY_CONFIG):
    """`python run_pretraining.py` with `pretraining_flags`, for a process of its own."""
    return [sys.executable, str(REPO / "run_pretraining.py"),
            *pretraining_flags(folder, output_dir, *flags, config=config)]


def environment(**extra):
    return dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", **extra)
