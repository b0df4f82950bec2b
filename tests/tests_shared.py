"""Helpers shared by tests: the shared data folder, tiny random encoder inputs, CPU flags files, bench scripts."""

import os
import pathlib

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
SHARED_DATA = pathlib.Path(os.environ.get("BERT_TF_SHARED_DATA", REPO.parent / "shared" / "data"))
# The absl flags that the bench script loaded last by `load_bench` defined.
_LAST_BENCH_FLAGS = set()


def shared_path(*parts):
    """Path of a file under ../shared/data; fails loudly (never skips) if absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.fail(f"missing shared test data {path} (set BERT_TF_SHARED_DATA)")
    return path


def corpus_head(folder, lines=1000):
    """Writes the first `lines` lines of the shared Gutenberg corpus to `folder`/corpus.txt.

    Returns the file's path (a `pathlib.Path`).
    """
    head = shared_path("corpus", "gutenberg_pretrain.txt").read_text().splitlines()[:lines]
    path = pathlib.Path(folder) / "corpus.txt"
    path.write_text("\n".join(head) + "\n")
    return path


def random_inputs(config, batch=3, length=9, seed=0, pad_from=None):
    """Random `input_ids`/`input_mask`/`segment_ids` with padding in all rows but the first.

    Row i has `length - i` real tokens (unless `pad_from` fixes the padding start).
    """
    rng = np.random.default_rng(seed)
    ids = rng.integers(1, config.vocab_size, size=(batch, length)).astype("int32")
    mask = np.ones((batch, length), "int32")
    for row in range(batch):
        real = pad_from if pad_from is not None else length - row
        mask[row, real:] = 0
    ids = ids * mask
    segments = np.zeros((batch, length), "int32")
    segments[:, length // 2:] = 1
    return {"input_ids": ids, "input_mask": mask, "segment_ids": segments * mask}


def weights_by_name(model):
    """`{original checkpoint name: numpy copy}` of every variable of `model`."""
    from bert_tf.checkpoints import tf1_variable_map
    return {name: np.array(ref.variable.numpy()) for name, ref in tf1_variable_map(model).items()}


def run_script(script, *args, timeout=600, env=None):
    """Runs a root script (`extract_features.py`, ...) in a fresh Python; returns the result.

    Scripts define absl flags at import, so each runs in its own process, as
    a user runs it.
    """
    import subprocess
    import sys
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", **(env or {}))
    return subprocess.run([sys.executable, str(REPO / script), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, env=environment)


def load_bench(name):
    """bench/`name`.py as a module, its absl flags defined in place of the last loaded bench's.

    Bench scripts define their flags at import, several with the same names
    (`iterations`, `threads`), so a second one in the same test process
    would stop at a duplicate flag. Tests call their functions with
    arguments and parse no flags; a test file loads its bench once, and
    files run one after another in a process.
    """
    import importlib.util

    from absl import flags
    for name_defined in _LAST_BENCH_FLAGS:
        delattr(flags.FLAGS, name_defined)
    before = set(flags.FLAGS)
    spec = importlib.util.spec_from_file_location(f"{name}_bench", REPO / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _LAST_BENCH_FLAGS.clear()
    _LAST_BENCH_FLAGS.update(set(flags.FLAGS) - before)
    return module


def xla_compiled_functions(graph):
    """Names of the functions in `graph`'s library that XLA must compile (`jit_compile=True`)."""
    return [function.signature.name for function in graph.as_graph_def().library.function
            if function.attr["_XlaMustCompile"].b]


def write_tiny_bert_config(path, vocab_size=30522, **overrides):
    """Writes a tiny bert_config.json (2 layers, H=32) and returns its path."""
    import json
    config = dict(vocab_size=vocab_size, hidden_size=32, num_hidden_layers=2,
                  num_attention_heads=4, intermediate_size=64, max_position_embeddings=128,
                  type_vocab_size=2, hidden_act="gelu", hidden_dropout_prob=0.1,
                  attention_probs_dropout_prob=0.1, initializer_range=0.02)
    config.update(overrides)
    pathlib.Path(path).write_text(json.dumps(config))
    return str(path)


def write_cpuinfo(folder, flags, cpus=2):
    """A new /proc/cpuinfo-style file in `folder`, `cpus` blocks with `flags`; returns its path.

    Each call writes a file of its own name, since `cpu_features.cpu_flags`
    reads a path once per process.
    """
    path = pathlib.Path(folder) / f"cpuinfo-{len(list(pathlib.Path(folder).glob('cpuinfo-*')))}"
    path.write_text("".join(f"processor\t: {i}\nmodel name\t: Some CPU\nflags\t\t: {flags}\n\n"
                            for i in range(cpus)))
    return str(path)
