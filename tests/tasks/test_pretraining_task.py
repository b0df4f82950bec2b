"""Pretraining as a task: its input files are checked before any training."""

import pytest

from bert_tf.data.pretraining_options import PretrainingDataOptions
from bert_tf.errors import UsageError
from bert_tf.tasks import runner
from bert_tf.tasks.pretraining import PretrainingTask
from bert_tf.tasks.run_record import run_record
from bert_tf.tasks.worker_settings import worker_settings
from tasks.task_runs import quick_options, tiny_model_files
from tests_shared import shared_path


def _task(input_file, **kwargs):
    return PretrainingTask(tiny_model_files(), input_file, **kwargs)


def test_truncated_records_are_named_before_training(tmp_path):
    data = shared_path("golden", "sample_text_seed12345_dupe10.tfrecord").read_bytes()
    cut = tmp_path / "cut.tfrecord"
    cut.write_bytes(data[:-100])
    with pytest.raises(ValueError, match=r"cut.tfrecord: TFRecord file cut short: record 118 "):
        _task(str(cut)).read_split("train")


def test_text_given_as_records_is_named(tmp_path):
    with pytest.raises(ValueError, match=r"sample_text.txt: "):
        _task(str(shared_path("corpus", "sample_text.txt"))).read_split("train")


def test_records_of_another_length_are_named():
    records = str(shared_path("golden", "sample_text_seed12345_dupe10.tfrecord"))
    with pytest.raises(ValueError, match=r"has length 128, expected 64 \(seq_length\)"):
        _task(records, max_seq_length=64).read_split("train")


def test_missing_inputs_name_the_flag():
    with pytest.raises(UsageError, match=r"--eval_input_file: .*matches no file"):
        _task("unused", eval_input_file="/nonexistent/*.tfrecord").read_split("dev")


def test_inputs_matched_in_the_output_dir_are_never_written_over(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    golden = shared_path("golden", "sample_text_seed12345_dupe10.tfrecord")
    records = golden.read_bytes()
    (out / "eval_results.txt").write_bytes(records)
    task = _task(str(golden), eval_input_file=str(out / "*.txt"))
    with pytest.raises(UsageError, match=r"output_dir's file .*eval_results.txt is the "
                                         r"eval_input_file .*eval_results.txt: refusing"):
        runner.run(task, quick_options(out, do_train=True, do_eval=True, num_train_steps=1,
                                         max_eval_steps=1))
    assert (out / "eval_results.txt").read_bytes() == records
    assert sorted(path.name for path in out.iterdir()) == ["eval_results.txt"]


def test_the_files_checked_against_the_outputs_are_the_files_read(tmp_path):
    """One listing of each glob: a file that appears later is neither checked nor read."""
    golden = shared_path("golden", "sample_text_seed12345_dupe10.tfrecord")
    (tmp_path / "a.tfrecord").write_bytes(golden.read_bytes())
    task = _task(str(tmp_path / "*.tfrecord"))
    assert task.input_files()["input_file"] == [str(tmp_path / "a.tfrecord")]
    (tmp_path / "b.tfrecord").write_bytes(golden.read_bytes())
    assert task.read_split("train") == [str(tmp_path / "a.tfrecord")]


def test_inputs_without_a_record_or_a_document_are_named(tmp_path):
    """Training repeats its input: with nothing in it, it would wait forever."""
    empty = tmp_path / "empty.tfrecord"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match=r"--input_file: .*empty.tfrecord: no records"):
        _task(str(empty)).read_split("train")
    golden = shared_path("golden", "sample_text_seed12345_dupe10.tfrecord")
    assert len(_task(f"{empty},{golden}").read_split("train")) == 2
    dynamic = PretrainingDataOptions(max_seq_length=128)
    # Blank lines; one-token documents: no pair.
    for name, text in (("blank", "\n  \n\n"), ("short", "a\n\nb\n")):
        (tmp_path / f"{name}.txt").write_text(text)
        with pytest.raises(ValueError, match=rf"--input_file: .*{name}.txt: no sentence pair"):
            _task(str(tmp_path / f"{name}.txt"), dynamic_masking=dynamic).read_split("train")
    corpus = shared_path("corpus", "sample_text.txt")
    blank = tmp_path / "blank.txt"
    assert len(_task(f"{blank},{corpus}", dynamic_masking=dynamic).read_split("train")) == 2


def test_a_resumed_dynamic_masking_run_must_mask_as_it_did(tmp_path):
    """Another --masked_lm_prob (or casing, whole-word masking) trains on other examples;
    run.json recorded only that dynamic masking was on, so such a rerun resumed silently."""
    import json

    from bert_tf.tasks.output_dir_checks import check_run_record
    from bert_tf.tasks.run_record import run_record

    corpus = str(shared_path("corpus", "gutenberg_pretrain.txt"))
    options = quick_options(tmp_path, do_train=True, num_train_steps=4, random_seed=None)

    def task(**masking):
        return _task(corpus, max_seq_length=32, max_predictions_per_seq=5,
                     dynamic_masking=PretrainingDataOptions(
                         max_seq_length=32, max_predictions_per_seq=5, **masking))

    def check(**masking):
        check_run_record(str(tmp_path), run_record(task(**masking), options, 4, [corpus]),
                         options)

    check()
    (tmp_path / "ckpt-2.index").write_bytes(b"")  # a checkpoint to resume from
    check()  # the same: resumes
    with pytest.raises(UsageError, match=r"task\.masking\.masked_lm_prob: 0\.15 in the "
                                         r"recorded run, 0\.3 now"):
        check(masked_lm_prob=0.3)
    # A record written before the masking was recorded says nothing about it.
    record = json.loads((tmp_path / "run.json").read_text())
    del record["task"]["masking"]
    (tmp_path / "run.json").write_text(json.dumps(record))
    check(masked_lm_prob=0.3)


def test_a_run_record_that_names_no_task_is_named_so(tmp_path):
    """It read as "holds a run of task None"."""
    from bert_tf.tasks.output_dir_checks import check_run_record
    from bert_tf.tasks.run_record import run_record

    records = str(shared_path("golden", "sample_text_seed12345_dupe10.tfrecord"))
    (tmp_path / "run.json").write_text('{"task": {}, "options": {}}')
    (tmp_path / "ckpt-2.index").write_bytes(b"")
    with pytest.raises(UsageError, match=r"run\.json: the run record names no task; delete it"):
        options = quick_options(tmp_path, do_train=True, num_train_steps=4, random_seed=None)
        check_run_record(str(tmp_path), run_record(_task(records), options, 4, [records]),
                         options)


def test_a_left_to_right_model_is_marked_for_its_users(tmp_path):
    """The --causal model's folder looked like any BERT's: extract_features, the fine-tuning
    runners and the exports used it with attention both ways without a word, and its
    masked-LM SavedModel answered each [MASK] with a guess of the token after it. Its
    bert_config.json now says so, and every model built from it attends left to right
    (tests/tasks/test_left_to_right.py)."""
    import json

    from bert_tf.tasks.model_files import resolve_model_files

    records = str(shared_path("golden", "sample_text_seed12345_dupe10.tfrecord"))
    output_dir = tmp_path / "ltr"
    task = _task(records, causal=True)
    with pytest.raises(UsageError, match=r"^--export_dir: a left-to-right \(--causal\) model "
                                         r"predicts the next token, not the \[MASK\]s"):
        task.serving_options()
    assert task.objective().metric_names == ("lm_accuracy", "lm_loss")  # nothing is masked
    task.export(task.build_model(), str(output_dir))  # what training ends with
    assert json.loads((output_dir / "bert_config.json").read_text())["causal"] is True
    files = resolve_model_files(init_checkpoint=str(output_dir / "bert_model.ckpt"))
    assert files.config.extra == {"causal": True}


def test_a_left_to_right_run_recorded_before_its_config_said_so_resumes(tmp_path):
    """Runs of --causal from before its bert_config said "causal" must resume: their
    task record says causal already."""
    import json

    from bert_tf.tasks.output_dir_checks import check_run_record
    from bert_tf.tasks.run_record import run_record

    records = str(shared_path("golden", "sample_text_seed12345_dupe10.tfrecord"))
    options = quick_options(tmp_path, do_train=True, num_train_steps=4, random_seed=None)

    def check(causal):
        check_run_record(str(tmp_path), run_record(_task(records, causal=causal), options, 4,
                                                   [records]), options)

    check(causal=True)
    (tmp_path / "ckpt-2.index").write_bytes(b"")  # a checkpoint to resume from
    record = json.loads((tmp_path / "run.json").read_text())
    del record["model"]["bert_config"]["causal"]
    (tmp_path / "run.json").write_text(json.dumps(record))
    check(causal=True)
    with pytest.raises(UsageError, match=r"task\.causal: True in the recorded run, False now"):
        check(causal=False)


def _compared_data(input_file, tmp_path):
    """What the workers of a multi-worker run compare of their input files: the same
    files (or pattern) as training and as evaluation data."""
    task = _task(input_file, eval_input_file=input_file)
    options = quick_options(tmp_path / "out", do_train=True, do_eval=True)
    splits = runner.read_splits(task, options)
    record = run_record(task, options, 10, splits["train"])
    settings = worker_settings(task, record, options, splits)
    return settings["training_data"], settings["evaluation_data"]


@pytest.mark.parametrize("split", ["training", "evaluation"])
def test_workers_compare_input_files_by_what_they_hold_not_their_paths(tmp_path, split):
    """The same records at `/mnt/a` on one host and `/data/b` on another are the same
    data; other records written at the same path (the other golden file) are not. Before,
    a worker given another training corpus than the chief's trained on it without a word."""
    part = ("training", "evaluation").index(split)
    records = shared_path("golden", "sample_text_seed12345_dupe10.tfrecord").read_bytes()
    for host in ("alice", "models"):
        (tmp_path / host).mkdir()
        (tmp_path / host / "data.tfrecord").write_bytes(records)
    first = _compared_data(str(tmp_path / "alice" / "*.tfrecord"), tmp_path)[part]
    assert first is not None
    assert _compared_data(str(tmp_path / "models" / "data.tfrecord"), tmp_path)[part] == first
    other = shared_path("golden", "gutenberg30_wwm_seed12345_dupe2.tfrecord").read_bytes()
    (tmp_path / "alice" / "data.tfrecord").write_bytes(other)
    assert _compared_data(str(tmp_path / "alice" / "*.tfrecord"), tmp_path)[part] != first


def test_a_resume_may_add_input_files_but_not_replace_them(tmp_path):
    """Another corpus at resume trained on without a word: the input files were not
    recorded at all (they may grow)."""
    import json
    import shutil

    from bert_tf.tasks.output_dir_checks import check_run_record
    golden = [shutil.copy(shared_path("golden", name), tmp_path / name) for name in (
        "sample_text_seed12345_dupe10.tfrecord", "gutenberg30_wwm_seed12345_dupe2.tfrecord")]
    out = tmp_path / "out"
    out.mkdir()
    options = quick_options(out, do_train=True, num_train_steps=4, random_seed=None)

    def check(*files):
        files = [str(path) for path in files]
        check_run_record(str(out), run_record(_task(",".join(files)), options, 4, files),
                         options)

    check(golden[0])
    assert len(json.loads((out / "run.json").read_text())["training_data_parts"]) == 1
    (out / "ckpt-2.index").write_bytes(b"")  # a checkpoint to resume from
    check(golden[0])
    check(golden[1], golden[0])  # one more file, in any order
    moved = shutil.copy(golden[0], tmp_path / "elsewhere.tfrecord")
    check(moved)  # the same records at another path
    with pytest.raises(UsageError, match=r"holds a run trained on input files this run does "
                                         r"not read \(1 of its 1, compared by what they hold"):
        check(golden[1])
    shutil.copy(golden[1], golden[0])  # other records written over the recorded path
    with pytest.raises(UsageError, match="input files this run does not read"):
        check(golden[0])


def test_a_resume_with_or_without_float16_loss_scaling_is_refused_before_any_work(tmp_path):
    """It said "the options match run.json", then failed restoring (a TensorFlow dtype
    error): the loss scale is optimizer state. bfloat16 and float32 resume each other."""
    import json

    from bert_tf.tasks.output_dir_checks import check_run_record
    records = str(shared_path("golden", "sample_text_seed12345_dupe10.tfrecord"))

    def check(policy):
        options = quick_options(tmp_path, do_train=True, num_train_steps=4, random_seed=None,
                                mixed_precision=policy)
        check_run_record(str(tmp_path), run_record(_task(records), options, 4, [records]),
                         options)

    check("mixed_float16")
    (tmp_path / "ckpt-2.index").write_bytes(b"")  # a checkpoint to resume from
    with pytest.raises(UsageError, match=r"options\.loss_scaling: True in the recorded run, "
                                         r"False now"):
        check("float32")
    record = json.loads((tmp_path / "run.json").read_text())
    record["options"]["loss_scaling"] = False
    (tmp_path / "run.json").write_text(json.dumps(record))
    check("mixed_bfloat16")
    del record["options"]["loss_scaling"]  # a record of an earlier version says nothing
    (tmp_path / "run.json").write_text(json.dumps(record))
    check("mixed_float16")
