"""The original command line: `python run_pretraining.py --input_file=... ...`."""
from bert_tf.scripts.run_pretraining import console_main
if __name__ == "__main__":
    console_main()
