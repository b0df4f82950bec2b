"""Runs SavedModel signatures as a client would: only tensorflow and tensorflow_text.

    python load_exports.py requests.json outputs.npz

`requests.json` lists runs `{"name", "export", "signature", "inputs": {name:
[strings]}}`; every output of run `name` is saved as `name/output` (strings as
unicode arrays). It fails if anything imported `bert_tf`.
"""

import json
import sys

import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401  (the tokenizer's ops)


def main(requests_path, outputs_path):
    with open(requests_path, encoding="utf-8") as f:
        runs = json.load(f)
    loaded, results = {}, {}
    for run in runs:
        if run["export"] not in loaded:
            loaded[run["export"]] = tf.saved_model.load(run["export"])
        function = loaded[run["export"]].signatures[run["signature"]]
        outputs = function(**{key: tf.constant(values, tf.string)
                              for key, values in run["inputs"].items()})
        for key, value in outputs.items():
            value = np.asarray(value.numpy())
            if value.dtype.kind in "OS":
                value = np.char.decode(value.astype(bytes), "utf-8")
            results[f"{run['name']}/{key}"] = value
    ours = sorted(name for name in sys.modules if name.split(".")[0] == "bert_tf")
    if ours:
        sys.exit(f"the client imported {ours}")
    np.savez(outputs_path, **results)


if __name__ == "__main__":
    main(*sys.argv[1:])
