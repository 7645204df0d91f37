import pytest

from cadlib.models.tokenizer import count_tokens, get_tokenizer, qwen25_tokenizer

# The paper's literal ids (Appendix "Qwen2.5 token identifiers").
literal__ids = [
    ("<", [27]),
    ("</", [522]),
    (">", [29]),
    ("copy", [8560]),
    ("gen", [4370]),
    ("program", [14906]),
    (" lines", [5128]),
    ('="', [428]),
    ("</gen>", [522, 4370, 29]),
    # The paper's appendix lists QUOTE_SLASH = 9685 for '"/>' and SLASH_GT = 2577 for '/>';
    # in the Qwen2.5 vocabulary 9685 is '/>', 13123 is '"/>' and 2577 is 'af' (a misprint).
    ("/>", [9685]),
    ('"/>', [13123]),
]


@pytest.mark.parametrize("literal, ids", literal__ids)
def test_qwen25_reproduces_the_papers_literal_ids(literal, ids):
    assert qwen25_tokenizer().encode(literal) == ids


def test_qwen25_round_trips_text_and_ignores_special_token_text():
    tok = qwen25_tokenizer()
    text = "def f(x):\n    return x  # é ⟨․gen⟩ <|endoftext|>\r\n"
    assert tok.decode(tok.encode(text)) == text
    assert 151643 not in tok.encode("<|endoftext|>")
    assert tok.vocab_size == 151643 + 22


def test_count_tokens_defaults_to_qwen25():
    assert count_tokens("</gen>") == 3
    assert get_tokenizer("qwen2.5") is qwen25_tokenizer()


def test_the_hf_build_of_qwen25_gives_the_same_ids_on_ordinary_text():
    """The random-init Qwen2.5 shapes' tokenizer object (built offline from the same file)."""
    import random
    from pathlib import Path

    from cadlib.models.tokenizer import QWEN25_SPECIAL, qwen25_hf_tokenizer

    hf, ours = qwen25_hf_tokenizer(), qwen25_tokenizer()
    source = (Path(__file__).parents[2] / "cadlib" / "decoding" / "decoder.py").read_text()
    rng = random.Random(0)
    for _ in range(200):
        start = rng.randrange(len(source))
        text = source[start : start + rng.randrange(1, 300)]
        assert hf.encode(text, add_special_tokens=False) == ours.encode(text)
    assert hf.encode("héllo 中文 \t\r\n 12345", add_special_tokens=False) == ours.encode(
        "héllo 中文 \t\r\n 12345"
    )
    assert hf.convert_tokens_to_ids(list(QWEN25_SPECIAL)) == list(range(151643, 151665))
    assert hf.eos_token == "<|im_end|>"


def test_the_hf_build_of_qwen25_renders_qwen25s_chat_format():
    from cadlib.models import load_tokenizer

    messages = [{"role": "user", "content": "hi"}]
    tokenizer = load_tokenizer("qwen2.5-7b-random")
    chat = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert chat == (
        "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a "
        "helpful assistant.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
