from cadlib import vocab
from cadlib.decoding import fsm
from cadlib.fim import mask


def test_byte_decoder_inverts_transformers_alphabet():
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    assert vocab.byte_decoder() == {c: b for b, c in bytes_to_unicode().items()}


def test_fsm_and_fim_read_the_vocabulary_from_one_place(tok):
    assert mask.token_texts is vocab.token_texts
    assert mask.token_texts_cached is vocab.token_texts_cached
    assert fsm.token_table(tok).token_bytes == vocab.token_bytes(tok)


def test_bytes_and_texts_agree_except_on_special_tokens(tok):
    raw, texts = vocab.token_bytes(tok), vocab.token_texts(tok)
    assert len(raw) == len(texts) == len(tok)
    for i, (b, t) in enumerate(zip(raw, texts, strict=True)):
        if t is None:  # special: the FSM keeps its text (and bans it by id), the mask None
            assert i in tok.all_special_ids and b == tok.convert_ids_to_tokens(i).encode()
        else:
            assert b == (t if isinstance(t, bytes) else t.encode())
