"""Learns a WordPiece vocabulary: python learn_vocab.py --input_file=... --output_file=vocab.txt."""
from bert_tf.launch import launch

if __name__ == "__main__":
    launch("learn_vocab")
