"""`BiLstmTagger` equals torch's 2-layer bidirectional LSTM + linear layer with the same weights."""

import numpy as np
import tensorflow as tf
import torch

from bert_tf.modeling.bilstm import BiLstmTagger


def _torch_tagger(tagger, width):
    """torch's BiLSTM stack and classifier holding the tagger's weights (gates i, f, g, o)."""
    lstm = torch.nn.LSTM(width, tagger.lstm_units, num_layers=tagger.num_layers,
                         bidirectional=True, batch_first=True)
    with torch.no_grad():
        for layer, bidirectional in enumerate(tagger.lstms):
            for suffix, cell in (("", bidirectional.forward_layer.cell),
                                 ("_reverse", bidirectional.backward_layer.cell)):
                getattr(lstm, f"weight_ih_l{layer}{suffix}").copy_(
                    torch.tensor(cell.kernel.numpy().T))
                getattr(lstm, f"weight_hh_l{layer}{suffix}").copy_(
                    torch.tensor(cell.recurrent_kernel.numpy().T))
                getattr(lstm, f"bias_ih_l{layer}{suffix}").copy_(torch.tensor(cell.bias.numpy()))
                getattr(lstm, f"bias_hh_l{layer}{suffix}").zero_()
    linear = torch.nn.Linear(2 * tagger.lstm_units, tagger.num_labels)
    with torch.no_grad():
        linear.weight.copy_(torch.tensor(tagger.classifier.kernel.numpy().T))
        linear.bias.copy_(torch.tensor(tagger.classifier.bias.numpy()))
    return lstm, linear


def test_matches_torch_on_each_unpadded_sentence():
    rng = np.random.default_rng(0)
    lengths, width = [7, 4, 1], 5
    features = rng.normal(size=(3, 7, width)).astype("float32")
    mask = (np.arange(7)[None, :] < np.array(lengths)[:, None]).astype("int32")
    features[mask == 0] = 100.0  # padding must not leak into real positions
    tagger = BiLstmTagger(num_labels=9, lstm_units=6)
    tagger.build(features.shape)
    for bidirectional in tagger.lstms:  # non-zero biases, so their placement is checked too
        for cell in (bidirectional.forward_layer.cell, bidirectional.backward_layer.cell):
            cell.bias.assign(rng.normal(size=cell.bias.shape).astype("float32"))
    ours = np.asarray(tagger(features, mask))
    assert ours.shape == (3, 7, 9) and ours.dtype == np.float32
    lstm, linear = _torch_tagger(tagger, width)
    for row, length in enumerate(lengths):
        with torch.no_grad():
            hidden, _ = lstm(torch.tensor(features[row:row + 1, :length]))
            theirs = linear(hidden).numpy()[0]
        np.testing.assert_allclose(ours[row, :length], theirs, atol=1e-5, rtol=1e-5)


def test_variables_and_config():
    tagger = BiLstmTagger(num_labels=3, lstm_units=4, num_layers=2)
    tagger.build((None, None, 6))
    # Two layers x two directions x (kernel, recurrent kernel, bias), plus the classifier.
    assert len(tagger.trainable_weights) == 14
    assert tagger.lstms[1].forward_layer.cell.kernel.shape == (8, 16)
    clone = BiLstmTagger.from_config(tagger.get_config())
    assert (clone.num_labels, clone.lstm_units, clone.num_layers) == (3, 4, 2)


def test_training_checkpoints_hold_every_variable(tmp_path):
    """The trainer's object-based checkpoints restore all 14 variables (none dropped)."""
    saved, restored = BiLstmTagger(3, lstm_units=4), BiLstmTagger(3, lstm_units=4)
    for tagger in (saved, restored):
        tagger.build((None, None, 6))
    prefix = tf.train.Checkpoint(model=saved).save(str(tmp_path / "ckpt"))
    tf.train.Checkpoint(model=restored).read(prefix).assert_existing_objects_matched()
    assert len(saved.weights) == 14
    for ours, theirs in zip(saved.weights, restored.weights):
        assert ours.shape == theirs.shape
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
