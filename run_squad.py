"""The original command line: `python run_squad.py --train_file=... --predict_file=...`."""
from bert_tf.scripts.run_squad import console_main

if __name__ == "__main__":
    console_main()
