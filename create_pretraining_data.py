"""The original's command line: python create_pretraining_data.py --input_file=... ."""
from bert_tf.launch import launch

if __name__ == "__main__":  # not on fast mode's workers' re-import of this file
    launch("create_pretraining_data")
