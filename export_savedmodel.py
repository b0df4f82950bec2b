"""Command line: `python export_savedmodel.py --kind=... --model_dir=... --export_dir=...`."""
from bert_tf.scripts.export_savedmodel import console_main

if __name__ == "__main__":
    console_main()
