"""Copy-as-Decode through ``transformers``' own entry point for new decoding methods.

``model.generate(input_ids, custom_generate=CUSTOM_GENERATE_DIR, trust_remote_code=True,
document=doc, tokenizer=tokenizer)`` runs :class:`cadlib.decoding.decoder.CopyDecoder` (the
grammar's mask and the copy splice) instead of ``generate``'s own loop: ``transformers`` loads the
function :func:`copy_as_decode_generate` from the folder's ``custom_generate/generate.py``
(the layout of a hub "custom generate" repository, here shipped inside ``cadlib``).
:class:`cadlib.decoding.generate_processor.GrammarLogitsProcessor` in a plain ``generate()``
applies the mask only, one decode step per id; this applies both, a copy being one forward
(paper §2.4).
"""

from __future__ import annotations

from pathlib import Path

import torch

__all__ = ["CUSTOM_GENERATE_DIR", "copy_as_decode_generate"]

#: The folder to pass as ``custom_generate=`` (it holds ``custom_generate/generate.py``).
CUSTOM_GENERATE_DIR = str(Path(__file__).resolve().parent / "generate_hub")


def copy_as_decode_generate(
    model,
    inputs=None,
    document=None,
    tokenizer=None,
    max_new_tokens=None,
    generation_config=None,
    drafts=(),
    **kwargs,
) -> torch.LongTensor:
    """What ``generate(..., custom_generate=CUSTOM_GENERATE_DIR)`` runs.

    ``inputs`` (or ``input_ids``): the prompt, one row (e.g.
    :func:`cadlib.prompts.edit_prompt_ids`); ``document``: the text the copy ops refer to;
    ``tokenizer``: the model's; ``max_new_tokens``: the budget of model decisions (default:
    the generation config's, else 256); ``drafts``: as
    :class:`~cadlib.decoding.decoder.CopyDecoder`. Returns the prompt followed by the decoded
    program's ids (copied lines spliced in), shape ``(1, n)``, as ``generate`` returns a row.
    """
    from .decoder import CopyDecoder  # the decoder imports this module's neighbours

    ids = inputs if inputs is not None else kwargs.get("input_ids")
    if ids is None or document is None or tokenizer is None:
        raise ValueError("Copy-as-Decode needs input_ids, document= and tokenizer=")
    ids = torch.as_tensor(ids)
    if ids.dim() == 2 and ids.shape[0] != 1:
        raise ValueError(f"Copy-as-Decode decodes one row at a time, got {ids.shape[0]}")
    prompt = ids.reshape(-1).tolist()
    budget = max_new_tokens or getattr(generation_config, "max_new_tokens", None) or 256
    decoder = CopyDecoder(model, tokenizer, max_new_tokens=budget, drafts=drafts)
    result = decoder.decode(document, prompt_ids=prompt)
    return torch.tensor([prompt + list(result.transcript.ids)], device=ids.device)
