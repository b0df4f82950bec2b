"""bench/step_runners.py's HuggingFace pretraining loss is the loss our trainer minimises.

The pretraining benches (`pretraining_speed.py`, `gpu_pretraining_step.py`)
time `transformers.BertForPreTraining` on a loss written for them,
`hf_pretraining_loss`: the masked-LM head on the gathered positions, a
weighted mean over the real predictions, plus next sentence. Unless it is
our `pretraining_objective`'s loss, the benches time different work. So
HF's weights, every one of them perturbed, go into our `BertPretrainer`
through safetensors, and both losses on real records must agree.
"""

import numpy as np
import torch
import transformers

from bert_tf.checkpoints.huggingface import load_hf_safetensors
from bert_tf.config import BertConfig
from bert_tf.modeling.pretrainer import BertPretrainer
from bert_tf.tasks.pretraining_objective import pretraining_objective
from bert_tf.training.objective import batch_loss
from bert_tf.training.steps import model_inputs
from peer_models import hf_bert_config
from step_runners import hf_pretraining_loss, pretraining_batch
from tests_shared import shared_path


def test_hf_pretraining_loss_is_ours_on_the_same_weights(tmp_path):
    config = BertConfig.named("tiny")
    torch.manual_seed(0)
    hf = transformers.BertForPreTraining(hf_bert_config(config)).eval()
    with torch.no_grad():
        for parameter in hf.parameters():  # biases and LayerNorms too, so a lost one shows
            parameter.add_(0.05 * torch.randn_like(parameter))
    hf.save_pretrained(tmp_path, safe_serialization=True)
    batch = pretraining_batch(8, shared_path("golden", "sample_text_seed12345_dupe10.tfrecord"))
    assert 0 < batch["masked_lm_weights"].sum() < batch["masked_lm_weights"].size  # padding too

    ours = BertPretrainer(config)
    ours(model_inputs(ours, batch))
    load_hf_safetensors(ours, tmp_path)
    our_loss, _ = batch_loss(pretraining_objective(), ours(model_inputs(ours, batch)), batch)
    with torch.no_grad():
        their_loss = hf_pretraining_loss(hf, batch)()

    assert float(their_loss) > 1.0  # far from a trivial loss
    np.testing.assert_allclose(float(their_loss), float(our_loss), rtol=1e-5)
