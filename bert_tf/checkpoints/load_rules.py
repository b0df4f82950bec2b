"""The rules of loading weights into a model, shared by both checkpoint formats.

Whatever the file (an original TF1 checkpoint, HuggingFace safetensors), a
load maps file tensors to our variables by their original names
(`name_map`), then: refuses shapes that do not fit and encoder weights that
are missing, the pooler excepted, in one line (`check_compatible`); refuses
weights that are not floating point (`check_float_weights`); assigns
(`assign_weights`); warns of encoder layers the model has no place for
(`warn_unused_layers`) and of a pooler the file lacks (`warn_new_pooler`);
and reports what it did (`LoadReport`, which logs it).
"""

import dataclasses
import re

import numpy as np
from absl import logging

from bert_tf.checkpoints.name_map import POOLER_NAMES, encoder_names, fine_tuned_bilstm_units

# An encoder layer's tensors, in the original's names and in HuggingFace's.
_ENCODER_LAYER = re.compile(r"encoder[/.]layer[_.](\d+)[/.]")


class CheckpointError(ValueError):
    """A checkpoint that does not fit the model it is loaded into."""


class CheckpointMismatch(CheckpointError):
    """A readable checkpoint whose weights' shapes or names are not the model's
    (`check_compatible`), as against one that cannot be read at all."""


@dataclasses.dataclass
class LoadReport:
    """What a load did: names restored, model names left as initialised, file names unused."""

    restored: list
    not_in_checkpoint: list
    unused: list

    def log(self, source, kind):
        """Logs what the load of `source` did, and warns of what a user should know.

        Args:
            source: the file or prefix loaded, named in every line.
            kind: what the file holds, "tensor" (safetensors) or "variable" (TF1).
        """
        logging.info("%s: restored %d %ss", source, len(self.restored), kind)
        for name in self.not_in_checkpoint:
            logging.info("not in checkpoint, newly initialised: %s", name)
        for name in self.unused:
            logging.info("unused checkpoint %s: %s", kind, name)
        warn_unused_layers(self.unused, self.restored, source)
        warn_new_pooler(self.not_in_checkpoint, self.restored, source)


def warn_unused_layers(unused, restored, source):
    """Warns, in one line, of encoder layers a checkpoint holds and the model's encoder has not.

    A config with fewer `num_hidden_layers` than the checkpoint loads its
    first layers and drops the rest: on purpose when a smaller model starts
    from a bigger one's lower layers, by mistake when the config is the
    wrong one. Either way the user should read it, not find it among one
    log line per unused tensor. A model without encoder layers (a tagger
    on cached features) uses none of them, rightly.

    >>> warn_unused_layers(["bert/encoder/layer_4/output/dense/kernel",
    ...                     "encoder.layer.5.output.dense.bias", "cls/squad/output_bias"],
    ...                    ["bert/encoder/layer_3/output/dense/kernel"], "x")
    [4, 5]
    >>> warn_unused_layers(["bert/encoder/layer_4/output/dense/kernel"], ["lstm/kernel"], "x")
    []
    """
    if not any(map(_ENCODER_LAYER.search, restored)):
        return []
    layers = sorted({int(match.group(1)) for match in map(_ENCODER_LAYER.search, unused)
                     if match})
    if layers:
        logging.warning("%s: encoder layers %s of the checkpoint are not in the model, which "
                        "uses only the layers below them; is num_hidden_layers in "
                        "bert_config.json the one it was trained with?", source,
                        ", ".join(map(str, layers)))
    return layers


def warn_new_pooler(not_in_checkpoint, restored, source):
    """Warns, in one line, that the encoder's pooler starts newly initialised.

    HuggingFace's BertForMaskedLM, BertForQuestionAnswering and
    BertForTokenClassification save no pooler (HuggingFace initialises it
    anew too). Tasks on tokens (SQuAD, NER, features) never read it; a
    classifier trains it from there; `pooled_output` is otherwise random.

    >>> warn_new_pooler(["bert/pooler/dense/bias", "output_bias"],
    ...                 ["bert/embeddings/word_embeddings"], "x")
    True
    >>> warn_new_pooler(["output_bias"], ["bert/embeddings/word_embeddings"], "x")
    False
    """
    new = bool(set(POOLER_NAMES) & set(not_in_checkpoint)) and any(
        name.startswith("bert/") for name in restored)
    if new:
        logging.warning("%s: has no pooler (bert/pooler/dense/*, as HuggingFace's "
                        "BertForMaskedLM, ...ForQuestionAnswering and ...ForTokenClassification "
                        "save none); it starts newly initialised: a classifier trains it, and "
                        "pooled_output means nothing until then", source)
    return new


_SHOWN_PROBLEMS = 3


def check_compatible(refs, shapes, source):
    """Raises one `CheckpointMismatch`, one line, on shape mismatches and missing encoder names.

    The pooler may be missing (`warn_new_pooler`).

    The line counts them, names the first few, and says which config
    sizes differ where the word embeddings show it (a wrong
    bert_config.json is the usual cause), or else how many units per
    direction the fine-tuning BiLSTM has in each (a run's `--bilstm_units`
    other than its training's); the log lists them all.

    Args:
        refs: our `{original name: WeightRef}`.
        shapes: the file's `{original name: shape}`.
        source: the file, named in the message.
    """
    problems = [f"{name}: checkpoint {tuple(shapes[name])}, model {ref.original_shape}"
                for name, ref in sorted(refs.items())
                if name in shapes and tuple(shapes[name]) != ref.original_shape]
    problems += [f"{name}: missing from the checkpoint"
                 for name in sorted(encoder_names(refs) - set(shapes) - set(POOLER_NAMES))]
    if not problems:
        return
    for problem in problems:
        logging.info("%s: %s", source, problem)
    more = (f"; and {len(problems) - _SHOWN_PROBLEMS} more"
            if len(problems) > _SHOWN_PROBLEMS else "")
    hint = _hint(refs, shapes)
    raise CheckpointMismatch(f"{source}: checkpoint does not fit the model{hint}: "
                             f"{len(problems)} weights differ: "
                             f"{'; '.join(problems[:_SHOWN_PROBLEMS])}{more}")


def _hint(refs, shapes):
    """Which config sizes, or which BiLSTM size, differ: the usual causes of a mismatch."""
    word = "bert/embeddings/word_embeddings"
    sizes = [f"{size}: checkpoint {had}, model {wanted}"
             for size, had, wanted in zip(("vocab_size", "hidden_size"), shapes.get(word, ()),
                                          refs[word].original_shape if word in refs else ())
             if had != wanted]
    if sizes:
        return f" ({', '.join(sizes)}; is this the right bert_config.json?)"
    trained = fine_tuned_bilstm_units(shapes)
    built = fine_tuned_bilstm_units({name: ref.original_shape for name, ref in refs.items()})
    if trained and built and trained != built:
        return (f" (its BiLSTM has {trained} units per direction, the model's {built}: "
                "is it the --bilstm_units it was trained with?)")
    if trained and not built:
        return (f" (it holds a BiLSTM over its encoder, of {trained} units per direction, "
                "and the model none: add --bilstm with the --bilstm_units it was trained "
                "with)")
    differing = [name for name, ref in refs.items()
                 if name in shapes and tuple(shapes[name]) != ref.original_shape]
    if differing and not encoder_names(differing):
        return (" (its task head has other shapes: a model fine-tuned for another task or "
                "label count; start from the pretrained model it came from)")
    return ""


# Float dtypes as TensorFlow and safetensors name them.
_FLOAT_TYPES = {"float16", "bfloat16", "float32", "float64", "F16", "BF16", "F32", "F64"}


def check_float_weights(dtypes, source):
    """Refuses weights stored as anything but floating point (assigning would cast them).

    Args:
        dtypes: `{original name: dtype name}` of the weights to restore, e.g.
            "float32", "bfloat16", or safetensors' "F16", "I32".
        source: the file, named in the message.
    """
    others = {name: dtype for name, dtype in sorted(dtypes.items())
              if dtype not in _FLOAT_TYPES}
    if others:
        name, dtype = next(iter(others.items()))
        raise CheckpointError(f"{source}: {len(others)} weights are not floating point, "
                              f"e.g. {name}: {dtype}; is it a model checkpoint?")


def assign_weights(refs, read_tensor, names):
    """Assigns `read_tensor(name)` (original layout) to each named variable."""
    for name in names:
        value = np.asarray(read_tensor(name))
        ref = refs[name]
        ref.variable.assign(value.T if ref.transposed else value)
