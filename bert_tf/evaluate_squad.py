"""Scores SQuAD predictions the official way: `python -m bert_tf.evaluate_squad DATA PREDS`.

    python -m bert_tf.evaluate_squad dev-v1.1.json predictions.json
    {"exact_match": ..., "f1": ...}
    python -m bert_tf.evaluate_squad dev-v2.0.json.gz predictions.json \\
        --na-prob-file null_odds.json
    {"exact": ..., "f1": ..., "total": ..., "HasAns_exact": ..., ...}

The data file (plain or .gz) decides the rules: SQuAD 2.0 when its
"version" says 2 or a question carries "is_impossible", SQuAD 1.1
otherwise. The output is the JSON the official scripts print (v1.1 on one
line, v2.0 indented), or written to `--out-file` (never over a file it
reads: exit code 2). Input that cannot be scored (see `evaluate`) is one
line naming the file and the question, exit code 1.
"""

import argparse
import json

from bert_tf.atomic_files import write_text
from bert_tf.errors import UsageError
from bert_tf.script_output import StdoutClosed, end_with_stdout_closed, print_output
from bert_tf.output_paths import check_outputs_apart
from bert_tf.tasks import squad_data
from bert_tf.tasks import squad_scoring


def gold_questions(content, path):
    """[(question id, gold answer texts or None without "answers")] of a parsed SQuAD
    file, in file order, its layout checked as every reader checks it (errors name `path`)."""
    return [(qa["id"], squad_data.gold_answers(qa))
            for _, qas in squad_data.squad_paragraphs(path, content) for qa in qas]


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


def _load_mapping(path, what, value_types, described):
    """A JSON object {question id: value} from `path`, every value one of `value_types`.

    JSON's true and false are never numbers. Errors name the file, and the
    question of a wrong value (`what`, `described`: for the message, e.g.
    "null odds", "a number").
    """
    try:
        with open(path, encoding="utf-8") as f:
            mapping = json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise squad_data.SquadFormatError(f"{path}: not valid JSON: {error}") from None
    if not isinstance(mapping, dict):
        raise squad_data.SquadFormatError(
            f"{path}: expected a JSON object {{question id: {what}}}")
    if isinstance(mapping.get("data"), list):
        raise squad_data.SquadFormatError(
            f"{path}: a SQuAD data file, not {what} by question id (the data file comes "
            "first, then the predictions)")
    for qas_id, value in mapping.items():
        if not isinstance(value, value_types) or isinstance(value, bool):
            found = repr(value)
            raise squad_data.SquadFormatError(
                f"{path}: question {qas_id}: the {what} must be {described}, found "
                f"{found if len(found) <= 80 else found[:77] + '...'}")
    return mapping


def evaluate(data_file, prediction_file, na_prob_file=None, na_prob_thresh=1.0):
    """The official report for one predictions file (a dict, in the official key order).

    Raises:
        SquadFormatError: naming the file: a data file of the wrong layout or
            with questions that cannot be scored (`squad_scoring.check_gold`),
            a predictions file whose values are not strings, null odds that
            are not numbers or miss a predicted question, and for SQuAD 2.0
            predictions of no question of the data file (the official v2.0
            script divides by zero there).
    """
    content = squad_data.load_squad_json(data_file)
    questions = gold_questions(content, data_file)
    version_2 = is_version_2(content)
    squad_scoring.check_gold(data_file, questions, version_2)
    predictions = _load_mapping(prediction_file, "answer text", str, "a string")
    if not version_2:
        return squad_scoring.score_v1(questions, predictions)
    predicted = [qas_id for qas_id, _ in questions if qas_id in predictions]
    if not predicted:
        raise squad_data.SquadFormatError(
            f"{prediction_file}: no prediction for any question of {data_file}")
    na_probs = None
    if na_prob_file:
        na_probs = _load_mapping(na_prob_file, "null odds", (int, float), "a number")
        unmatched = [qas_id for qas_id in predicted if qas_id not in na_probs]
        if unmatched:
            raise squad_data.SquadFormatError(
                f"{na_prob_file}: no null odds for question {unmatched[0]}")
    return squad_scoring.score_v2(questions, predictions, na_probs, na_prob_thresh)


def main(argv=None):
    """The command line (`argv` without the program name; default: `sys.argv[1:]`)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_file", help="SQuAD JSON with gold answers (plain or .gz)")
    parser.add_argument("pred_file", help="predictions JSON {question id: text}")
    parser.add_argument("--na-prob-file", "-n", help="SQuAD 2.0 null odds JSON")
    parser.add_argument("--na-prob-thresh", "-t", type=float, default=1.0,
                        help='predict "no answer" where the null odds exceed this '
                             '(default: 1.0, as the official v2.0 script)')
    parser.add_argument("--out-file", "-o", help="write the JSON here instead of printing")
    args = parser.parse_args(argv)
    if args.out_file:
        read = {"data_file": [args.data_file], "pred_file": [args.pred_file],
                "--na-prob-file": [args.na_prob_file] if args.na_prob_file else []}
        try:
            check_outputs_apart([args.out_file], read, output_flag="--out-file")
        except UsageError as error:
            parser.exit(2, f"error: {error}\n")
    try:
        report = evaluate(args.data_file, args.pred_file, args.na_prob_file,
                          args.na_prob_thresh)
        if args.out_file:
            write_text(args.out_file, json.dumps(report))
    except (ValueError, OSError) as error:
        parser.exit(1, f"error: {error}\n")  # 2 is for a wrong command line
    if not args.out_file:
        try:
            print_output(json.dumps(report, indent=2 if "total" in report else None))
        except StdoutClosed:  # its reader went away (`... | head`): quiet, as the scripts
            end_with_stdout_closed()


if __name__ == "__main__":
    main()
