"""The original command line: `python run_squad.py --train_file=... --predict_file=...`."""
from bert_tf.launch import launch

if __name__ == "__main__":
    launch("run_squad")
