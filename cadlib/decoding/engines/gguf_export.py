"""A Hugging Face Qwen2 checkpoint as a GGUF file, so llama.cpp can run the smoke stand-in.

The ``smoke`` profiles exercise the paper's code path on a tiny random Qwen2 model
(:data:`cadlib.models.QWEN2_SMOKE`). Chapter 6b runs the same model on llama.cpp, which reads
only GGUF. llama.cpp's own converter (``convert_hf_to_gguf.py``) is not installed by any
package, so this module writes the file with the ``gguf`` package (the writer llama.cpp
maintains): the tensors under llama.cpp's ``qwen2`` names, unquantized fp32, and the
tokenizer metadata copied from the packaged SmolLM2 GGUF, whose vocabulary the stand-in
shares. Qwen2 takes Hugging Face's rotary layout as it is (unlike ``llama``, no permutation of
the query and key rows), so llama.cpp and ``transformers`` compute the same function; the
tests check that they decide alike.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import gguf
from safetensors.numpy import load_file

from cadlib.models import QWEN2_SMOKE, STAND_INS, smollm2_gguf_path, stand_in_path

__all__ = ["export_qwen2_gguf", "stand_in_gguf", "QWEN2_TENSOR_NAMES"]

#: Hugging Face name (within a layer) -> llama.cpp's GGUF name for the ``qwen2`` architecture.
QWEN2_TENSOR_NAMES = {
    "input_layernorm.weight": "attn_norm.weight",
    "self_attn.q_proj.weight": "attn_q.weight",
    "self_attn.q_proj.bias": "attn_q.bias",
    "self_attn.k_proj.weight": "attn_k.weight",
    "self_attn.k_proj.bias": "attn_k.bias",
    "self_attn.v_proj.weight": "attn_v.weight",
    "self_attn.v_proj.bias": "attn_v.bias",
    "self_attn.o_proj.weight": "attn_output.weight",
    "post_attention_layernorm.weight": "ffn_norm.weight",
    "mlp.gate_proj.weight": "ffn_gate.weight",
    "mlp.up_proj.weight": "ffn_up.weight",
    "mlp.down_proj.weight": "ffn_down.weight",
}
_GLOBAL_NAMES = {
    "model.embed_tokens.weight": "token_embd.weight",
    "model.norm.weight": "output_norm.weight",
    "lm_head.weight": "output.weight",
}
#: The tokenizer keys copied from the vocabulary's GGUF (the stand-in shares SmolLM2's).
_TOKENIZER_KEYS = (
    "tokenizer.ggml.model",
    "tokenizer.ggml.pre",
    "tokenizer.ggml.tokens",
    "tokenizer.ggml.token_type",
    "tokenizer.ggml.merges",
    "tokenizer.ggml.bos_token_id",
    "tokenizer.ggml.eos_token_id",
    "tokenizer.ggml.unknown_token_id",
    "tokenizer.ggml.padding_token_id",
    "tokenizer.ggml.add_bos_token",
    "tokenizer.ggml.add_space_prefix",
    "tokenizer.chat_template",
)


def _gguf_name(hf_name: str) -> str:
    if hf_name in _GLOBAL_NAMES:
        return _GLOBAL_NAMES[hf_name]
    prefix, _, rest = hf_name.partition(".layers.")
    layer, _, local = rest.partition(".")
    if prefix != "model" or not layer.isdigit() or local not in QWEN2_TENSOR_NAMES:
        raise ValueError(f"no GGUF name for tensor {hf_name!r} of a Qwen2 checkpoint")
    return f"blk.{layer}.{QWEN2_TENSOR_NAMES[local]}"


def _copy_tokenizer(writer: gguf.GGUFWriter, vocab_gguf: Path, vocab_size: int) -> None:
    fields = gguf.GGUFReader(vocab_gguf).fields
    for key in _TOKENIZER_KEYS:
        if key not in fields:
            continue
        field = fields[key]
        kind = field.types[0]
        if kind == gguf.GGUFValueType.ARRAY:
            writer.add_array(key, field.contents())
        else:
            writer.add_key_value(key, field.contents(), kind)
    n_tokens = len(fields["tokenizer.ggml.tokens"].contents())
    if n_tokens != vocab_size:
        raise ValueError(f"{vocab_gguf.name} has {n_tokens} tokens, the model {vocab_size} rows")


def export_qwen2_gguf(folder: str | Path, out: str | Path, vocab_gguf: str | Path) -> Path:
    """Write the Qwen2 checkpoint in ``folder`` (``config.json`` + ``model.safetensors``) to
    the GGUF file ``out`` (fp32), with the tokenizer of ``vocab_gguf``; returns ``out``.
    Written to a scratch file and renamed, so a reader never sees half a file."""
    folder, out = Path(folder), Path(out)
    config = json.loads((folder / "config.json").read_text())
    if config.get("model_type") != "qwen2":
        raise ValueError(f"{folder}: model_type {config.get('model_type')!r}, expected 'qwen2'")
    tensors = load_file(folder / "model.safetensors")
    rope = config.get("rope_parameters") or {}
    arch = "qwen2"
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, scratch = tempfile.mkstemp(prefix=f".{out.stem}-", suffix=".gguf", dir=out.parent)
    os.close(fd)
    writer = gguf.GGUFWriter(scratch, arch)
    writer.add_name(folder.name)
    writer.add_context_length(config["max_position_embeddings"])
    writer.add_embedding_length(config["hidden_size"])
    writer.add_block_count(config["num_hidden_layers"])
    writer.add_feed_forward_length(config["intermediate_size"])
    writer.add_head_count(config["num_attention_heads"])
    writer.add_head_count_kv(config["num_key_value_heads"])
    writer.add_rope_freq_base(float(rope.get("rope_theta", config.get("rope_theta", 1e4))))
    writer.add_layer_norm_rms_eps(config["rms_norm_eps"])
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    _copy_tokenizer(writer, Path(vocab_gguf), config["vocab_size"])
    for name, array in tensors.items():
        writer.add_tensor(_gguf_name(name), array.astype("float32"))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    os.replace(scratch, out)
    return out


def stand_in_gguf(name: str = QWEN2_SMOKE) -> Path:
    """The GGUF file of a local stand-in (:data:`cadlib.models.STAND_INS`), next to its
    Hugging Face folder, exported on first use with SmolLM2's tokenizer."""
    if name not in STAND_INS:
        raise ValueError(f"unknown stand-in {name!r}; valid: {', '.join(STAND_INS)}")
    folder = stand_in_path(name)
    out = folder.parent / f"{name}.gguf"
    if not out.exists():
        export_qwen2_gguf(folder, out, smollm2_gguf_path())
    return out
