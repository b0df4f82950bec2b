"""The TFRecord reader against records written by the original tool.

Expected values come from decoding the golden files with protobuf's
`tf.train.Example`, not with our parser.
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tensorflow as tf

from tests_shared import REPO, shared_path
from bert_tf.data import readers
from bert_tf.data.input_files import expand_input_patterns

SEQ, PRED = 128, 20


def _golden(name):
    return str(shared_path("golden", name))


SAMPLE = "sample_text_seed12345_dupe10.tfrecord"
WWM = "gutenberg30_wwm_seed12345_dupe2.tfrecord"


def _proto_records(path):
    """Every record of a file as a dict of numpy arrays, decoded by protobuf."""
    records = []
    for raw in tf.data.TFRecordDataset(path):
        feats = tf.train.Example.FromString(raw.numpy()).features.feature
        records.append({
            name: np.array(feats[name].float_list.value if name == "masked_lm_weights"
                           else feats[name].int64_list.value)
            for name in readers.FEATURE_NAMES})
    return records


def _rows(batches):
    """Unbatches a list of feature dicts into a list of per-example dicts."""
    rows = []
    for batch in batches:
        n = batch["input_ids"].shape[0]
        rows.extend({k: v[i].numpy() for k, v in batch.items()} for i in range(n))
    return rows


def _key(row):
    return tuple(row["input_ids"]) + tuple(row["masked_lm_positions"])


def _write_shards(records_path, out_dir, num_shards):
    """Copies a golden file's serialized records round-robin into shards."""
    paths = [os.path.join(out_dir, f"shard-{i}.tfrecord") for i in range(num_shards)]
    writers = [tf.io.TFRecordWriter(p) for p in paths]
    for i, raw in enumerate(tf.data.TFRecordDataset(records_path)):
        writers[i % num_shards].write(raw.numpy())
    for w in writers:
        w.close()
    return paths


def test_eval_pass_reads_every_record_in_order():
    path = _golden(SAMPLE)
    expected = _proto_records(path)
    ds = readers.pretraining_dataset(path, SEQ, PRED, batch_size=8,
                                     is_training=False, drop_remainder=False)
    batches = list(ds)
    assert [b["input_ids"].shape[0] for b in batches] == [8] * 14 + [6]
    first = batches[0]
    for name in ("input_ids", "input_mask", "segment_ids", "masked_lm_positions",
                 "masked_lm_ids", "next_sentence_labels"):
        assert first[name].dtype == tf.int32, name
    assert first["masked_lm_weights"].dtype == tf.float32
    assert first["next_sentence_labels"].shape == (8, 1)
    rows = _rows(batches)
    assert len(rows) == len(expected) == 118
    for got, want in zip(rows, expected):
        for name in readers.FEATURE_NAMES:
            np.testing.assert_array_equal(got[name], want[name], err_msg=name)


def test_drop_remainder_gives_static_batch_dimension():
    ds = readers.pretraining_dataset(_golden(SAMPLE), SEQ, PRED, batch_size=8,
                                     is_training=False)
    assert ds.element_spec["input_ids"].shape == (8, SEQ)
    assert sum(1 for _ in ds) == 118 // 8


def test_training_shuffles_and_repeats_over_real_records():
    path = _golden(SAMPLE)
    known = {_key(r) for r in _proto_records(path)}
    ds = readers.pretraining_dataset(path, SEQ, PRED, batch_size=16,
                                     is_training=True, seed=3)
    # The buffer shuffles the repeated stream, so a record may wait there for a while: 320
    # examples (2.7 epochs) missed one in 7 of 30 seeds, 480 and 640 in none.
    rows = _rows(ds.take(40))  # 640 examples: 5.4 epochs
    assert {_key(r) for r in rows} == known
    file_order = [_key(r) for r in _proto_records(path)][:16]
    assert [_key(r) for r in rows[:16]] != file_order


def test_patterns_globs_and_comma_lists(tmp_path):
    paths = _write_shards(_golden(SAMPLE), str(tmp_path), 3)
    pattern = str(tmp_path / "shard-*.tfrecord")
    assert sorted(expand_input_patterns(pattern)) == paths
    assert expand_input_patterns(f"{paths[2]}, {paths[0]}") == [paths[2], paths[0]]
    ds = readers.pretraining_dataset([str(tmp_path / "shard-*")], SEQ, PRED, 1,
                                     is_training=False)
    assert sum(1 for _ in ds) == 118


def test_a_file_named_twice_is_read_twice_with_a_warning(tmp_path, caplog):
    paths = _write_shards(_golden(SAMPLE), str(tmp_path), 2)
    with caplog.at_level("WARNING"):
        files = expand_input_patterns(f"{paths[0]},{tmp_path / 'shard-*'}")
    assert files[0] == paths[0] and sorted(files[1:]) == paths  # as the original reads them
    assert caplog.text.count("is named more than once") == 1
    assert f"input file {paths[0]} is named more than once" in caplog.text


def test_missing_file_is_named(tmp_path):
    missing = str(tmp_path / "nothing-*.tfrecord")
    with pytest.raises(ValueError, match="nothing-"):
        readers.pretraining_dataset(f"{_golden(SAMPLE)},{missing}", SEQ, PRED, 8, True)


def test_text_file_is_refused_by_name():
    with pytest.raises(ValueError, match=r"sample_text.txt: not a TFRecord file"):
        readers.pretraining_dataset(str(shared_path("corpus", "sample_text.txt")),
                                    SEQ, PRED, 8, True)


def test_wrong_lengths_name_the_file():
    with pytest.raises(ValueError, match=r"sample_text.*input_ids.*length 128"):
        readers.pretraining_dataset(_golden(SAMPLE), 512, 80, 8, True)


@pytest.mark.parametrize("num_files", [4, 1])
def test_input_context_gives_disjoint_shards(tmp_path, num_files):
    """Files are split among pipelines; with too few files, records are."""
    paths = _write_shards(_golden(SAMPLE), str(tmp_path), num_files)
    everything = {_key(r) for r in _proto_records(_golden(SAMPLE))}
    shards = []
    for pipeline_id in range(2):
        ctx = tf.distribute.InputContext(num_input_pipelines=2,
                                         input_pipeline_id=pipeline_id,
                                         num_replicas_in_sync=2)
        ds = readers.pretraining_dataset(paths, SEQ, PRED, batch_size=4,
                                         is_training=False, input_context=ctx,
                                         drop_remainder=False)
        batches = list(ds)
        assert batches[0]["input_ids"].shape[0] == 2  # per-replica share of 4
        shards.append([_key(r) for r in _rows(batches)])
    assert len(shards[0]) + len(shards[1]) == 118
    assert set(shards[0]).isdisjoint(shards[1])
    assert set(shards[0]) | set(shards[1]) == everything


def test_training_shards_read_different_files(tmp_path):
    paths = _write_shards(_golden(WWM), str(tmp_path), 2)
    per_file = [{_key(r) for r in _proto_records(p)} for p in paths]
    for pipeline_id in range(2):
        ctx = tf.distribute.InputContext(2, pipeline_id, 2)
        ds = readers.pretraining_dataset(paths, SEQ, PRED, batch_size=32,
                                         is_training=True, input_context=ctx)
        keys = {_key(r) for r in _rows(ds.take(5))}
        assert keys <= per_file[pipeline_id]


MIRRORED_SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tensorflow as tf
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    from bert_tf.data import readers
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    dist = strategy.distribute_datasets_from_function(
        lambda ctx: readers.pretraining_dataset(
            sys.argv[1], 128, 20, batch_size=8, is_training=False,
            input_context=ctx))
    steps = []
    for step, batch in enumerate(dist):
        if step == 3:
            break
        local = strategy.experimental_local_results(batch["input_ids"])
        steps.append([t.numpy()[:, :12].tolist() for t in local])
    print(json.dumps({"replicas": strategy.num_replicas_in_sync, "steps": steps}))
""")


def test_mirrored_strategy_over_two_logical_cpus():
    """Each replica gets half of every global batch, in file order."""
    import json
    # `python -c` imports from its working folder; the caller's PYTHONPATH stays.
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    out = subprocess.run([sys.executable, "-c", MIRRORED_SCRIPT, _golden(SAMPLE)],
                         capture_output=True, text=True, env=env, timeout=300, cwd=REPO)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["replicas"] == 2
    ids = [r["input_ids"][:12].tolist() for r in _proto_records(_golden(SAMPLE))]
    for step, (replica0, replica1) in enumerate(result["steps"]):
        assert replica0 == ids[8 * step:8 * step + 4]
        assert replica1 == ids[8 * step + 4:8 * step + 8]
