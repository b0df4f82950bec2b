"""The original command line: `python run_pretraining.py --input_file=... ...`."""
from bert_tf.launch import launch

if __name__ == "__main__":
    launch("run_pretraining")
