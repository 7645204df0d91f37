"""Copy-as-Decode as a ``transformers`` custom generate method (see
cadlib.decoding.custom_generate)."""

from cadlib.decoding.custom_generate import copy_as_decode_generate as generate

__all__ = ["generate"]
