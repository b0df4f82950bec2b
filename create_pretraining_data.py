"""The original's command line: python create_pretraining_data.py --input_file=... ."""
if __name__ == "__main__":  # not on fast mode's workers' re-import of this file
    from bert_tf.scripts.create_pretraining_data import console_main
    console_main()
