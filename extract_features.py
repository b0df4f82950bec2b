"""The original command line: `python extract_features.py --input_file=... ...`."""
from bert_tf.scripts.extract_features import console_main

if __name__ == "__main__":
    console_main()
