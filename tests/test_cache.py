import pytest

from cadlib.decoding import cache
from cadlib.models import model_vocab_size


def test_crop_is_lenient_and_restore_is_checked(model, one_torch_thread):
    c = cache.new_cache(model)
    cache.forward(model, [1, 2, 3, 4], c)
    cache.crop_cache(c, 10)  # never grows, no complaint
    assert cache.cache_length(c) == 4
    with pytest.raises(ValueError, match="cannot restore"):
        cache.restore_cache(c, 10)
    assert cache.restore_cache(c, 2) == 2


def test_cache_helpers_append_crop_and_forward(model, one_torch_thread):
    c = cache.new_cache(model)
    logits = cache.forward(model, [1, 2, 3, 4], c, logits_to_keep=2)
    assert logits.shape == (2, model_vocab_size(model)) and c.get_seq_length() == 4
    cache.forward(model, [5, 6], c)
    cache.crop_cache(c, 4)
    assert c.get_seq_length() == 4
    cache.crop_cache(c, 10)  # never grows
    assert c.get_seq_length() == 4
    cache.sync_device("cpu")  # a no-op on CPU
