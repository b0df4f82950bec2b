"""Command line: `python classify_text.py --model_dir=... --text=...`."""
from bert_tf.launch import launch

if __name__ == "__main__":
    launch("classify_text")
