"""The original command line: `python run_classifier.py --task_name=MRPC ...`."""
from bert_tf.launch import launch

if __name__ == "__main__":
    launch("run_classifier")
