"""Checkpoint formats: the original TF1 release's and HuggingFace safetensors."""

from bert_tf.checkpoints.folders import CHECKPOINT_BASENAME
from bert_tf.checkpoints.huggingface import load_hf_safetensors
from bert_tf.checkpoints.load_rules import CheckpointError, LoadReport
from bert_tf.checkpoints.name_map import (FINE_TUNING_BILSTM_KERNEL, POOLER_NAMES, WeightRef,
                                          fine_tuned_bilstm_units, tf1_variable_map)
from bert_tf.checkpoints.restore import (checkpoint_folder, config_beside, config_changes,
                                         is_huggingface, resolve_config, restore,
                                         weights_identity)
from bert_tf.checkpoints.tf1 import (
    READ_ERRORS,
    export_original,
    load_tf1_checkpoint,
    save_tf1_checkpoint,
)

__all__ = [
    "CHECKPOINT_BASENAME", "FINE_TUNING_BILSTM_KERNEL", "POOLER_NAMES", "READ_ERRORS",
    "CheckpointError", "LoadReport", "WeightRef", "checkpoint_folder", "config_beside",
    "config_changes", "export_original", "fine_tuned_bilstm_units", "is_huggingface",
    "load_hf_safetensors", "load_tf1_checkpoint", "resolve_config", "restore",
    "save_tf1_checkpoint", "tf1_variable_map", "weights_identity",
]
