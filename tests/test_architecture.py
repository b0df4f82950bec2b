"""docs/ARCHITECTURE.md's import rules, checked on every module's imports.

The picture there says who may import whom; this test reads each module's
`import` statements (function-level ones too) and fails on any import the
picture does not allow, so the picture stays true as the code grows; and
every module must have a row in its module table (and every row name a module).
"""

import ast
import fnmatch
import pathlib
import re

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "bert_tf"

# Modules beside `config` that anyone may import.
BESIDE_CONFIG = {"config", "errors", "atomic_files", "file_set", "leftover_files",
                 "file_digests", "output_paths", "text_files", "work_progress", "cpu_features",
                 "script_output"}
# What each layer may import besides itself and BESIDE_CONFIG.
MAY_IMPORT = {
    "scripts": {"tasks", "serving", "training", "modeling", "tokenization", "data",
                "checkpoints"},
    "tasks": {"serving", "training", "modeling", "tokenization", "data", "checkpoints"},
    "serving": {"modeling", "tokenization", "checkpoints"},
    "training": {"modeling", "checkpoints"},
    "checkpoints": {"modeling"},
    "data": {"tokenization"},
    "tokenization": set(),
    "modeling": set(),
}
# The few that stand apart: the package's own entry, the scripts' launcher and the
# SQuAD scorer's command line; and what a config allows, part of the `config` level.
LAYER_OF_TOP_MODULE = {"__init__": "scripts", "launch": "scripts", "evaluate_squad": "scripts",
                       "config_uses": "config"}
# `modeling` imports only `config` and `cpu_features`, and TensorFlow only in these.
MODELING_WITH_TENSORFLOW = {"dropout", "fused_activation", "onednn_layer_norm", "token_dense",
                            "xla_elementwise"}


def _layer(parts):
    """The layer of a module named by its parts below `bert_tf`."""
    if parts[0] in MAY_IMPORT:
        return parts[0]
    return LAYER_OF_TOP_MODULE.get(parts[0], parts[0])


def _imports(path):
    """The dotted names each import statement of `path` reaches, split into parts."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                yield node.module.split(".") + [alias.name]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name.split(".")


def _wrong_imports(path, parts):
    """The imports of `path`, the module `bert_tf.<parts>`, that the picture forbids."""
    source = _layer(parts)
    if source == "config":
        allowed = {"config", "atomic_files"}  # writing a bert_config.json
    elif source in BESIDE_CONFIG:
        allowed = {source, "errors", "leftover_files", "file_set"}
    elif source == "modeling":
        allowed = {"modeling", "config", "cpu_features"}
    else:
        allowed = MAY_IMPORT[source] | {source} | BESIDE_CONFIG
    return [".".join(name) for name in _imports(path)
            if name[0] == "bert_tf" and _layer(name[1:]) not in allowed]


MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down_only(path):
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    assert not _wrong_imports(path, parts), "see docs/ARCHITECTURE.md"


def test_tensorflow_in_modeling_only_where_the_picture_says():
    with_tensorflow = {path.stem for path in (PACKAGE / "modeling").glob("*.py")
                       if any(name[0] == "tensorflow" for name in _imports(path))}
    assert with_tensorflow == MODELING_WITH_TENSORFLOW


def test_imports_inside_functions_and_of_whole_packages_are_caught(tmp_path):
    module = tmp_path / "bad.py"
    module.write_text("from bert_tf import tasks\n\n\ndef load():\n"
                      "    from bert_tf.data.readers import pretraining_dataset\n")
    assert _wrong_imports(module, ("training", "bad")) == [
        "bert_tf.tasks", "bert_tf.data.readers.pretraining_dataset"]
    assert _wrong_imports(module, ("scripts", "bad")) == []


def _modules_in_the_table():
    """The module paths (below `bert_tf`, globs kept) the module table of docs/ARCHITECTURE.md
    names: a name without a folder in a row takes the folder of the name before it."""
    doc = (PACKAGE.parent / "docs" / "ARCHITECTURE.md").read_text()
    table = doc.split("\n## Modules\n")[1].split("\n## ")[0]
    named = set()
    for row in table.splitlines():
        if not row.startswith("| `"):
            continue
        folder = ""
        for name in re.findall(r"`([^`]+\.py)`", row.split("|")[1]):
            folder = name.rpartition("/")[0] + "/" if "/" in name else folder
            named.add(name if "/" in name else folder + name)
    return named


def test_every_module_has_a_row_in_the_module_table():
    named = _modules_in_the_table()
    modules = {str(path.relative_to(PACKAGE)) for path in MODULES if path.name != "__init__.py"}
    unnamed = {module for module in modules
               if not any(fnmatch.fnmatchcase(module, name) for name in named)}
    assert not unnamed, "add them to docs/ARCHITECTURE.md's module table"
    assert not {name for name in named if "*" not in name} - modules, "no such module"
