"""`BertConfig`: the model hyper-parameters, compatible with `bert_config.json`.

The original release describes a model with a small JSON file. `BertConfig`
reads and writes exactly that file, keeps keys it does not know (released
files carry extras such as `pooler_fc_size` or `directionality`) so a
round trip loses nothing, and adds the named sizes of the paper and of the
compact-models release (Tiny..Large).
"""

import copy
import dataclasses
import difflib
import json
import os

from bert_tf.atomic_files import write_text

# Activations the encoder understands. "gelu" is the original's tanh
# approximation; "gelu_exact" is the erf form that HuggingFace calls "gelu".
SUPPORTED_ACTIVATIONS = ("gelu", "gelu_exact", "relu", "tanh", "swish")

# HuggingFace `hidden_act` spelling -> ours (same function, other name).
_HF_ACTIVATIONS = {
    "gelu": "gelu_exact",
    "gelu_python": "gelu_exact",
    "gelu_new": "gelu",
    "gelu_pytorch_tanh": "gelu",
    "relu": "relu",
    "tanh": "tanh",
    "swish": "swish",
    "silu": "swish",
}

# (num_hidden_layers, hidden_size, num_attention_heads); intermediate is 4H.
NAMED_SIZES = {
    "tiny": (2, 128, 2),
    "mini": (4, 256, 4),
    "small": (4, 512, 8),
    "medium": (8, 512, 8),
    "base": (12, 768, 12),
    "large": (24, 1024, 16),
}


# Fields a config file must give: they decide what the weights compute.
# Training-only fields (dropout rates, initializer_range) may be left to the
# original's defaults.
REQUIRED_FIELDS = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                   "intermediate_size", "hidden_act", "max_position_embeddings",
                   "type_vocab_size")

# Extra keys of released files, kept as they are although some look like our
# fields (`pooler_num_attention_heads`).
RELEASED_EXTRA_KEYS = ("directionality", "pooler_fc_size", "pooler_num_attention_heads",
                       "pooler_num_fc_layers", "pooler_size_per_head", "pooler_type")

# `run_pretraining.py --causal` marks its model `"causal": true` (an extra key, which the
# original's code ignores; `config_uses`): every model built from it attends left to right.
CAUSAL_KEY = "causal"
# Keys of a `config.json` that only HuggingFace writes: such a file reads as HuggingFace's.
_HF_MARKS = ("model_type", "architectures", "transformers_version")

# How alike (difflib ratio) an unknown key and a field must be to call the key
# a misspelling: `num_hidden_layer` is 0.97, HF's `position_embedding_type` 0.78.
_MISSPELLING_CUTOFF = 0.85


class ConfigError(ValueError):
    """A `bert_config.json` (or a named size) that cannot describe a model."""


def _refuse_keras_object(values, path):
    """Refuses a Keras object's saved config: a keras-hub preset's `config.json`.

    keras-hub saves `{"module": ..., "class_name": "BertBackbone", "config":
    {"num_layers": ..., ...}}` under the very name of HuggingFace's file,
    and its weights in a layout of its own (`model.weights.h5`).
    """
    if isinstance(values.get("config"), dict) and "class_name" in values:
        raise ConfigError(
            f"{path}: the saved config of a Keras object "
            f"({values.get('registered_name') or values['class_name']}), as a keras-hub preset "
            "holds, not a bert_config.json nor a HuggingFace config.json; bert_tf does not "
            "read keras-hub presets: use the model's original release (bert_model.ckpt, "
            "bert_config.json, vocab.txt) or its HuggingFace folder")


@dataclasses.dataclass
class BertConfig:
    """Hyper-parameters of a BERT encoder, as in the original `bert_config.json`.

    Field names, meanings and code defaults are the original's. Unknown keys
    read from a file are kept in `extra` and written back unchanged.

    Example:

    >>> config = BertConfig.named("tiny", vocab_size=30522)
    >>> (config.num_hidden_layers, config.hidden_size, config.intermediate_size)
    (2, 128, 512)
    >>> BertConfig.from_dict(config.to_dict()) == config
    True
    """

    vocab_size: int
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu"
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    max_position_embeddings: int = 512
    type_vocab_size: int = 16
    initializer_range: float = 0.02
    extra: dict = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        self.validate()

    def validate(self):
        """Raises `ConfigError` if the fields cannot describe a model."""
        for name in ("vocab_size", "hidden_size", "num_hidden_layers",
                     "num_attention_heads", "intermediate_size",
                     "max_position_embeddings", "type_vocab_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{name} must be a positive integer, got {value!r}")
        if self.hidden_size % self.num_attention_heads:
            raise ConfigError(
                f"hidden_size {self.hidden_size} is not a multiple of "
                f"num_attention_heads {self.num_attention_heads}")
        if self.hidden_act not in SUPPORTED_ACTIVATIONS:
            raise ConfigError(f"hidden_act {self.hidden_act!r} is not one of "
                              f"{', '.join(SUPPORTED_ACTIVATIONS)}")
        for name in ("hidden_dropout_prob", "attention_probs_dropout_prob", "initializer_range"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
                raise ConfigError(f"{name} must be a number in [0, 1), got {value!r}")
        if not isinstance(self.extra.get(CAUSAL_KEY, False), bool):  # "true" read as false
            raise ConfigError(f'"{CAUSAL_KEY}" must be true or false, got '
                              f"{self.extra[CAUSAL_KEY]!r}")

    @property
    def head_size(self):
        return self.hidden_size // self.num_attention_heads

    @classmethod
    def named(cls, size, vocab_size=30522, **overrides):
        """The paper's / compact release's named sizes: tiny, mini, small, medium, base, large."""
        if size not in NAMED_SIZES:
            raise ConfigError(f"unknown model size {size!r}; choose one of {', '.join(NAMED_SIZES)}")
        layers, hidden, heads = NAMED_SIZES[size]
        fields = dict(vocab_size=vocab_size, hidden_size=hidden, num_hidden_layers=layers,
                      num_attention_heads=heads, intermediate_size=4 * hidden, type_vocab_size=2)
        fields.update(overrides)
        return cls(**fields)

    @classmethod
    def from_dict(cls, values, source="BertConfig"):
        """Builds a config from a dict such as a `bert_config.json`; errors name `source`.

        Every key of `REQUIRED_FIELDS` must be present. An unknown key that is
        nearly a field's name is refused as a misspelling (it would otherwise
        be ignored and the default trained); other unknown keys go to `extra`.

        >>> fields = BertConfig.named("tiny", vocab_size=9).to_dict()
        >>> del fields["num_hidden_layers"]
        >>> BertConfig.from_dict(fields, "my.json")
        Traceback (most recent call last):
        ...
        bert_tf.config.ConfigError: my.json: missing required key 'num_hidden_layers'
        >>> BertConfig.from_dict(dict(fields, num_hidden_layer=2), "my.json")
        ... # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        bert_tf.config.ConfigError: my.json: unknown key 'num_hidden_layer'; did you mean ...?
        """
        if not isinstance(values, dict):
            raise ConfigError(f"{source}: expected a mapping of config keys, got "
                              f"{type(values).__name__}")
        known = [f.name for f in dataclasses.fields(cls) if f.name != "extra"]
        for key in values:
            if key in known or key in RELEASED_EXTRA_KEYS:
                continue
            close = difflib.get_close_matches(key.lower(), known, n=1, cutoff=_MISSPELLING_CUTOFF)
            if close:
                raise ConfigError(f"{source}: unknown key {key!r}; did you mean {close[0]!r}?")
        missing = [name for name in REQUIRED_FIELDS if name not in values]
        if missing:
            raise ConfigError(f"{source}: missing required key{'s' if len(missing) > 1 else ''} "
                              + ", ".join(repr(name) for name in missing))
        kwargs = {k: v for k, v in values.items() if k in known}
        extra = copy.deepcopy({k: v for k, v in values.items() if k not in known})
        try:
            return cls(**kwargs, extra=extra)
        except ConfigError as e:
            raise ConfigError(f"{source}: {e}") from None

    @classmethod
    def from_json_file(cls, path, huggingface=None):
        """Reads an original `bert_config.json` or a HuggingFace `config.json`; errors name it.

        Args:
            path: the file.
            huggingface: whether it is HuggingFace's; None: a `config.json`
                holding a key only HuggingFace writes (`model_type`,
                `architectures`, `transformers_version`) is (ours are
                `bert_config.json`, and keep such keys of a HuggingFace model
                they were converted from).
                The two read differently: HuggingFace's "gelu" is the exact
                GELU, the original's the tanh approximation.
        """
        if os.path.isdir(path):
            raise ConfigError(f"{path}: a folder, not a config file; name the one in it "
                              "(bert_config.json)")
        if not os.path.isfile(path):
            raise ConfigError(f"{path}: config file not found")
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except UnicodeDecodeError as e:
            raise ConfigError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start}); is it "
                              "a JSON config?") from None
        try:
            values = json.loads(text)
        except json.JSONDecodeError as e:
            raise ConfigError(f"{path}: not valid JSON ({e})") from e
        if not isinstance(values, dict):
            raise ConfigError(f"{path}: expected a JSON object, got {type(values).__name__}")
        _refuse_keras_object(values, path)
        if huggingface is None:
            huggingface = os.path.basename(path) == "config.json" and any(
                key in values for key in _HF_MARKS)
        if huggingface:
            return cls.from_hf_dict(values, source=path)
        return cls.from_dict(values, source=path)

    @classmethod
    def from_hf_dict(cls, values, source="HuggingFace config"):
        """Reads a HuggingFace `config.json` of a BertModel.

        Activation names are translated. The keys of `REQUIRED_FIELDS` must be
        there, as in a `bert_config.json` (`save_pretrained` writes them all):
        HuggingFace would give a missing one its default (12 heads, say), and
        a file without them is likely not a BERT config at all.
        """
        if values.get("model_type", "bert") != "bert":
            raise ConfigError(f"{source}: model_type {values['model_type']!r} is not BERT; "
                              "bert_tf reads BERT models only")
        values = dict(values)
        if "hidden_act" in values:  # else refused as missing, by `from_dict`
            act = values["hidden_act"]
            if act not in _HF_ACTIVATIONS:
                raise ConfigError(f"{source}: unsupported hidden_act {act!r}")
            values["hidden_act"] = _HF_ACTIVATIONS[act]
        # Settings our encoder fixes: refuse rather than compute something else.
        if values.get("layer_norm_eps", 1e-12) != 1e-12:
            raise ConfigError(f"{source}: layer_norm_eps {values['layer_norm_eps']} "
                              "is not BERT's 1e-12")
        if values.get("position_embedding_type", "absolute") != "absolute":
            raise ConfigError(f"{source}: position_embedding_type "
                              f"{values['position_embedding_type']!r} is not 'absolute'")
        if values.get("add_cross_attention"):
            raise ConfigError(f"{source}: add_cross_attention: an encoder-decoder's decoder, "
                              "which attends to another model's outputs; bert_tf builds "
                              "encoders only")
        if values.get("is_decoder"):  # HuggingFace's causal self-attention is ours
            values[CAUSAL_KEY] = True
        return cls.from_dict(values, source)

    def to_dict(self):
        """The fields as a `bert_config.json` holds them, unknown keys (`extra`) included."""
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                  if f.name != "extra"}
        values.update(copy.deepcopy(self.extra))
        return values

    def to_json_string(self):
        """`to_dict` as `bert_config.json`'s text: sorted keys, indented, a final newline."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    def to_json_file(self, path):
        """Writes `to_json_string` to `path` whole (`atomic_files.write_text`)."""
        write_text(path, self.to_json_string())
