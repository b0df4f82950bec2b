"""Writers of extracted features: the original's JSON lines, or a compact `.npz`.

Both write to a temporary name and rename on success, so an interrupted run
never leaves a truncated file under the requested name; a failed write (a
full disk) removes the temporary file and names the requested one.
"""

import collections
import contextlib
import json

import numpy as np

from bert_tf.file_set import cannot_write, discard, publish
from bert_tf.leftover_files import remove_left_behind, temporary_name
from bert_tf.errors import UsageError


class _AtomicFile:
    """Base of the writers: a temporary file renamed on a clean `close`.

    What killed writers of `path` left beside it is removed first; a
    `close` that fails (a full disk) removes the temporary file.
    """

    def __init__(self, path):
        self.path = path
        remove_left_behind(path)
        self.temp_path = temporary_name(path)

    def __enter__(self):
        return self

    def __exit__(self, error_type, error, traceback):
        if error_type is None:
            try:
                self.close()
            except BaseException:
                self.abort()
                raise
        else:
            self.abort()

    def abort(self):
        discard(self.temp_path)

    @contextlib.contextmanager
    def _writing(self):
        """Reports an `OSError` of the block as "cannot write PATH: reason"."""
        try:
            yield
        except OSError as error:
            raise cannot_write(self.path, error) from None


class JsonLinesWriter(_AtomicFile):
    """One JSON object per example, the original's layout.

    Without `concat_layers`: `{"linex_index": i, "features": [{"token": t,
    "layers": [{"index": -1, "values": [...]}, ...]}, ...]}` (the key really
    is `linex_index`); with it, each token has `"values"` holding the chosen
    layers concatenated in order. Values are rounded to 6 decimals.
    """

    def __init__(self, path, layer_indexes, concat_layers=False):
        if path.endswith(".npz"):  # a numpy reader would fail on JSON text
            raise UsageError(f"--output_file={path}: a name ending in .npz, but "
                             "--output_format=jsonl; pass --output_format=npz for an npz file")
        super().__init__(path)
        self.layer_indexes = list(layer_indexes)
        self.concat_layers = concat_layers
        with self._writing():
            self._file = open(self.temp_path, "w", encoding="utf-8")

    @staticmethod
    def _rounded(values):
        return [round(float(x), 6) for x in values]

    def write(self, unique_id, tokens, features):
        """`features`: `[num_layers, len(tokens), H]`."""
        token_features = []
        for position, token in enumerate(tokens):
            entry = collections.OrderedDict(token=token)
            if self.concat_layers:
                entry["values"] = self._rounded(features[:, position].reshape(-1))
            else:
                entry["layers"] = [
                    collections.OrderedDict(index=index,
                                            values=self._rounded(features[k, position]))
                    for k, index in enumerate(self.layer_indexes)]
            token_features.append(entry)
        record = collections.OrderedDict(linex_index=unique_id, features=token_features)
        with self._writing():
            self._file.write(json.dumps(record) + "\n")

    def close(self):
        with self._writing():
            self._file.close()
            publish(self.temp_path, self.path)

    def abort(self):
        with contextlib.suppress(OSError):  # its flush fails again on a full disk
            self._file.close()
        super().abort()


class NpzWriter(_AtomicFile):
    """All tokens of all examples in one `.npz` (float32, no rounding).

    Arrays: `features` `[total_tokens, L, H]` (or `[total_tokens, L * H]`
    with `concat_layers`), `tokens` (str), `example_ids`, `offsets`
    (`features[offsets[i]:offsets[i + 1]]` belong to example i) and
    `layer_indexes`. Held in memory until `close`.
    """

    def __init__(self, path, layer_indexes, concat_layers=False):
        if not path.endswith(".npz"):
            raise UsageError(f"--output_file={path}: the npz format needs a name ending in .npz")
        super().__init__(path)
        self.layer_indexes = list(layer_indexes)
        self.concat_layers = concat_layers
        self._features, self._tokens, self._ids, self._offsets = [], [], [], [0]

    def write(self, unique_id, tokens, features):
        per_token = np.transpose(features, (1, 0, 2))
        if self.concat_layers:
            per_token = per_token.reshape(len(tokens), -1)
        self._features.append(per_token.astype(np.float32))
        self._tokens.extend(tokens)
        self._ids.append(unique_id)
        self._offsets.append(self._offsets[-1] + len(tokens))

    def close(self):
        with self._writing():
            with open(self.temp_path, "wb") as f:
                np.savez(f, features=np.concatenate(self._features) if self._features else
                         np.zeros((0,), np.float32),
                         tokens=np.array(self._tokens, dtype=str),
                         example_ids=np.array(self._ids, np.int64),
                         offsets=np.array(self._offsets, np.int64),
                         layer_indexes=np.array(self.layer_indexes, np.int64))
            publish(self.temp_path, self.path)


WRITERS = {"jsonl": JsonLinesWriter, "npz": NpzWriter}
