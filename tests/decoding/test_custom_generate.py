"""Copy-as-Decode through ``model.generate(custom_generate=...)``: the same ids as
:class:`cadlib.decoding.decoder.CopyDecoder` (issue 36, "where users already are")."""

import pytest
import torch

from cadlib.decoding.custom_generate import CUSTOM_GENERATE_DIR
from cadlib.decoding.decoder import CopyDecoder
from cadlib.models import load_model, load_tokenizer
from cadlib.prompts import edit_prompt_ids

DOC = "def add(a, b):\n    return a - b\n"


@pytest.mark.hf_model
def test_generate_with_custom_generate_is_the_copy_decoder_id_for_id(one_torch_thread):
    model, tok = load_model("tiny-random", device="cpu"), load_tokenizer("tiny-random")
    prompt = edit_prompt_ids(tok, "Fix the bug.", DOC)
    out = model.generate(
        torch.tensor([prompt]),
        custom_generate=CUSTOM_GENERATE_DIR,
        trust_remote_code=True,
        document=DOC,
        tokenizer=tok,
        max_new_tokens=20,
    )
    want = CopyDecoder(model, tok, max_new_tokens=20).decode(DOC, prompt_ids=prompt)
    assert out.shape[0] == 1 and out[0, : len(prompt)].tolist() == prompt
    assert tuple(out[0, len(prompt) :].tolist()) == want.transcript.ids
    import cadlib  # the decoder is exported from the package, loaded when first asked for

    assert cadlib.CopyDecoder is CopyDecoder and cadlib.CUSTOM_GENERATE_DIR == CUSTOM_GENERATE_DIR
    with pytest.raises(ValueError, match="document="):
        model.generate(
            torch.tensor([prompt]),
            custom_generate=CUSTOM_GENERATE_DIR,
            trust_remote_code=True,
            tokenizer=tok,
        )
