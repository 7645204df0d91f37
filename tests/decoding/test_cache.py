import pytest
import torch

from cadlib.decoding import cache
from cadlib.decoding.engines import TransformersEngine
from cadlib.models import model_vocab_size


def test_crop_is_lenient_and_restore_is_checked(model, one_torch_thread):
    session = TransformersEngine(model).new_session()
    c = session.cache
    cache.forward(model, [1, 2, 3, 4], c)
    cache.crop_cache(c, 10)  # never grows, no complaint
    assert cache.cache_length(c) == 4
    with pytest.raises(ValueError, match="cannot restore"):
        session.restore(10)
    assert session.restore(2) == 2 and cache.cache_length(c) == 2


def test_forward_takes_device_ids_as_they_are(model, one_torch_thread):
    c, d = cache.new_cache(model), cache.new_cache(model)
    a = cache.forward(model, [1, 2, 3, 4], c, logits_to_keep=2)
    b = cache.forward(model, torch.tensor([1, 2, 3, 4], device=model.device), d, 2)
    assert torch.equal(a, b) and cache.cache_length(d) == 4


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
