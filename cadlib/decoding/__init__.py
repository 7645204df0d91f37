"""The decoding wing: how a model writes an edit program (paper §2.3-2.4, App. K, M).

``token_table`` (the grammar's literals as ids of one tokenizer), ``fsm`` (the token-level
FSM), ``decoder`` (``CopyDecoder``: FSM-masked greedy decoding with the copy splice; its
``modes``, the ``decode_run`` it keeps, and ``streaming``, its text as it is decoded),
``drafts`` (what the decoder verifies speculatively, with ``prompt_lookup``, the n-gram rule
its drafts and the accounting share), ``processors`` (engine-neutral logit
masks), ``cache`` (the KV cache and forwards over it), ``engines/`` (the model runtimes:
transformers, llama.cpp), ``methods`` (autoregressive, prompt lookup and Copy-as-Decode as one
protocol), ``engine_agreement`` (do two engines pick the same greedy ids?),
``token_boundaries`` (tokenization at the splice boundaries), ``kv_reuse`` (copies without
prefill), ``custom_generate`` with ``generate_hub/`` (``transformers``' entry point),
``vllm_copy`` (the mask and the copy splice as vLLM plug-ins, run in ``make vllm``'s own
environment; blocked: book/vllm.md) and ``cpu_threads`` (threads that hold up on a busy CPU).
"""
