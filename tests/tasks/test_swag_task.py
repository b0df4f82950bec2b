"""run_swag.py on small files in SWAG's CSV layout, and the multiple-choice model's shape."""

import csv

import keras
import numpy as np
import pytest

from bert_tf.tasks.multiple_choice import build_multiple_choice_model
from bert_tf.tasks.swag_data import read_swag

HEADER = ["video-id", "fold-ind", "startphrase", "sent1", "sent2", "gold-source",
          "ending0", "ending1", "ending2", "ending3", "label"]
SCENES = [
    ("Someone opens the door.", "He", ["walks inside.", "eats the door.", "flies away.",
                                       "sings to a fish."], 0),
    ("The chef cuts an onion.", "She", ["puts it in the pan.", "throws the pan at the sky.",
                                        "reads the onion.", "drives the knife home."], 0),
    ("A boy kicks the ball.", "The ball", ["rolls into the goal.", "starts to talk.",
                                           "melts.", "turns into a bird."], 0),
    ("The dog sees a cat.", "It", ["barks loudly.", "writes a letter.", "becomes a tree.",
                                   "files taxes."], 0),
]


def _write(path, rows, labelled=True):
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(HEADER if labelled else HEADER[:-1])
        for i, (sent1, sent2, endings, label) in enumerate(rows):
            row = [f"v{i}", str(i), f"{sent1} {sent2}", sent1, sent2, "gold", *endings]
            writer.writerow(row + [str(label)] if labelled else row)


def test_reader_pairs_context_with_each_continuation(tmp_path):
    _write(tmp_path / "val.csv", SCENES)
    examples = read_swag(str(tmp_path / "val.csv"))
    assert examples[0].context == "Someone opens the door."
    assert examples[0].endings[1] == "He eats the door."
    assert [e.label for e in examples] == [0, 0, 0, 0]


def test_reader_reads_the_released_files_row_numbers_past(tmp_path):
    """train.csv, val.csv and test.csv as released begin each row with an unnamed number."""
    (tmp_path / "train.csv").write_text(
        ",video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,ending1,ending2,"
        "ending3,label\n"
        "0,lsmdc1052_Harry_Potter_and_the_order_of_phoenix-94857,18313,Students lower their "
        "eyes nervously. She,Students lower their eyes nervously.,She,gold,\"pats her "
        "shoulder, then saunters toward someone.\",turns with two students.,walks slowly "
        "towards someone.,wheels around as her dog thunders out.,2\n", encoding="utf-8")
    (example,) = read_swag(str(tmp_path / "train.csv"))
    assert example.guid == "lsmdc1052_Harry_Potter_and_the_order_of_phoenix-94857-18313"
    assert example.context == "Students lower their eyes nervously."
    assert example.endings[0] == "She pats her shoulder, then saunters toward someone."
    assert example.endings[3] == "She wheels around as her dog thunders out."
    assert example.label == 2
    (tmp_path / "test.csv").write_text(
        ",video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,ending1,ending2,"
        "ending3\n7,v,1,A b.,A b.,It,gold,e0,e1,e2,e3\n", encoding="utf-8")
    (example,) = read_swag(str(tmp_path / "test.csv"))
    assert example.label is None and example.endings[2] == "It e2"


def test_reader_errors_name_file_and_line(tmp_path):
    _write(tmp_path / "val.csv", SCENES)
    with open(tmp_path / "val.csv", "a", encoding="utf-8") as f:
        f.write("x,1,a,b,c,gold,e0,e1,e2,e3,5\n")
    with pytest.raises(ValueError, match=r"val.csv:6: label '5' is not 0-3"):
        read_swag(str(tmp_path / "val.csv"))


def test_reader_drops_a_byte_order_mark(tmp_path):
    _write(tmp_path / "val.csv", SCENES)
    path = tmp_path / "val.csv"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert [e.context for e in read_swag(str(path))] == [s[0] for s in SCENES]


def test_reader_names_the_line_of_bytes_that_are_not_utf8(tmp_path):
    _write(tmp_path / "val.csv", SCENES)
    with open(tmp_path / "val.csv", "ab") as f:
        f.write(b"x,1,a,b,c,gold,caf\xe9,e1,e2,e3,0\n")
    with pytest.raises(ValueError, match=r"val.csv:6: not UTF-8 \(.*byte 0xe9"):
        read_swag(str(tmp_path / "val.csv"))


def test_reader_names_the_line_after_a_field_spanning_lines(tmp_path):
    scenes = [(SCENES[0][0], SCENES[0][1], ["walks\ninside.", *SCENES[0][2][1:]], 0)]
    _write(tmp_path / "val.csv", scenes + [("A b.", "It", ["e0", "e1", "e2", "e3"], 7)])
    with pytest.raises(ValueError, match=r"val.csv:4: label '7' is not 0-3"):
        read_swag(str(tmp_path / "val.csv"))


def test_reader_refuses_an_empty_ending(tmp_path):
    """A choice that is `sent2` alone is a broken row, not a choice (see `read_swag`)."""
    scenes = SCENES[:2] + [(SCENES[2][0], SCENES[2][1], ["rolls.", " ", "melts.", ""], 0)]
    _write(tmp_path / "val.csv", scenes)
    with pytest.raises(ValueError, match=r"val.csv:4: empty ending1, ending3 \(each of the 4 "
                                         r"choices needs its ending\)"):
        read_swag(str(tmp_path / "val.csv"))


def test_each_choice_gets_its_own_sequence_score(tiny_config):
    """Distinct choices: logits[b, c] is the score of example b's choice c alone."""
    model = build_multiple_choice_model(tiny_config, num_choices=4, seq_length=8)
    rng = np.random.default_rng(0)
    ids = rng.integers(1, tiny_config.vocab_size, (3, 4, 8)).astype("int32")
    mask = np.ones_like(ids)
    mask[:, :, 6:] = rng.integers(0, 2, (3, 4, 2))
    segments = np.zeros_like(ids)
    logits = np.asarray(model({"input_ids": ids, "input_mask": mask, "segment_ids": segments}))
    encoder, head = model.get_layer("bert_encoder"), model.get_layer("classifier")
    for b in range(3):
        for c in range(4):
            single = {"input_ids": ids[b, c][None], "input_mask": mask[b, c][None],
                      "segment_ids": segments[b, c][None]}
            score = np.asarray(head(encoder(single)["pooled_output"]))[0, 0]
            np.testing.assert_allclose(logits[b, c], score, rtol=1e-5, atol=1e-6)
    assert np.ptp(logits) > 1e-4  # the choices differ, so a mix-up would show


@pytest.fixture(scope="module")
def swag_run(tmp_path_factory):
    """`(task, output_dir, export_dir, results)` of one run through the runner flow on 8
    scenes: 4 steps of batch 4 with a checkpoint every 2 steps, then evaluate, predict and
    export a SavedModel."""
    from bert_tf.tasks import runner
    from bert_tf.tasks.multiple_choice import SwagTask
    from tasks.task_runs import quick_options, tiny_model_files
    keras.utils.set_random_seed(0)  # whatever ran before (conftest seeds tests, not this)
    root = tmp_path_factory.mktemp("swag")
    # Shuffle endings so the gold index varies.
    rows = [(s1, s2, endings[i:] + endings[:i], (4 - i) % 4)
            for i, (s1, s2, endings, _) in enumerate(SCENES * 2)]
    for name in ("train.csv", "val.csv"):
        _write(root / name, rows)
    _write(root / "test.csv", rows, labelled=False)
    task = SwagTask(str(root), tiny_model_files(num_hidden_layers=1), max_seq_length=24)
    results = runner.run(task, quick_options(root / "out", train_batch_size=4,
                                             eval_batch_size=4, predict_batch_size=4,
                                             do_train=True, do_eval=True, do_predict=True,
                                             num_train_steps=4, save_checkpoints_steps=2,
                                             export_dir=str(root / "served")))
    return task, root / "out", root / "served", results


def test_run_swag_end_to_end(tmp_path, swag_run):
    """In-process through the runner flow: train, evaluate, predict, export."""
    task, out, served, results = swag_run
    assert results["global_step"] == 4
    assert {"eval_accuracy", "eval_loss", "loss"} <= set(results)
    rows = (out / "test_results.tsv").read_text().splitlines()
    assert len(rows) == 8 and all(len(r.split("\t")) == 4 for r in rows)
    assert (out / "bert_model.ckpt.index").exists()

    # The SavedModel answers raw text as the trained model scores its packed inputs.
    import tensorflow as tf
    from bert_tf import serving
    from bert_tf.checkpoints import export_original, restore
    test = task.read_split("test")
    model = task.build_model()
    restore(model, str(out))

    def model_logits():
        return np.concatenate([model(batch, training=False).numpy()
                               for batch in task.dataset(test, 4, False)])

    context = tf.constant([e.context for e in test])
    endings = tf.constant([list(e.endings) for e in test])
    served = tf.saved_model.load(str(served)).signatures["serving_default"]
    np.testing.assert_allclose(served(context=context, endings=endings)["logits"].numpy(),
                               model_logits(), atol=1e-6)
    # Weights moved far from their start, so that a mix-up of endings would show; exported
    # from a release folder, as export_savedmodel.py --kind=multiple_choice does.
    rng = np.random.default_rng(1)
    for variable in model.weights:
        variable.assign(variable + rng.normal(0, 0.05, variable.shape).astype("float32"))
    logits = model_logits()
    assert np.ptp(logits) > 1e-3  # 100 times the tolerance below
    export_original(model, task.model_files.config, task.model_files.vocab_file,
                    str(tmp_path / "moved"))
    serving.export("multiple_choice", str(tmp_path / "moved"), str(tmp_path / "from_folder"),
                   max_seq_length=24)
    from_folder = tf.saved_model.load(str(tmp_path / "from_folder"))
    outputs = from_folder.signatures["serving_default"](context=context, endings=endings)
    np.testing.assert_allclose(outputs["logits"].numpy(), logits, atol=1e-5)
    np.testing.assert_allclose(outputs["probabilities"].numpy(),
                               tf.nn.softmax(logits).numpy(), atol=1e-6)
    assert outputs["choice"].numpy().tolist() == logits.argmax(-1).tolist()
    assert from_folder.signatures["metadata"]()["kind"].numpy() == b"multiple_choice"
    with pytest.raises(tf.errors.InvalidArgumentError, match="give at least one ending per row"):
        from_folder.signatures["serving_default"](context=context, endings=endings[:, :0])
    # Any number of endings: each is scored on its own.
    two = from_folder.signatures["serving_default"](context=context, endings=endings[:, :2])
    np.testing.assert_allclose(two["logits"].numpy(), logits[:, :2], atol=1e-5)


def test_scoring_a_folder_whose_training_stopped_early_says_so(tmp_path, caplog, swag_run):
    """A run killed after its checkpoint of step 2 of 4, then evaluated alone: the model
    of step 2 was scored without a word (only eval_results.txt's global_step told)."""
    import shutil

    from bert_tf.tasks import runner
    from tasks.task_runs import quick_options
    task, trained, _, _ = swag_run
    out = shutil.copytree(trained, tmp_path / "out")
    evaluation = quick_options(out, eval_batch_size=4, do_eval=True)
    with caplog.at_level("WARNING"):
        assert runner.run(task, evaluation)["global_step"] == 4
    assert "unfinished" not in caplog.text
    for path in [*out.glob("ckpt-4.*"), *out.glob("bert_model.ckpt.*"), out / "checkpoint"]:
        path.unlink()
    with caplog.at_level("WARNING"):
        assert runner.run(task, evaluation)["global_step"] == 2
    assert (f"{out / 'ckpt-2'} is of step 2 of the 4 steps its run trains (run.json): its "
            "training stopped early, and this scores that unfinished model; rerun the "
            "training command (with --do_train) to finish it first") in caplog.text


def test_a_training_or_dev_file_without_labels_is_named_before_any_work(tmp_path):
    from bert_tf.tasks.multiple_choice import SwagTask
    from tasks.task_runs import tiny_model_files
    task = SwagTask(str(tmp_path), tiny_model_files(), 32)
    for split, name in (("train", "train.csv"), ("dev", "val.csv"), ("test", "test.csv")):
        _write(tmp_path / name, SCENES, labelled=False)
        if split == "test":
            assert task.read_split(split)[0].label is None
            continue
        with pytest.raises(ValueError, match=rf"{name}:1: the header has no `label` column; "
                                             rf"the {split} split needs labels"):
            task.read_split(split)
