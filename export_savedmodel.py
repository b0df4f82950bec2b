"""Command line: `python export_savedmodel.py --kind=... --model_dir=... --export_dir=...`."""
from bert_tf.launch import launch

if __name__ == "__main__":
    launch("export_savedmodel")
