"""The command line: `python run_ner.py --data_dir=... --init_checkpoint=... --output_dir=...`."""
from bert_tf.scripts.run_ner import console_main

if __name__ == "__main__":
    console_main()
