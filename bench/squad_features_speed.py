"""SQuAD feature creation speed: ours against HF transformers, in one run.

Builds the evaluation windows (max_seq_length 384, doc_stride 128,
max_query_length 64, uncased vocabulary) of a whole dev set with
`bert_tf.tasks.squad_features.convert_examples_to_features` and with
`transformers.data.processors.squad.squad_convert_examples_to_features`
(slow `BertTokenizer`, `threads=1`, which runs its one worker in a child
process: only wall time is comparable). Calls alternate (round robin).

Rows: HF; ours with every question's context tokenized again (each example
gets its own copy of the words, so only the per-word cache helps); ours as
used (a paragraph's pieces shared by its questions). All rows build the same
windows (checked: counts equal; the parity bench compares them in full).

    python bench/squad_features_speed.py [--set dev-v1.1] [--iterations 1]
"""

import argparse
import os
import pathlib
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TQDM_DISABLE", "1")
REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import dataclasses  # noqa: E402
import json  # noqa: E402

import peers  # noqa: E402
with peers.needed():
    import transformers
    from transformers.data.processors import squad as hf_squad

import round_robin  # noqa: E402
import shared_data  # noqa: E402
import squad_parity  # noqa: E402
import timing_table  # noqa: E402
from bert_tf.tasks import squad_data, squad_features  # noqa: E402
from bert_tf.tokenization import FullTokenizer  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default="dev-v1.1")
    parser.add_argument("--iterations", type=int, default=1)
    args = parser.parse_args()
    shared_data.require(squad_parity.VOCAB, squad_parity.squad_file(args.set))
    transformers.logging.set_verbosity_error()
    content, version_2 = squad_parity.squad_subset(args.set)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "squad.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(content, f)
        examples = squad_data.read_squad_examples(path, False, version_2)
        processor = hf_squad.SquadV2Processor() if version_2 else hf_squad.SquadV1Processor()
        hf_examples = processor.get_dev_examples(folder, "squad.json")
    copied = [dataclasses.replace(e, doc_tokens=list(e.doc_tokens)) for e in examples]
    tokenizer = FullTokenizer(str(squad_parity.VOCAB), do_lower_case=True)
    hf_tokenizer = transformers.BertTokenizer(str(squad_parity.VOCAB), do_lower_case=True)
    runners = {
        "HF squad_convert_examples_to_features (threads=1)":
            lambda: hf_squad.squad_convert_examples_to_features(
                hf_examples, hf_tokenizer, is_training=False, threads=1, tqdm_enabled=False,
                **squad_parity.SIZES),
        "ours, context tokenized per question":
            lambda: squad_features.convert_examples_to_features(
                copied, tokenizer, is_training=False, **squad_parity.SIZES),
        "ours": lambda: squad_features.convert_examples_to_features(
            examples, tokenizer, is_training=False, **squad_parity.SIZES),
    }
    times, outputs = round_robin.time_round_robin(runners, warmup=0,
                                                  iterations=args.iterations)
    counts = {len(features) for features in outputs.values()}
    assert len(counts) == 1, f"window counts differ: {counts}"
    hf_seconds = timing_table.summarize(times[next(iter(runners))], 1).median
    print(f"{args.set}: {len(examples)} questions, {counts.pop()} windows; "
          f"load average {timing_table.load_average()}")
    print("| implementation | seconds (median) | questions/s | vs HF |")
    print("|---|---|---|---|")
    for name, samples in times.items():
        seconds = timing_table.summarize(samples, 1).median
        print(f"| {name} | {seconds:.2f} | {len(examples) / seconds:,.0f} "
              f"| {hf_seconds / seconds:.1f}x |")


if __name__ == "__main__":
    main()
