"""Exact mode writes the original tool's records, record for record.

The golden files in ../shared/data/golden were written by the original
release's create_pretraining_data.py (README there gives inputs and flags);
with one worker our tool must make the same random draws and so the same
records in the same order.
"""

import pytest
import tensorflow as tf

from bert_tf.data.pretraining_data import create_exact
from bert_tf.data.pretraining_options import PretrainingDataOptions
from tests_shared import shared_path


def _records(path):
    """Each record as {feature name: list of values}, in file order."""
    records = []
    for raw in tf.data.TFRecordDataset(str(path)):
        example = tf.train.Example.FromString(raw.numpy())
        records.append({name: list(feature.int64_list.value) or list(feature.float_list.value)
                        for name, feature in example.features.feature.items()})
    return records


@pytest.mark.parametrize("text, golden, flags", [
    (("corpus", "sample_text.txt"), "sample_text_seed12345_dupe10.tfrecord", {}),
    (("golden", "gutenberg30.txt"), "gutenberg30_wwm_seed12345_dupe2.tfrecord",
     {"dupe_factor": 2, "do_whole_word_mask": True}),
])
def test_matches_original_tool_record_for_record(text, golden, flags, uncased_vocab_file,
                                                 tmp_path):
    output = tmp_path / "out.tfrecord"
    options = PretrainingDataOptions(do_lower_case=True, max_seq_length=128,
                                     max_predictions_per_seq=20, random_seed=12345,
                                     **{"dupe_factor": 10, **flags})
    summary = create_exact([str(shared_path(*text))], [str(output)], uncased_vocab_file, options)
    ours, theirs = _records(output), _records(shared_path("golden", golden))
    assert summary.num_instances == len(ours) == len(theirs)
    mismatched = [i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b]
    assert not mismatched, f"records {mismatched[:10]} differ, first: {ours[mismatched[0]]}"
