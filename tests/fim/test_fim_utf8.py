import numpy as np
import torch

from cadlib.fim.logits import apply_mask
from cadlib.fim.mask import token_raw, utf8_prefix, utf8_split


def test_utf8_prefix_separates_unfinished_from_invalid():
    e = "é".encode()
    assert utf8_prefix(b"ab") == ("ab", b"", True)
    assert utf8_prefix(b"a" + e[:1]) == ("a", e[:1], True)
    assert utf8_prefix(b"a\xffb") == ("a", b"\xffb", False)
    assert utf8_split(b"a" + e[:1]) == ("a", e[:1]) and utf8_split(b"a\xffb") is None
    assert token_raw("é") == e and token_raw(e[:1]) == e[:1]


def test_apply_mask_masks_ids_beyond_the_tokenizer():
    scores = torch.zeros(1, 5)
    out = apply_mask(scores, np.array([True, False, True]))
    assert out.tolist() == [[0.0, float("-inf"), 0.0, float("-inf"), float("-inf")]]
