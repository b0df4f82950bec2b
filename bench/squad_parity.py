"""SQuAD features and predictions, ours against HuggingFace transformers' port.

Builds the windows of every question with `bert_tf.tasks.squad_features`
and with `transformers.data.processors.squad.squad_convert_examples_to_features`
(slow `BertTokenizer`, uncased vocabulary), and compares per window: tokens,
input ids, token_to_orig_map, token_is_max_context and (training) the
start/end labels. Then it answers every question from the same
deterministic random logits with `bert_tf.tasks.squad_postprocessing` and
with `transformers.data.metrics.squad_metrics.compute_predictions_logits`,
and compares predictions, n-best lists and null odds.

Known departures of the HF port are counted apart, never as matches:
- `hf_tokenizer`: HF's slow tokenizer splits a word of the question or the
  context differently from the original (NFC first, C* characters deleted,
  100-character words, special tokens kept whole); those questions are left
  out of the prediction comparison.
- HF joins a span's pieces with `convert_tokens_to_string`, which keeps a
  leading `##` so that a span starting inside a word never maps back to its
  characters (the original strips every `##`). HF is run with the original's
  joining rule; `hf_convert_tokens_to_string` counts where HF's own rule
  changes the answer.
- `hf_null_only`: SQuAD 2.0 questions where no non-null span survives; HF
  answers the placeholder "empty" (the original fails), we answer "".

    python bench/squad_parity.py [--max_questions N] [--sets dev-v1.1,dev-v2.0,train-v1.1]
"""

import argparse
import collections
import gzip
import json
import os
import pathlib
import sys
import tempfile
import time

from shared_data import SHARED_DATA, require

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TQDM_DISABLE", "1")
REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import peers  # noqa: E402
with peers.needed():
    import transformers
    from transformers.data.metrics import squad_metrics
    from transformers.data.processors import squad as hf_squad

from bert_tf.tasks import squad_data, squad_features, squad_postprocessing  # noqa: E402
from bert_tf.tokenization import FullTokenizer  # noqa: E402

VOCAB = SHARED_DATA / "vocab" / "bert-base-uncased-vocab.txt"
SIZES = dict(max_seq_length=384, doc_stride=128, max_query_length=64)


class OriginalJoinBertTokenizer(transformers.BertTokenizer):
    """HF's slow tokenizer, joining pieces the original's way (every `##` removed)."""

    def convert_tokens_to_string(self, tokens):
        return " ".join(tokens).replace(" ##", "").replace("##", "").strip()


def squad_file(name):
    """The SQuAD file `name` (dev-v1.1, dev-v2.0, train-v1.1) in the shared data."""
    return SHARED_DATA / "squad" / f"{name}.json.gz"


def squad_subset(name, max_questions=None):
    """(parsed JSON of `squad_file(name)` cut to its first questions, version 2?)."""
    with gzip.open(squad_file(name), "rt", encoding="utf-8") as f:
        content = json.load(f)
    if max_questions is not None:
        articles, left = [], max_questions
        for article in content["data"]:
            paragraphs = []
            for paragraph in article["paragraphs"]:
                if left > 0:
                    paragraphs.append(dict(paragraph, qas=paragraph["qas"][:left]))
                    left -= len(paragraphs[-1]["qas"])
            if paragraphs:
                articles.append(dict(article, paragraphs=paragraphs))
        content = dict(content, data=articles)
    return content, str(content.get("version", "")).lstrip("v").startswith("2")


class Parity:
    """Ours and HF's features (and predictions) for one SQuAD content."""

    def __init__(self, content, version_2, is_training):
        self.version_2, self.is_training = version_2, is_training
        self.tokenizer = FullTokenizer(str(VOCAB), do_lower_case=True)
        self.hf_tokenizer = OriginalJoinBertTokenizer(str(VOCAB), do_lower_case=True)
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "squad.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(content, f)
            start = time.perf_counter()
            self.examples = squad_data.read_squad_examples(path, is_training, version_2)
            self.features = squad_features.convert_examples_to_features(
                self.examples, self.tokenizer, is_training=is_training, **SIZES)
            self.seconds_ours = time.perf_counter() - start
            processor = hf_squad.SquadV2Processor() if version_2 else hf_squad.SquadV1Processor()
            start = time.perf_counter()
            self.hf_examples = processor.get_train_examples(folder, "squad.json") \
                if is_training else processor.get_dev_examples(folder, "squad.json")
            self.hf_features = hf_squad.squad_convert_examples_to_features(
                self.hf_examples, self.hf_tokenizer, is_training=is_training, threads=1,
                tqdm_enabled=False, **SIZES)
            self.seconds_hf = time.perf_counter() - start

    def tokenizers_differ(self, example):
        """Whether HF's slow tokenizer splits any word of this example differently."""
        texts = [example.question_text, *dict.fromkeys(example.doc_tokens)]
        return any(self.tokenizer.tokenize(t) != self.hf_tokenizer.tokenize(t) for t in texts)

    def compare_features(self):
        """Counts: questions, windows, matching windows, mismatching questions by kind."""
        theirs = collections.defaultdict(list)
        for feature in self.hf_features:
            theirs[feature.qas_id].append(feature)
        ours = collections.defaultdict(list)
        for feature in self.features:
            ours[self.examples[feature.example_index].qas_id].append(feature)
        counts = collections.Counter()
        self.feature_departures = set()
        for example in self.examples:
            mine, hf = ours[example.qas_id], theirs[example.qas_id]
            counts["questions"] += 1
            counts["windows"] += len(mine)
            if len(mine) == len(hf) and all(_same_window(a, b, self.is_training)
                                            for a, b in zip(mine, hf)):
                counts["matching_windows"] += len(mine)
                continue
            self.feature_departures.add(example.qas_id)
            counts["hf_tokenizer" if self.tokenizers_differ(example) else "unexplained"] += 1
        counts["hf_questions_without_windows"] = len(
            {e.qas_id for e in self.hf_examples} - set(theirs))
        return counts

    def compare_predictions(self, seed=0, context_bonus=2.0):
        """Counts: questions compared, matching predictions / n-best / odds, departures."""
        start_logits, end_logits = deterministic_logits(self.features, seed, context_bonus)
        ours = squad_postprocessing.predict_answers(
            self.examples, self.features, start_logits, end_logits,
            version_2_with_negative=self.version_2)
        counts = collections.Counter()
        theirs = self._hf_predictions(start_logits, end_logits, self.hf_tokenizer)
        plain_tokenizer = transformers.BertTokenizer(str(VOCAB), do_lower_case=True)
        hf_join = self._hf_predictions(start_logits, end_logits, plain_tokenizer)[0]
        for example in self.examples:
            qas_id = example.qas_id
            if qas_id in self.feature_departures:
                continue
            counts["questions"] += 1
            nbest = json.loads(json.dumps(ours[1][qas_id]))
            if self.version_2 and not any(entry["text"] for entry in nbest):
                counts["hf_null_only"] += 1
                counts["matching_null_only"] += _same_null_only(
                    nbest, ours[0][qas_id], theirs[1][qas_id], theirs[0][qas_id]) and \
                    ours[2][qas_id] == theirs[2][qas_id]
                continue
            counts["matching_predictions"] += ours[0][qas_id] == theirs[0][qas_id]
            counts["matching_nbest"] += nbest == theirs[1][qas_id]
            if self.version_2:
                counts["matching_null_odds"] += ours[2][qas_id] == theirs[2][qas_id]
            counts["hf_convert_tokens_to_string"] += hf_join[qas_id] != theirs[0][qas_id]
        return counts

    def _hf_predictions(self, start_logits, end_logits, tokenizer):
        """HF's (predictions, n-best, null odds) with our logits on matching windows."""
        row_of_window = {(f.example_index, f.doc_span_index): row
                         for row, f in enumerate(self.features)}
        window_number = collections.Counter()
        results = []
        for feature in self.hf_features:
            row = row_of_window.get((feature.example_index, window_number[feature.example_index]))
            window_number[feature.example_index] += 1
            if self.examples[feature.example_index].qas_id in self.feature_departures:
                row = None  # windows differ: any logits will do, the question is not compared
            zeros = [0.0] * start_logits.shape[1]
            results.append(hf_squad.SquadResult(
                feature.unique_id, zeros if row is None else start_logits[row].tolist(),
                zeros if row is None else end_logits[row].tolist()))
        with tempfile.TemporaryDirectory() as folder:
            files = [os.path.join(folder, name) for name in ("p.json", "n.json", "o.json")]
            predictions = squad_metrics.compute_predictions_logits(
                self.hf_examples, self.hf_features, results, 20, 30, True, *files,
                False, self.version_2, 0.0, tokenizer)
            with open(files[1], encoding="utf-8") as f:
                nbest = json.load(f)
            odds = {}
            if self.version_2:
                with open(files[2], encoding="utf-8") as f:
                    odds = json.load(f)
        return predictions, nbest, odds


def _same_null_only(nbest, prediction, hf_nbest, hf_prediction):
    """Whether HF's answer to a null-only question is ours plus its "empty" placeholder."""
    null = {key: nbest[0][key] for key in ("text", "start_logit", "end_logit")}
    return (len(nbest) == 1 and prediction == "" and hf_prediction in ("", "empty")
            and [entry["text"] for entry in hf_nbest] == ["empty", ""]
            and {key: hf_nbest[1][key] for key in null} == null)


def _same_window(ours, hf, is_training):
    same = (ours.tokens == hf.tokens and ours.token_to_orig_map == hf.token_to_orig_map
            and ours.token_is_max_context == hf.token_is_max_context
            and ours.input_ids.tolist() == hf.input_ids[:len(ours.input_ids)]
            and not any(hf.input_ids[len(ours.input_ids):]))
    if is_training:
        same = same and (ours.start_position, ours.end_position) == (hf.start_position,
                                                                     hf.end_position)
    return same


def deterministic_logits(features, seed=0, context_bonus=2.0,
                         length=SIZES["max_seq_length"]):
    """float32 [features, length] start and end logits: N(0, 2), plus a bonus on the context.

    Each window gets its own generator (seed, example, window). Without the
    bonus most top-20 starts and ends fall outside short contexts, which
    leaves some SQuAD 2.0 questions with nothing but the null answer.
    """
    start = np.zeros((len(features), length), np.float32)
    end = np.zeros((len(features), length), np.float32)
    for row, feature in enumerate(features):
        rng = np.random.default_rng([seed, feature.example_index, feature.doc_span_index])
        bonus = np.zeros(length)
        bonus[feature.doc_offset:feature.doc_offset + feature.doc_length] = context_bonus
        start[row] = rng.normal(0.0, 2.0, length) + bonus
        end[row] = rng.normal(0.0, 2.0, length) + bonus
    return start, end


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max_questions", type=int, default=None)
    parser.add_argument("--sets", default="dev-v1.1,dev-v2.0")
    args = parser.parse_args()
    require(VOCAB, *map(squad_file, args.sets.split(",")))
    transformers.logging.set_verbosity_error()
    for name in args.sets.split(","):
        content, version_2 = squad_subset(name, args.max_questions)
        parity = Parity(content, version_2, is_training=name.startswith("train"))
        features = parity.compare_features()
        print(f"{name}: features ours {parity.seconds_ours:.1f} s, HF {parity.seconds_hf:.1f} s")
        print(f"  {dict(features)}")
        for bonus in ([] if parity.is_training else [2.0, 0.0]):
            counts = parity.compare_predictions(context_bonus=bonus)
            print(f"  predictions, context bonus {bonus}: {dict(counts)}")


if __name__ == "__main__":
    main()
