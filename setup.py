"""Installs the `bert_tf` package and its command-line runners."""

import pathlib

import setuptools

HERE = pathlib.Path(__file__).parent


def _requirements(name):
    lines = (HERE / name).read_text().splitlines()
    return [l.strip() for l in lines if l.strip() and not l.startswith(("#", "-"))]


setuptools.setup(
    name="bert_tf",
    version="0.1.0",
    description="BERT (Devlin et al., 2018) for TensorFlow 2 and Keras 3: pretraining, "
                "fine-tuning, original checkpoints, SavedModel serving.",
    long_description=(HERE / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.10",
    packages=setuptools.find_packages(include=["bert_tf", "bert_tf.*"]),
    install_requires=_requirements("requirements.txt"),
    extras_require={"test": _requirements("requirements-test.txt")},
    entry_points={
        "console_scripts": [
            "bert_classify_text=bert_tf.launch:classify_text",
            "bert_create_pretraining_data=bert_tf.launch:create_pretraining_data",
            "bert_export_savedmodel=bert_tf.launch:export_savedmodel",
            "bert_extract_features=bert_tf.launch:extract_features",
            "bert_evaluate_squad=bert_tf.evaluate_squad:main",
            "bert_learn_vocab=bert_tf.launch:learn_vocab",
            "bert_run_classifier=bert_tf.launch:run_classifier",
            "bert_run_ner=bert_tf.launch:run_ner",
            "bert_run_pretraining=bert_tf.launch:run_pretraining",
            "bert_run_squad=bert_tf.launch:run_squad",
            "bert_run_swag=bert_tf.launch:run_swag",
        ],
    },
)
