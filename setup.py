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
            "bert_classify_text=bert_tf.scripts.classify_text:console_main",
            "bert_create_pretraining_data="
            "bert_tf.scripts.create_pretraining_data:console_main",
            "bert_export_savedmodel=bert_tf.scripts.export_savedmodel:console_main",
            "bert_extract_features=bert_tf.scripts.extract_features:console_main",
            "bert_evaluate_squad=bert_tf.evaluate_squad:main",
            "bert_learn_vocab=bert_tf.scripts.learn_vocab:console_main",
            "bert_run_classifier=bert_tf.scripts.run_classifier:console_main",
            "bert_run_ner=bert_tf.scripts.run_ner:console_main",
            "bert_run_pretraining=bert_tf.scripts.run_pretraining:console_main",
            "bert_run_squad=bert_tf.scripts.run_squad:console_main",
            "bert_run_swag=bert_tf.scripts.run_swag:console_main",
        ],
    },
)
