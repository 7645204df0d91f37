"""The edit prompt (chat template, numbered document) and the full-regeneration prompt."""

import re

from hypothesis import given
from hypothesis import strategies as st

from cadlib.models import load_tokenizer
from cadlib.models.tokenizer import qwen25_tokenizer
from cadlib.prompts import (
    edit_messages,
    edit_prompt_ids,
    number_lines,
    regen_prompt_ids,
    render_chat,
)

DOC = "def f(x):\n    return x\n"


def test_number_lines_format():
    assert number_lines(DOC) == "1| def f(x):\n2|     return x\n3| "
    ten = number_lines("\n".join("abcdefghij"))
    assert ten.split("\n")[0] == " 1| a" and ten.split("\n")[-1] == "10| j"


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",))))
def test_numbering_is_reversible(doc):
    numbered = number_lines(doc).split("\n")
    assert len(numbered) == len(doc.split("\n"))
    assert "\n".join(re.sub(r"^ *\d+\| ", "", line, count=1) for line in numbered) == doc


def test_edit_prompt_uses_the_chat_template():
    tok = load_tokenizer("smollm2-135m-instruct")
    ids = edit_prompt_ids(tok, "Fix f.", DOC)
    text = tok.decode(ids)
    assert text.startswith("<|im_start|>system\n") and text.endswith("<|im_start|>assistant\n")
    assert "Fix f." in text and number_lines(DOC) in text and '<copy lines="i-j"/>' in text
    assert ids.count(tok.convert_tokens_to_ids("<|im_start|>")) == 3  # special ids, not text


def test_regen_prompt_holds_the_plain_document():
    tok = load_tokenizer("smollm2-135m-instruct")
    text = tok.decode(regen_prompt_ids(tok, "Fix f.", DOC))
    assert DOC in text and "1| " not in text


def test_qwen_bpe_gets_chatml():
    qwen = qwen25_tokenizer()
    text = render_chat(edit_messages("Fix f.", DOC), qwen)
    assert text.startswith("<|im_start|>system\n") and text.endswith("<|im_start|>assistant\n")
    ids = edit_prompt_ids(qwen, "Fix f.", DOC)
    assert ids[0] == 151644  # <|im_start|> as its special id
