import pytest

from cadlib.tokenizers import count_tokens, get_tokenizer, qwen25_tokenizer

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
