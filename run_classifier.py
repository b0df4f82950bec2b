"""The original command line: `python run_classifier.py --task_name=MRPC ...`."""
from bert_tf.scripts.run_classifier import console_main

if __name__ == "__main__":
    console_main()
