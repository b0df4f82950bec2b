"""Command line: `python classify_text.py --model_dir=... --text=...`."""
from bert_tf.scripts.classify_text import console_main

if __name__ == "__main__":
    console_main()
