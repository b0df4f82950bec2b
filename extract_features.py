"""The original command line: `python extract_features.py --input_file=... ...`."""
from bert_tf.launch import launch

if __name__ == "__main__":
    launch("extract_features")
