"""Learns a WordPiece vocabulary: python learn_vocab.py --input_file=... --output_file=vocab.txt."""
from bert_tf.scripts.learn_vocab import console_main
if __name__ == "__main__":
    console_main()
