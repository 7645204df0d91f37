import pytest

from cadlib import models
from cadlib.chapters import kernel
from cadlib.decoding import cache


def test_models_and_kernel_re_export_the_cache_helpers():
    for name in ("new_cache", "crop_cache", "forward", "sync_device"):
        assert getattr(models, name) is getattr(cache, name)
    for name in ("new_cache", "cache_length", "restore_cache", "forward_with_cache"):
        assert getattr(kernel, name) is getattr(cache, name)


def test_crop_is_lenient_and_restore_is_checked(model, one_torch_thread):
    c = cache.new_cache(model)
    cache.forward(model, [1, 2, 3, 4], c)
    cache.crop_cache(c, 10)  # never grows, no complaint
    assert cache.cache_length(c) == 4
    with pytest.raises(ValueError, match="cannot restore"):
        cache.restore_cache(c, 10)
    assert cache.restore_cache(c, 2) == 2
