"""Scores SQuAD predictions the official way: `python -m bert_tf.evaluate_squad DATA PREDS`.

    python -m bert_tf.evaluate_squad dev-v1.1.json predictions.json
    {"exact_match": ..., "f1": ...}
    python -m bert_tf.evaluate_squad dev-v2.0.json.gz predictions.json \\
        --na-prob-file null_odds.json
    {"exact": ..., "f1": ..., "total": ..., "HasAns_exact": ..., ...}

The data file (plain or .gz) decides the rules: SQuAD 2.0 when its
"version" says 2 or a question carries "is_impossible", SQuAD 1.1
otherwise. The output is the JSON the official scripts print (v1.1 on one
line, v2.0 indented), or written to `--out-file`.
"""

import argparse
import json

from bert_tf.atomic_files import write_text
from bert_tf.tasks import squad_data
from bert_tf.tasks import squad_scoring


def gold_questions(content):
    """[(question id, gold answer texts)] of a parsed SQuAD file, in file order."""
    return [(qa["id"], [answer["text"] for answer in qa["answers"]])
            for article in content["data"] for paragraph in article["paragraphs"]
            for qa in paragraph["qas"]]


def is_version_2(content):
    """Whether a parsed SQuAD file is 2.0 (its version, or any `is_impossible`).

    >>> is_version_2({"version": "v2.0", "data": []})
    True
    >>> is_version_2({"version": "1.1", "data": [{"paragraphs": [{"qas": [{"id": "q"}]}]}]})
    False
    """
    if str(content.get("version", "")).lstrip("v").startswith("2"):
        return True
    return any("is_impossible" in qa for article in content["data"]
               for paragraph in article["paragraphs"] for qa in paragraph["qas"])


def _load_mapping(path, what):
    """A JSON object {question id: value} from `path`; errors name the file."""
    try:
        with open(path, encoding="utf-8") as f:
            mapping = json.load(f)
    except json.JSONDecodeError as error:
        raise squad_data.SquadFormatError(f"{path}: not valid JSON: {error}") from None
    if not isinstance(mapping, dict):
        raise squad_data.SquadFormatError(f"{path}: expected a JSON object of {what}")
    return mapping


def evaluate(data_file, prediction_file, na_prob_file=None, na_prob_thresh=1.0):
    """The official report for one predictions file (a dict, in the official key order)."""
    content = squad_data.load_squad_json(data_file)
    try:
        questions = gold_questions(content)
    except (KeyError, TypeError) as error:
        raise squad_data.SquadFormatError(
            f"{data_file}: not the SQuAD layout (missing {error})") from None
    predictions = _load_mapping(prediction_file, "question id -> answer text")
    if not is_version_2(content):
        return squad_scoring.score_v1(questions, predictions)
    na_probs = _load_mapping(na_prob_file, "question id -> null odds") if na_prob_file \
        else None
    return squad_scoring.score_v2(questions, predictions, na_probs, na_prob_thresh)


def main(argv=None):
    """The command line (`argv` without the program name; default: `sys.argv[1:]`)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_file", help="SQuAD JSON with gold answers (plain or .gz)")
    parser.add_argument("pred_file", help="predictions JSON {question id: text}")
    parser.add_argument("--na-prob-file", "-n", help="SQuAD 2.0 null odds JSON")
    parser.add_argument("--na-prob-thresh", "-t", type=float, default=1.0,
                        help='predict "no answer" where the null odds exceed this')
    parser.add_argument("--out-file", "-o", help="write the JSON here instead of printing")
    args = parser.parse_args(argv)
    try:
        report = evaluate(args.data_file, args.pred_file, args.na_prob_file,
                          args.na_prob_thresh)
        if args.out_file:
            write_text(args.out_file, json.dumps(report))
    except (ValueError, OSError) as error:
        parser.exit(1, f"error: {error}\n")  # 2 is for a wrong command line
    if not args.out_file:
        print(json.dumps(report, indent=2 if "total" in report else None))


if __name__ == "__main__":
    main()
