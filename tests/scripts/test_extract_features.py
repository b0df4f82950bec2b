"""extract_features.py end to end on a real model in the original checkpoint format.

The all-MiniLM-L6-v2 weights are exported as an original release folder
(bert_model.ckpt + bert_config.json + vocab.txt); the script's features are
compared with HuggingFace BertModel's hidden states for the same text.
"""

import json
import os

import numpy as np
import pytest
import torch

from bert_tf.checkpoints import export_original
from tests_shared import run_script

LINES = [
    "The quick brown fox jumps over the lazy dog.",
    "Who was Jim Henson? ||| Jim Henson was a puppeteer.",
    "UNwant\u00e9d,running",
]


@pytest.fixture(scope="module")
def release(minilm_encoder, minilm_dir, tmp_path_factory):
    folder = tmp_path_factory.mktemp("release") / "uncased_L-6_H-384_A-12"
    export_original(minilm_encoder, minilm_encoder.config, str(minilm_dir / "vocab.txt"),
                    str(folder))
    return folder


@pytest.fixture(scope="module")
def input_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("input") / "input.txt"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    return path


def _run(release, input_file, output, *extra):
    return run_script("extract_features.py", f"--input_file={input_file}",
                      f"--output_file={output}",
                      f"--init_checkpoint={release / 'bert_model.ckpt'}",
                      f"--vocab_file={release / 'vocab.txt'}",
                      f"--bert_config_file={release / 'bert_config.json'}",
                      "--max_seq_length=32", "--batch_size=2", *extra)


def _hf_layers(hf_minilm, minilm_dir, line):
    import transformers
    tokenizer = transformers.BertTokenizer(str(minilm_dir / "vocab.txt"))
    pair = line.split(" ||| ")
    encoded = tokenizer(*pair, return_tensors="pt")
    with torch.no_grad():
        states = hf_minilm(**encoded, output_hidden_states=True).hidden_states
    tokens = tokenizer.convert_ids_to_tokens(encoded["input_ids"][0])
    return tokens, states


def test_original_json_layout_and_values(release, input_file, tmp_path, hf_minilm, minilm_dir):
    """The original's command line, its device flags included."""
    output = tmp_path / "new_folder" / "features.jsonl"  # the folder is made
    result = _run(release, input_file, output, "--use_tpu=False", "--master=",
                  "--num_tpu_cores=8", "--use_one_hot_embeddings=False")
    assert result.returncode == 0, result.stderr
    assert "extracting features: 3 examples in" in result.stderr  # the closing progress line
    records = [json.loads(line) for line in output.read_text().splitlines()]
    assert [r["linex_index"] for r in records] == [0, 1, 2]
    for record, line in zip(records, LINES):
        tokens, states = _hf_layers(hf_minilm, minilm_dir, line)
        assert [f["token"] for f in record["features"]] == tokens
        for position, feature in enumerate(record["features"]):
            assert list(feature) == ["token", "layers"]
            assert [layer["index"] for layer in feature["layers"]] == [-1, -2, -3, -4]
            for layer in feature["layers"]:
                expected = states[layer["index"]][0, position].numpy()
                np.testing.assert_allclose(layer["values"], expected, atol=2e-5)
                assert all(v == round(v, 6) for v in layer["values"])
    assert not list(tmp_path.glob("*.tmp-*"))


def test_npz_with_concatenated_layers(release, input_file, tmp_path, hf_minilm, minilm_dir):
    output = tmp_path / "features.npz"
    result = _run(release, input_file, output, "--output_format=npz", "--concat_layers",
                  "--layers=-1,-2,-3,-4")
    assert result.returncode == 0, result.stderr
    archive = np.load(output)
    offsets = archive["offsets"]
    assert archive["features"].shape == (offsets[-1], 4 * 384)
    tokens, states = _hf_layers(hf_minilm, minilm_dir, LINES[1])
    second = archive["features"][offsets[1]:offsets[2]]
    expected = np.concatenate([states[i][0].numpy() for i in (-1, -2, -3, -4)], axis=-1)
    np.testing.assert_allclose(second, expected, atol=2e-5)
    assert list(archive["tokens"][offsets[1]:offsets[2]]) == tokens


def test_bad_layer_index_names_flag(release, input_file, tmp_path):
    result = _run(release, input_file, tmp_path / "new" / "x.jsonl", "--layers=-1,-9")
    assert result.returncode == 2
    assert "--layers=-1,-9: -9 is not a layer of a 6-layer model (use indexes in [-6, 5])" \
        in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "new").exists()  # nor the output's folder


def test_an_npz_name_without_npz_is_refused_before_the_model_loads(release, input_file,
                                                                   tmp_path):
    """Exited 1 after restoring the checkpoint."""
    result = _run(release, input_file, tmp_path / "x.out", "--output_format=npz")
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (f"extract_features: error: --output_file="
                                              f"{tmp_path / 'x.out'}: the npz format needs a "
                                              "name ending in .npz")
    assert "restored" not in result.stderr and os.listdir(tmp_path) == []


def test_a_checkpoint_that_fails_to_load_leaves_no_file(release, input_file, tmp_path):
    result = _run(release, input_file, tmp_path / "x.jsonl",
                  f"--init_checkpoint={release / 'vocab.txt'}")
    assert result.returncode == 1
    assert "vocab.txt: no checkpoint found" in result.stderr.splitlines()[-1]
    assert os.listdir(tmp_path) == []


def test_cased_flag_against_uncased_release_is_refused(release, input_file, tmp_path):
    result = _run(release, input_file, tmp_path / "x.jsonl", "--nodo_lower_case")
    assert result.returncode != 0
    assert "--do_lower_case=False does not match --init_checkpoint" in result.stderr


def test_output_over_an_input_is_refused(release, input_file, tmp_path):
    before = input_file.read_bytes()
    result = _run(release, input_file, input_file)
    assert result.returncode == 2
    assert (f"extract_features: error: output_file {input_file} is the input_file "
            f"{input_file}: refusing to write over a file the run reads") in result.stderr
    assert input_file.read_bytes() == before
    result = _run(release, input_file, release / "vocab.txt")
    assert result.returncode == 2 and "is the vocab_file" in result.stderr
    index = release / "bert_model.ckpt.index"
    before = index.read_bytes()
    result = _run(release, input_file, index)  # the weights it loads
    assert result.returncode == 2 and "is the init_checkpoint" in result.stderr
    assert index.read_bytes() == before


def test_binary_input_is_refused(release, tmp_path):
    records = release / "bert_model.ckpt.data-00000-of-00001"
    result = _run(release, records, tmp_path / "x.jsonl")
    assert result.returncode == 1
    assert f"{records}: not a text file" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "x.jsonl").exists()


def test_a_tpu_is_refused_not_ignored(release, input_file, tmp_path):
    result = _run(release, input_file, tmp_path / "x.jsonl", "--use_tpu=True")
    assert result.returncode == 2
    assert ("extract_features: error: --use_tpu applies only to the runners: extract_features "
            "runs on the CPU or GPU TensorFlow picks, not on a TPU") in result.stderr
    assert not (tmp_path / "x.jsonl").exists()
