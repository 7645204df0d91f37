"""The vLLM plug-in (cadlib.decoding.vllm_copy, issue 53).

The pure parts (forced drafts, the mask on a logits row, the proposer's rows) run here in the
book's environment with stand-in configs. The engine runs need ``make vllm`` (``.venv-vllm``):
each runs ``tests/decoding/vllm_spike.py`` for one method and checks what the spike found
(book/vllm.md); without that environment they skip, saying so.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from decoding import vllm_spike  # the spike's case: one document, one program

from cadlib.decoding.fsm import CopyGenFSM, transcript, walk_ids
from cadlib.decoding.vllm_copy import (
    DOC_KEY,
    PREFIX_KEY,
    CopyMaskLogitsProcessor,
    CopyProposer,
    forced_draft,
    program_mask,
    register,
    resolve_ids,
)
from cadlib.models.registry import cache_dir
from cadlib.models.tokenizer import load_tokenizer

ROOT = Path(__file__).resolve().parents[2]

K = 8
VOCAB = 49152


@pytest.fixture(scope="module")
def tok():
    return load_tokenizer()


@pytest.fixture(scope="module")
def case(tok):
    return transcript(vllm_spike.PROGRAM, vllm_spike.DOC, tok)


def forced_run(kinds, i: int) -> int:
    """How many ids from ``i`` on the grammar forces (kinds ``forced``/``splice``)."""
    n = 0
    while i + n < len(kinds) and kinds[i + n] in ("forced", "splice"):
        n += 1
    return n


def test_forced_draft_is_the_transcripts_forced_run(tok, case):
    mask = program_mask(tok, vllm_spike.DOC, VOCAB)
    for i in range(len(case.ids)):
        draft = forced_draft(mask, case.ids[:i], K)
        assert draft == list(case.ids[i : i + min(K, forced_run(case.kinds, i))]), i


def test_forced_draft_covers_the_splice(tok, case):
    """After the first range's last digit the draft is ``"/>`` and the copied lines."""
    mask = program_mask(tok, vllm_spike.DOC, VOCAB)
    i = case.kinds.index("splice") - 1  # the range's closing id
    draft = forced_draft(mask, case.ids[:i], 64)
    assert draft == list(case.ids[i : i + forced_run(case.kinds, i)])
    assert tok.decode(draft[1:]) == "\ndef add(a, b):\n    return a + b\n"


def test_forced_draft_is_empty_off_the_grammar(tok, case):
    mask = program_mask(tok, vllm_spike.DOC, VOCAB)
    decision = case.kinds.index("choice")
    assert forced_draft(mask, case.ids[:decision], K) == []
    assert forced_draft(mask, [*case.ids[:5], 0], K) == []  # a refused id: no draft
    assert forced_draft(mask, case.ids, K) == []  # after </program>


def fake_config(num_speculative_tokens: int = K):
    """What the plug-in reads from vLLM's ``VllmConfig``: the tokenizer folder, the vocabulary
    size and the draft length."""
    load_tokenizer()  # writes the tokenizer folder on first use
    model = SimpleNamespace(
        tokenizer=str(cache_dir() / "smollm2-135m-instruct-tokenizer"),
        get_vocab_size=lambda: VOCAB,
    )
    spec = SimpleNamespace(num_speculative_tokens=num_speculative_tokens)
    return SimpleNamespace(model_config=model, speculative_config=spec)


def test_mask_processor_masks_only_its_rows(tok, case):
    proc = CopyMaskLogitsProcessor(fake_config(), torch.device("cpu"), False)
    params = SimpleNamespace(extra_args={DOC_KEY: vllm_spike.DOC, PREFIX_KEY: case.ids[:3]})
    out = list(case.ids[3:11])  # the running output list vLLM hands over
    proc.rows[0] = proc._new_row(params, [], out)
    assert proc._new_row(SimpleNamespace(extra_args=None), [], []) is None
    logits = torch.randn(2, VOCAB)
    row1 = logits[1].clone()
    proc.apply(logits)
    assert torch.equal(logits[1], row1)  # a request without a document: untouched
    assert torch.isfinite(logits[0]).nonzero().flatten().tolist() == [case.ids[11]]
    out.append(case.ids[11])  # vLLM appends to the same list: the mask follows
    logits = torch.randn(1, VOCAB)
    proc.apply(logits)
    assert int(logits[0].argmax()) == case.ids[12]


def test_proposer_drafts_registered_rows_only(tok, case):
    base = tok.encode("An unregistered prompt\n", add_special_tokens=False)
    prompt = tok.encode(vllm_spike.PROMPT, add_special_tokens=False)
    register(prompt, vllm_spike.DOC)
    proposer = CopyProposer(fake_config(num_speculative_tokens=4))
    rows = [prompt + list(case.ids[:11]), base + list(case.ids[:11]), prompt + list(case.ids[:5])]
    width = max(map(len, rows))
    token_ids = np.zeros((3, width + 8), dtype=np.int32)
    for r, row in enumerate(rows):
        token_ids[r, : len(row)] = row
    drafts = proposer.propose([[1], [1], []], np.array(list(map(len, rows))), token_ids)
    assert drafts == [list(case.ids[11:15]), [], []]


# -- the engine runs (.venv-vllm) ---------------------------------------------------------------

#: ``make vllm``'s interpreter (``CADLIB_VLLM_PYTHON`` names another environment's).
VLLM_PYTHON = Path(os.environ.get("CADLIB_VLLM_PYTHON", ROOT / ".venv-vllm" / "bin" / "python"))
needs_vllm = pytest.mark.skipif(
    not VLLM_PYTHON.exists(),
    reason="no vLLM environment (.venv-vllm): `make vllm` builds it (book/vllm.md)",
)


def spike(method: str) -> dict:
    env = dict(
        os.environ,
        HF_HUB_OFFLINE="1",
        VLLM_ENABLE_V1_MULTIPROCESSING="0",
        VLLM_CPU_KVCACHE_SPACE="1",
        OMP_NUM_THREADS="2",
    )
    run = subprocess.run(
        [str(VLLM_PYTHON), str(ROOT / "tests" / "decoding" / "vllm_spike.py"), method],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
    )
    lines = [x for x in run.stdout.splitlines() if x.startswith("SPIKE ")]
    assert lines, run.stderr[-3000:]
    found = ROOT / "_build" / "vllm-spike" / f"{method}.json"  # what book/vllm.md reports
    found.parent.mkdir(parents=True, exist_ok=True)
    found.write_text(lines[-1][len("SPIKE ") :] + "\n")
    return json.loads(lines[-1][len("SPIKE ") :])


@pytest.fixture(scope="module")
def plain():
    return spike("plain")


@pytest.mark.slow
@needs_vllm
def test_vllm_plain_decodes(plain):
    assert "error" not in plain and len(plain["ids"]) == vllm_spike.MAX_TOKENS


@pytest.mark.slow
@needs_vllm
def test_vllm_ngram_matches_plain(plain):
    ngram = spike("ngram")
    assert ngram["ids"] == plain["ids"] and ngram["steps"] <= plain["steps"]


@pytest.fixture(scope="module")
def masked():
    return spike("mask")


@pytest.mark.slow
@needs_vllm
def test_vllm_mask_keeps_the_grammar(tok, case, masked):
    fsm = CopyGenFSM(tok, vllm_spike.DOC)
    prefix = list(case.ids[: vllm_spike.PREFIX_LEN])
    walk_ids(fsm, fsm.initial(), prefix + masked["ids"])  # raises at a refused id
    n = forced_run(case.kinds, vllm_spike.PREFIX_LEN)
    assert masked["ids"][:n] == list(case.ids[vllm_spike.PREFIX_LEN :][:n])
    edited = resolve_ids(tok, vllm_spike.DOC, prefix + masked["ids"])  # closed if cut short
    assert edited.startswith("def add(a, b):\n    return a + b\n")


@pytest.mark.slow
@needs_vllm
def test_vllm_proposer_alone_is_plain_decoding(plain):
    """Without the mask the forced drafts are only drafts: the output is plain decoding's."""
    proposed = spike("proposer")
    assert proposed["ids"] == plain["ids"]
    assert proposed["spec"]["num_draft_tokens"] > 0  # the splice was proposed


@pytest.mark.slow
@needs_vllm
def test_vllm_refuses_proposer_with_mask():
    """The blocker (book/vllm.md): a logits processor and a speculative proposer together."""
    both = spike("both")
    assert both.get("error") == "ValueError", both
    assert "not supported when speculative decoding is enabled" in both["message"]


@pytest.mark.slow
@needs_vllm
def test_vllm_cpu_has_no_runner_v2():
    """Runner v2 (where a processor sees draft rows) needs Triton, which has no CPU backend."""
    v2 = spike("proposer-v2")
    assert v2.get("error") == "ValidationError", v2
    assert "Model Runner V2 requires Triton" in v2["message"]


@pytest.mark.slow
@pytest.mark.hf_model
@needs_vllm
def test_vllm_plain_is_transformers_greedy(plain):
    """vLLM's plain decoding picks the ids ``transformers`` greedy picks on the same prompt."""
    from cadlib.models import load_model

    prompt = vllm_spike.case()["prompt"]
    model = load_model("smollm2-135m-instruct")
    with torch.no_grad():
        out = model.generate(
            torch.tensor([prompt]), max_new_tokens=vllm_spike.MAX_TOKENS, do_sample=False
        )
    assert out[0, len(prompt) :].tolist() == plain["ids"]


@pytest.mark.slow
@pytest.mark.hf_model
@needs_vllm
def test_vllm_mask_is_transformers_with_the_same_mask(tok, masked):
    """The plug-in's masked ids are those ``transformers`` greedy picks under ``GrammarMask``
    (the mask ``CopyDecoder`` applies), on the same prompt."""
    from transformers import LogitsProcessorList

    from cadlib.decoding.processors import GrammarMask
    from cadlib.models import load_model

    c = vllm_spike.case()
    mask = GrammarMask(tok, vllm_spike.DOC, prompt_length=len(c["base"]))
    model = load_model("smollm2-135m-instruct")
    with torch.no_grad():
        out = model.generate(
            torch.tensor([c["prompt"]]),
            max_new_tokens=vllm_spike.MAX_TOKENS,
            do_sample=False,
            logits_processor=LogitsProcessorList([mask]),
        )
    assert out[0, len(c["prompt"]) :].tolist() == masked["ids"]


def test_resolve_ids_gives_the_edited_file(tok, case):
    from cadlib.grammar import Program
    from cadlib.resolver import resolve

    edited = resolve(Program(vllm_spike.PROGRAM), vllm_spike.DOC)
    eos = tok.eos_token_id
    assert resolve_ids(tok, vllm_spike.DOC, [*case.ids, eos]) == edited
    # cut short inside the gen body: closed (</gen>, </program>), so the second copy is lost
    cut = case.kinds.index("gen") + 2
    assert resolve_ids(tok, vllm_spike.DOC, case.ids[:cut]) != edited
    with pytest.raises(ValueError):
        resolve_ids(tok, vllm_spike.DOC, [*case.ids[:5], 0])
