#!/usr/bin/env bash
# The main job end to end, on the public-domain books in demo/data:
#   1. learn a WordPiece vocabulary from the corpus,
#   2. create pretraining data (sentence pairs, NSP labels, 15% masking),
#   3. pretrain a BERT-Tiny (L2/H128/A2) with masked LM + next sentence,
#   4. fine-tune it to tell which author wrote a sentence, ending with a
#      self-contained SavedModel export,
#   5. classify the sentence given as the first argument with that export.
# Usage: demo/run_demo.sh ["a sentence to classify"]   (make demo SENTENCE="...")
# DEMO_OUT (default demo_output), DEMO_PRETRAIN_STEPS (default 3000),
# DEMO_PRETRAIN_EVAL_STEPS (default 20 batches) and DEMO_FINETUNE_EPOCHS (default 10)
# change where it writes, how long it trains and how much pretraining's eval reads.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
OUT=${DEMO_OUT:-demo_output}
STEPS=${DEMO_PRETRAIN_STEPS:-3000}
EVAL_STEPS=${DEMO_PRETRAIN_EVAL_STEPS:-20}
EPOCHS=${DEMO_FINETUNE_EPOCHS:-10}
SENTENCE=${1:-"And the moon shone on the hills and the quiet fields of the shepherds."}
export PYTHONUNBUFFERED=1
rm -rf "$OUT" && mkdir -p "$OUT"
start=$(date +%s)

echo "== 1/5 learn_vocab.py: a WordPiece vocabulary of demo/data/corpus.txt"
$PY learn_vocab.py --input_file=demo/data/corpus.txt --output_file="$OUT/vocab.txt" \
  --vocab_size=8000
# The model's vocab_size is what the corpus gave (every word seen 10+ times).
sed "s/\"vocab_size\": [0-9]*/\"vocab_size\": $(wc -l < "$OUT/vocab.txt")/" \
  demo/bert_config.json > "$OUT/bert_config.json"

echo "== 2/5 create_pretraining_data.py: demo/data/corpus.txt -> $OUT/pretrain-*.tfrecord"
$PY create_pretraining_data.py --input_file=demo/data/corpus.txt \
  --output_file="$OUT/pretrain-0.tfrecord,$OUT/pretrain-1.tfrecord" \
  --vocab_file="$OUT/vocab.txt" --do_lower_case --max_seq_length=64 \
  --max_predictions_per_seq=10 --dupe_factor=5 --num_workers=2

echo "== 3/5 run_pretraining.py: BERT-Tiny, $STEPS steps of batch 32"
$PY run_pretraining.py --bert_config_file="$OUT/bert_config.json" \
  --input_file="$OUT/pretrain-*.tfrecord" --output_dir="$OUT/pretrained" \
  --vocab_file="$OUT/vocab.txt" --do_train --do_eval --train_batch_size=32 \
  --eval_batch_size=32 --max_seq_length=64 --max_predictions_per_seq=10 \
  --num_train_steps="$STEPS" --num_warmup_steps=$((STEPS / 10)) --learning_rate=1e-3 \
  --save_checkpoints_steps=1000 --steps_per_execution=100 --max_eval_steps="$EVAL_STEPS"
echo "-- pretraining eval_results.txt:"; cat "$OUT/pretrained/eval_results.txt"

echo "== 4/5 run_classifier.py: which author wrote it (6 authors, 900 train sentences, $EPOCHS epochs)"
$PY run_classifier.py --task_name=tsv --data_dir=demo/data/authors \
  --init_checkpoint="$OUT/pretrained/bert_model.ckpt" --output_dir="$OUT/authors" \
  --do_train --do_eval --max_seq_length=64 --train_batch_size=32 --eval_batch_size=32 \
  --learning_rate=5e-4 --num_train_epochs="$EPOCHS" --steps_per_execution=28 \
  --export_dir="$OUT/authors_savedmodel"
echo "-- fine-tuning eval_results.txt (dev: 240 sentences, chance 16.7%):"
cat "$OUT/authors/eval_results.txt"

echo "== 5/5 classify_text.py: the exported SavedModel (tokenizer and labels inside) answers raw text"
$PY classify_text.py --export_dir="$OUT/authors_savedmodel" --text="$SENTENCE"
echo "== demo finished in $(( $(date +%s) - start )) s; everything is in $OUT/"
