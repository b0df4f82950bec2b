"""The command line: `python run_ner.py --data_dir=... --init_checkpoint=... --output_dir=...`."""
from bert_tf.launch import launch

if __name__ == "__main__":
    launch("run_ner")
