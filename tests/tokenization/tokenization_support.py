"""Helpers of the tokenization tests (and bench/tokenizer_parity.py): HuggingFace's
algorithm, hard inputs, graph ids."""

import unicodedata

# The vocabulary of the original release's tokenization test.
ORIGINAL_TEST_VOCAB = ["[UNK]", "[CLS]", "[SEP]", "want", "##want", "##ed", "wa", "un",
                       "runn", "##ing", ","]

# Hand-made hard cases: Unicode edge cases of every rule, scripts, lengths.
ADVERSARIAL = [
    "", " ", "\t\n\r ", "ß straße STRASSE ẞ", "ﬁne ﬂow ﬀﬃ ﬆ", "Ⅳ ⅳ Ⅻ ① ㈠ ㍿",
    "a\x00b", "\x00", "NUL\x00in\x00middle", "\x01\x02\x7f\x85\x1c controls",
    "ΣΙΣΥΦΟΣ ΟΔΟΣ, Σ. ΑΣ'Σ ΑΣ.Σ σς Σσ AΣ\u0301 AΣ\u200bB Σ\u0345",
    "İstanbul İ I ı DİYARBAKIR i\u0307", "ǅ ǈ ǋ titlecase ŉ ǰ ΐ Ω Å K",
    "emoji 😀👍🏽 👨‍👩‍👧 flags 🇫🇷 ☕️", "e\u0301 é café CAFÉ Ångström",
    "a\u0300\u0301\u0302b", "\u0301 leading mark \u0301\u0301",
    "zero\u200bwidth\u200djoiner\u200cnon", "\ufeffBOM", "soft\u00adhyphen",
    "repl\ufffdacement", "𠀀𠀁 CJK ext B 𪜀 𫝀 𫠠 𬺰 丽 \U0002F800",
    "中文字符测试，标点。", "日本語のテキスト カタカナ ｶﾀｶﾅ", "한국어 텍스트 ᄀᄁ",
    "ภาษาไทย ไม่มีช่องว่าง", "العربية النص، مع علامات؛", "עברית עם ניקוד: שָׁלוֹם",
    "Ελληνικά ΑΘΗΝΑ", "Русский ТЕКСТ ёЁ", "mixed中文English123ελληνικά",
    "x" * 199, "y" * 200, "z" * 201, "supercalifragilistic" * 15, "é" * 201,
    "a" + "\u0301" * 300, "tab\tsep\nnewline\r\nCRLF", "\u00a0nbsp\u3000ideographic\u2003em",
    "line\u2028sep\u2029para", "¿Qué? ¡Sí! «quotes» „German“ — dash – en …",
    "$100 + 5^2 = `code` ~tilde | pipe \\ back", "©®™ €£¥ ±×÷ ° §¶",
    "Ａ full-width ＡＢＣ １２３ ！", "[MASK] [CLS] [SEP] [PAD] [UNK] [unused0] [mask]",
    "hello[MASK]world", "\U000e0001 tag \U000e0041", "\u1fef\u2260\u226e",
    "don't can't it's", "U.S.A. e.g. 3.14 1,000",
]


def hf_pieces(hf, text):
    """HuggingFace's port of the original algorithm: its basic + WordPiece steps.

    (`hf.tokenize()` itself lower-cases one character at a time, losing final
    sigma, and keeps its special tokens whole.)
    """
    return [piece for word in hf.basic_tokenizer.tokenize(text)
            for piece in hf.wordpiece_tokenizer.tokenize(word)]


def hf_deviates(text):
    """Whether HuggingFace's documented deviations from the original apply.

    It deletes all C* characters (the original: Cc and Cf only) and
    NFC-normalises the text first.
    """
    return (unicodedata.normalize("NFC", text) != text
            or any(unicodedata.category(c) in ("Co", "Cn", "Cs") for c in text))


def graph_ids(layer, texts, batch_size=1000):
    """Ids of `texts` from a `BertTokenizerLayer`, in a tf.function, as lists."""
    import tensorflow as tf
    tokenize = tf.function(lambda batch: layer(batch))
    ids = []
    for start in range(0, len(texts), batch_size):
        ids.extend(tokenize(tf.constant(texts[start:start + batch_size])).to_list())
    return ids
