r"""Exports a checkpoint as a SavedModel that takes raw text (see docs/SERVING.md).

    python export_savedmodel.py --kind=classifier --model_dir=/tmp/mrpc_output \
      --export_dir=/tmp/mrpc_served --max_seq_length=128

`--model_dir` is a folder written by our runners or an original release
(bert_model.ckpt + bert_config.json + vocab.txt, and labels.txt for a
classifier or NER tagger), a checkpoint prefix in one, or a HuggingFace
safetensors folder. Kinds: `encoder` (features), `masked_lm` (top-k tokens
for each [MASK]; needs the pretraining heads), `classifier`
(run_classifier.py), `span_qa` (run_squad.py: question + context ->
answer; pass the --max_seq_length and SQuAD flags it was trained with) and
`ner` (run_ner.py --mode=fine_tune: text -> entities with character
offsets) and `multiple_choice` (run_swag.py: a context and its endings ->
which ending follows).
The export holds the vocabulary, casing, sequence length and labels, so
clients pass only text. Flags left out take the values the model was
trained with, from the `run.json` our runners write beside it
(`--do_lower_case`, `--max_seq_length`, and for span_qa `--doc_stride`,
`--max_query_length` and `--version_2_with_negative`); without one, the
casing is the vocabulary's (capitals in it: a cased model).
"""

from absl import flags, logging

from bert_tf import serving
from bert_tf.scripts import cli
from bert_tf.scripts.trained_settings import settings

FLAGS = flags.FLAGS
SPAN_FLAGS = ("doc_stride", "max_query_length", "n_best_size", "max_answer_length",
              "version_2_with_negative", "null_score_diff_threshold")
# What run.json records and an export should match (span_qa: also its windows).
TRAINED_FLAGS = ("do_lower_case", "max_seq_length")
TRAINED_SPAN_FLAGS = ("doc_stride", "max_query_length", "version_2_with_negative")
flags.DEFINE_enum("kind", None, sorted(serving.KINDS), "What the export answers.")
flags.DEFINE_string("model_dir", None, "Checkpoint folder (or prefix) to export.")
flags.DEFINE_string("export_dir", None, "Local folder to write the SavedModel to (a "
                    "SavedModel there, and nothing else, is replaced).")
flags.DEFINE_string("vocab_file", None, "Vocabulary (default: vocab.txt of --model_dir).")
flags.DEFINE_integer("max_seq_length", 128, "Length texts are packed and truncated to "
                     "(default: as trained, else 128).", lower_bound=3)
flags.DEFINE_bool("do_lower_case", None, "Lower-case the input (default: as trained, else "
                  "the vocabulary's casing).")
flags.DEFINE_integer("top_k", 5, "Tokens returned for each [MASK] (masked_lm).", lower_bound=1)
flags.DEFINE_integer("doc_stride", serving.SpanOptions.doc_stride,
                     "span_qa: pieces between context window starts (default: as trained, "
                     "else 128).", lower_bound=1)
flags.DEFINE_integer("max_query_length", serving.SpanOptions.max_query_length,
                     "span_qa: question pieces kept (default: as trained, else 64).",
                     lower_bound=1)
flags.DEFINE_integer("n_best_size", serving.SpanOptions.n_best_size,
                     "span_qa: best starts and ends paired per window.", lower_bound=1)
flags.DEFINE_integer("max_answer_length", serving.SpanOptions.max_answer_length,
                     "span_qa: longest answer, in pieces.", lower_bound=1)
flags.DEFINE_bool("version_2_with_negative", serving.SpanOptions.version_2_with_negative,
                  "span_qa: SQuAD 2.0 null answers (default: as trained, else false).")
flags.DEFINE_float("null_score_diff_threshold", serving.SpanOptions.null_score_diff_threshold,
                   "span_qa: answer nothing when the null score beats the best span by more.")
flags.DEFINE_bool("jit_compile", False, "XLA-compile the model inside the export: faster calls "
                  "once each batch size and 16-token length bucket has compiled (about a "
                  "second each, the first time); TF Serving needs "
                  "--xla_cpu_compilation_enabled for it.")


def run():
    """Writes the SavedModel the flags ask for."""
    if FLAGS.kind != "masked_lm":
        cli.refuse_unused_flags(("top_k",), "with --kind=masked_lm")
    if FLAGS.kind != "span_qa":
        cli.refuse_unused_flags(SPAN_FLAGS, "with --kind=span_qa")
    cli.check_export_dir_flag(FLAGS.export_dir)
    names = TRAINED_FLAGS + (TRAINED_SPAN_FLAGS if FLAGS.kind == "span_qa" else ())
    chosen = settings(FLAGS, FLAGS.model_dir, names, FLAGS.vocab_file, kind=FLAGS.kind)
    span_options = {name: chosen.get(name, FLAGS[name].value) for name in SPAN_FLAGS}
    for name in SPAN_FLAGS if FLAGS.kind == "span_qa" else ():
        if name not in names and not FLAGS[name].present:  # run.json records no choice of span
            logging.info("--%s=%s, the default (run.json does not say what the run predicted "
                         "with)", name, span_options[name])
    serving.export(FLAGS.kind, FLAGS.model_dir, FLAGS.export_dir,
                   vocab_file=FLAGS.vocab_file, max_seq_length=chosen["max_seq_length"],
                   do_lower_case=chosen["do_lower_case"], top_k=FLAGS.top_k,
                   span_options=span_options, jit_compile=FLAGS.jit_compile)
    logging.info("wrote the %s SavedModel to %s", FLAGS.kind, FLAGS.export_dir)


def console_main():
    cli.run_main(run, "export_savedmodel", required=["kind", "model_dir", "export_dir"])


if __name__ == "__main__":
    console_main()
