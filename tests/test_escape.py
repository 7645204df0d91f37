from hypothesis import given
from hypothesis import strategies as st

from cadlib.escape import ENTITIES, RESERVED, decode_gen_body, encode_gen_body

# Text drawn mostly from the characters that make reserved literals and entities.
tricky = st.text(alphabet=st.sampled_from(list("<>/copygenrams \n⟨⟩․x")), max_size=60)


def test_reserved_literals_map_to_the_papers_entities():
    assert ENTITIES["</gen>"] == "\u27e8\u2024gen\u27e9"
    assert ENTITIES["<copy"] == "\u27e8copy"
    assert set(ENTITIES) == set(RESERVED) == {"<copy", "</copy>", "<gen>", "</gen>", "</program>"}


def test_encode_replaces_every_reserved_literal():
    text = 'a <copy lines="1-2"/> b <gen>c</gen> </copy> </program>'
    encoded = encode_gen_body(text)
    assert not any(lit in encoded for lit in RESERVED)
    assert decode_gen_body(encoded) == text


def test_entity_free_text_is_encoded_as_the_paper_does():
    # The paper's scheme: a plain str.replace chain, longest literal first.
    text = "x </gen> y <gen> z </copy> <copy </program>"
    paper = text
    for lit in sorted(RESERVED, key=len, reverse=True):
        paper = paper.replace(lit, ENTITIES[lit])
    assert encode_gen_body(text) == paper


def test_text_that_already_holds_entities_round_trips():
    text = "literal ⟨․gen⟩ and ⟨copy and a lone ⟨"
    assert decode_gen_body(encode_gen_body(text)) == text


@given(st.text())
def test_round_trip_any_text(text):
    assert decode_gen_body(encode_gen_body(text)) == text


@given(tricky)
def test_round_trip_adversarial_text(text):
    encoded = encode_gen_body(text)
    assert "</gen>" not in encoded
    assert decode_gen_body(encoded) == text


@given(tricky, tricky)
def test_encode_is_injective(a, b):
    if a != b:
        assert encode_gen_body(a) != encode_gen_body(b)
