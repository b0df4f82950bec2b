"""Command line: `python run_swag.py --data_dir=$SWAG_DIR ...`."""
from bert_tf.launch import launch

if __name__ == "__main__":
    launch("run_swag")
