"""A bench whose peer package is not installed says so in one line, and runs where it can.

The peers (torch, transformers, keras-hub, ...) come with `make bench`. A
bench run by hand without one stopped in an ImportError traceback as it
was imported, also where its flags left that peer out
(`--implementations=ours`). A missing peer is simulated as Python sees
one: `None` in `sys.modules` (`import` raises ModuleNotFoundError,
`importlib.util.find_spec` finds nothing).
"""

import ast
import pathlib
import re
import sys

import pytest
from absl import flags

import peers
from tests_shared import REPO, load_bench

NOT_INSTALLED = ("which is not installed: `make bench` installs the benches' peers "
                 "(pip install -r requirements-test.txt)")


@pytest.fixture
def fresh_bench_helpers(monkeypatch):
    """The bench helpers (round_robin, hf_recipe, ...) imported again by the next bench loaded.

    A helper loaded by an earlier test would not import its peers again.
    """
    for name, module in list(sys.modules.items()):
        if pathlib.Path(getattr(module, "__file__", None) or "/").parent == REPO / "bench":
            monkeypatch.delitem(sys.modules, name)


def test_a_peer_a_bench_always_runs_stops_its_import_with_one_line(monkeypatch,
                                                                   fresh_bench_helpers):
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(SystemExit) as stop:
        load_bench("gpu_training_step")
    assert str(stop.value) == f"this bench needs torch, {NOT_INSTALLED}"


@pytest.mark.parametrize("bench, missing, without, chosen", [
    ("pretraining_gutenberg", "keras_hub", "--implementations=ours",
     "--implementations=ours,keras_hub"),
    ("encoder_forward", "keras_hub", "--implementations=ours,hf", "--implementations=keras_hub"),
    ("finetune_ner", "torch", "--implementations=bert_tf", "--implementations=bert_tf,hf"),
    ("finetune_glue", "transformers", "--compare=", "--compare=mrpc"),
])
def test_a_peer_a_flag_chooses_is_needed_only_where_chosen(bench, missing, without, chosen,
                                                          monkeypatch, fresh_bench_helpers):
    monkeypatch.setitem(sys.modules, missing, None)
    load_bench(bench)
    try:
        flags.FLAGS([f"{bench}.py", without])
        flags.FLAGS.unparse_flags()
        flag = chosen.split("=")[0]  # absl shows the value as a list
        with pytest.raises(flags.IllegalFlagValueError, match=re.escape(f"flag {flag}=") + ".*"
                           + re.escape(f": needs {missing}, {NOT_INSTALLED}")):
            flags.FLAGS([f"{bench}.py", chosen])
    finally:
        flags.FLAGS.unparse_flags()


def _unguarded_peer_imports(node, guarded=False):
    """Line numbers of imports of peers outside functions and outside `with peers.needed()`."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    if isinstance(node, ast.With):
        guarded = guarded or any(ast.unparse(item.context_expr) == "peers.needed()"
                                 for item in node.items)
    names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
             else [node.module] if isinstance(node, ast.ImportFrom) else [])
    lines = [node.lineno] if not guarded and any(
        (name or "").split(".")[0] in peers.PEERS for name in names) else []
    for child in ast.iter_child_nodes(node):
        lines += _unguarded_peer_imports(child, guarded)
    return lines


def test_every_bench_imports_a_peer_it_always_needs_under_peers_needed():
    unguarded = {path.name: lines for path in sorted((REPO / "bench").glob("*.py"))
                 if (lines := _unguarded_peer_imports(ast.parse(path.read_text())))}
    assert unguarded == {}
