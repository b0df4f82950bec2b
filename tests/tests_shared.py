"""Helpers shared by tests: the shared data folder, tiny random encoder inputs, CPU flags files,
root scripts run in process or watched in a process of their own, bench scripts, a full disk."""

import contextlib
import os
import pathlib
import re
import socket
import time

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
SHARED_DATA = pathlib.Path(os.environ.get("BERT_TF_SHARED_DATA", REPO.parent / "shared" / "data"))


def shared_path(*parts):
    """Path of a file under ../shared/data; fails loudly (never skips) if absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.fail(f"missing shared test data {path} (set BERT_TF_SHARED_DATA)")
    return path


@contextlib.contextmanager
def file_size_limit(size):
    """No file of this process grows past `size` bytes in the block: a real full disk, in process.

    The kernel's limit (`ulimit -f`, RLIMIT_FSIZE) fails a write past it with
    EFBIG, "File too large", as a full disk fails it with ENOSPC: Python and
    TensorFlow take both the same way. (Python ignores SIGXFSZ, which would
    kill it.) The earlier limit is restored after the block.
    """
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


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


def random_weight_encoder(hidden_act="gelu", mixed_precision="float32"):
    """A 2-layer `BertEncoder` with random weights everywhere (biases, LayerNorms); returns
    (encoder, config). Tests of how inference is computed set its layers' paths by hand."""
    from bert_tf.config import BertConfig
    from bert_tf.modeling import BertEncoder
    from bert_tf.training import precision

    config = BertConfig(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=37, max_position_embeddings=64, hidden_act=hidden_act)
    with precision.dtype_policy(mixed_precision):
        encoder = BertEncoder(config)
    rng = np.random.default_rng(0)
    encoder.set_weights([rng.normal(0.0, 0.5, weight.shape).astype("float32")
                         for weight in encoder.get_weights()])
    return encoder, config


def weights_by_name(model):
    """`{original checkpoint name: numpy copy}` of every variable of `model`."""
    from bert_tf.checkpoints import tf1_variable_map
    return {name: np.array(ref.variable.numpy()) for name, ref in tf1_variable_map(model).items()}


def load_script(script):
    """The `bert_tf.scripts` module of root script `script` (`run_squad.py`), imported afresh.

    Scripts define their absl flags at import, several with the same names,
    so the flags that other scripts and benches defined are removed first
    (`--verbose`, defined once by the scripts' shared `cli`, stays) and
    this script's are defined anew, unparsed, with their defaults.
    """
    import importlib
    import sys

    from absl import app, flags
    app.define_help_flags()  # the first `app.run` would define them among the script's
    _forget_loaded_flags()
    flags.FLAGS.unparse_flags()
    name = f"bert_tf.scripts.{pathlib.Path(script).stem}"
    sys.modules.pop(name, None)
    return importlib.import_module(name)


def run_script(script, *args):
    """Runs root script `script` (`run_classifier.py`, ...) in this process, as `python` would.

    The script file runs as `__main__`, with `sys.argv` set to the script
    and `args` and its flags fresh (`load_script`). Its stdout, its stderr and absl's log
    lines are captured; `sys.exit` ends the run. A test pays no TensorFlow
    start-up this way (about 6 s a process). Tests that need a process of
    their own (a signal, an environment variable, TensorFlow's start-up
    notices, logical devices) start one with `subprocess`.

    Returns:
        `subprocess.CompletedProcess` with `returncode`, `stdout` and `stderr`.
    """
    import contextlib
    import io
    import logging as python_logging
    import runpy
    import subprocess
    import sys

    from absl import flags, logging
    load_script(script)
    # As after `app.run`'s first parse: INFO lines show unless --verbosity says otherwise.
    flags.FLAGS.verbosity = 0
    argv = [script, *map(str, args)]
    stdout, stderr = io.StringIO(), io.StringIO()
    log_handler = logging.get_absl_handler().python_handler
    saved_argv, saved_log_stream = sys.argv, log_handler.stream
    sys.argv, log_handler.stream = argv, stderr
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            runpy.run_path(str(REPO / script), run_name="__main__")
        returncode = 0
    except SystemExit as stop:
        returncode = stop.code if isinstance(stop.code, int) else 0 if stop.code is None else 1
        if isinstance(stop.code, str):
            stderr.write(stop.code + "\n")
    finally:
        sys.argv, log_handler.stream = saved_argv, saved_log_stream
        python_logging.disable(python_logging.NOTSET)  # a failed run silences its teardown
    return subprocess.CompletedProcess(argv, returncode, stdout.getvalue(), stderr.getvalue())


def load_bench(name):
    """bench/`name`.py as a module, its absl flags defined in place of those loaded before.

    Bench scripts define their flags at import, several with the same names
    (`iterations`, `threads`), so a second one in the same test process
    would stop at a duplicate flag. Tests call their functions with
    arguments and parse no flags; a test file loads its bench once, and
    files run one after another in a process.
    """
    import importlib.util
    import sys
    _forget_loaded_flags()
    spec = importlib.util.spec_from_file_location(f"bench.{name}", REPO / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # absl files each flag under its module's name
    spec.loader.exec_module(module)
    return module


def _forget_loaded_flags():
    """Deletes the absl flags that bench scripts and runner scripts defined (not `--verbose`).

    That includes the flags bench helpers define for them (`round_robin`'s
    `--threads`): absl files a flag under the module whose code defined it.
    """
    from absl import flags
    bench_helpers = {path.stem for path in (REPO / "bench").glob("*.py")}
    for module, defined in list(flags.FLAGS.flags_by_module_dict().items()):
        if (module.startswith(("bench.", "bert_tf.scripts.")) or module in bench_helpers) and (
                module != "bert_tf.scripts.cli"):
            for flag in list(defined):
                if flag.name in flags.FLAGS:
                    delattr(flags.FLAGS, flag.name)


def xla_compiled_functions(graph):
    """Names of the functions in `graph`'s library that XLA must compile (`jit_compile=True`)."""
    return _must_compile([graph.as_graph_def()])


def saved_xla_functions(export_dir):
    """Names of the functions that XLA must compile in the SavedModel at `export_dir`."""
    from tensorflow.core.protobuf import saved_model_pb2
    saved = saved_model_pb2.SavedModel.FromString(
        (pathlib.Path(export_dir) / "saved_model.pb").read_bytes())
    return _must_compile([meta_graph.graph_def for meta_graph in saved.meta_graphs])


def _must_compile(graph_defs):
    return [function.signature.name for graph_def in graph_defs
            for function in graph_def.library.function if function.attr["_XlaMustCompile"].b]


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


def write_tiny_release(folder, vocab_file, **overrides):
    """Writes an original release folder of a tiny random encoder; returns the folder.

    `bert_model.ckpt`, `bert_config.json` (`write_tiny_bert_config` with
    `overrides`: `causal=True` for a left-to-right model's) and `vocab.txt`.
    Random weights from a fixed seed, whatever ran before.
    """
    import keras

    from bert_tf.checkpoints import export_original
    from bert_tf.config import BertConfig
    from bert_tf.modeling import BertEncoder
    keras.utils.set_random_seed(0)
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    config = BertConfig.from_json_file(write_tiny_bert_config(folder / "bert_config.json",
                                                              **overrides))
    export_original(BertEncoder(config), config, vocab_file, str(folder))
    return folder


def write_cpuinfo(folder, flags, cpus=2):
    """A new /proc/cpuinfo-style file in `folder`, `cpus` blocks with `flags`; returns its path.

    Each call writes a file of its own name, since `cpu_features.cpu_flags`
    reads a path once per process.
    """
    path = pathlib.Path(folder) / f"cpuinfo-{len(list(pathlib.Path(folder).glob('cpuinfo-*')))}"
    path.write_text("".join(f"processor\t: {i}\nmodel name\t: Some CPU\nflags\t\t: {flags}\n\n"
                            for i in range(cpus)))
    return str(path)


def free_ports(count):
    """`count` ports that were free on localhost a moment ago: nothing listens there now."""
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("localhost", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def wait_for_line(log_path, pattern, process, seconds=240):
    """Polls `log_path` (a running `process`'s stderr) until `pattern` is in it; the match."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        assert process.poll() is None, open(log_path).read()[-3000:]
        match = re.search(pattern, open(log_path).read())
        if match:
            return match
        time.sleep(0.05)
    raise AssertionError(f"no {pattern!r} in {seconds} s: {open(log_path).read()[-3000:]}")


def steps_per_call(trainer):
    """The list that each later training call of `trainer` appends its step count to."""
    counts, record = [], trainer.call_sizes.record

    def counting(steps, seconds, building):
        counts.append(steps)
        record(steps, seconds, building)
    trainer.call_sizes.record = counting
    return counts
