"""Command line: `python run_swag.py --data_dir=$SWAG_DIR ...`."""
from bert_tf.scripts.run_swag import console_main

if __name__ == "__main__":
    console_main()
