"""Activation functions by their `bert_config.json` names.

The original release's "gelu" is the tanh approximation; HuggingFace's
"gelu" is the exact erf form, which `BertConfig.from_hf_dict` renames to
"gelu_exact" so that both kinds of checkpoint compute what they were trained
with.
"""

import keras


def _gelu_tanh(x):
    return keras.activations.gelu(x, approximate=True)


def _gelu_exact(x):
    return keras.activations.gelu(x, approximate=False)


_ACTIVATIONS = {
    "gelu": _gelu_tanh,
    "gelu_exact": _gelu_exact,
    "relu": keras.activations.relu,
    "tanh": keras.activations.tanh,
    "swish": keras.activations.silu,
}


def get_activation(name):
    """Returns the activation callable for a config's `hidden_act` name.

    Example:

    >>> import numpy as np
    >>> float(get_activation("gelu")(np.float32(1.0)))  # doctest: +ELLIPSIS
    0.841...
    """
    if name not in _ACTIVATIONS:
        raise ValueError(f"unknown hidden_act {name!r}; known: {', '.join(_ACTIVATIONS)}")
    return _ACTIVATIONS[name]
