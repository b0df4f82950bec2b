"""Imports every `bert_tf` module before pytest collects any of them for doctests.

With `--import-mode=importlib`, pytest imports a module it collects by
running its file, even when importing the module's package has just
imported it (`bert_tf/modeling/__init__.py` imports its submodules). The
module's classes then exist twice, and `isinstance` fails between the two
copies: `pytest bert_tf/modeling/masked_lm_head.py tests/training` broke a
checkpoint-name test that way. pytest reuses a module already in
`sys.modules`, so importing them all first makes the suite independent of
the order its paths are given in. `bert_tf.scripts` is left out, as in
pytest.ini: a script defines its flags when imported.
"""

import importlib
import pkgutil

import bert_tf

for _module in pkgutil.walk_packages(bert_tf.__path__, "bert_tf."):
    if not _module.name.startswith("bert_tf.scripts"):
        importlib.import_module(_module.name)
