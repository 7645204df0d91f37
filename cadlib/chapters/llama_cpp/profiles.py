"""Chapter 6b's profiles: the model, the cases, the engines and the timing of each run, and
what each profile's model is (for the chapter's labels)."""

from cadlib.models import QWEN2_SMOKE, SMOLLM2

__all__ = ["MODEL_LABELS", "PROFILES"]

#: ``cases``: cases per corpus and ``max_ids``: the cap on a case's gold ids per corpus
#: (:func:`sample_inputs`, chapter 6's rule and caps); ``repeats``: timed repeats per (case, method,
#: engine), interleaved; ``pld_grid``: (num_pred_tokens, max_ngram_size) settings tried for
#: prompt lookup on llama.cpp (the best pooled one is used on both engines; the cpu profile
#: keeps (20, 3), the best of (10, 2) and (20, 3) on its cases when measured: 29.6 s against
#: 38.1 s pooled, 2 cores under a load of ~4); ``threads``: per engine (cpu: 2, the whole
#: machine, as a CPU user runs llama.cpp; the engines run one at a time, so neither shares
#: cores. Measured: 221 s under papermill against 273 s with one thread per engine, on the
#: earlier 1015-id ProbeEdit case; 195 s with the cap and the drafted decoder); ``gguf_types``:
#: the llama.cpp engines, one per weight type (``None``: the GGUF file as shipped, Q4_1 for
#: SmolLM2; ``"f16"``: that file converted by llama.cpp,
#: :func:`cadlib.decoding.engines.converted_gguf`). On CPU llama.cpp multiplies a batch (a splice)
#: several times faster with F16 weights than with Q4_1 ones, and a one-id step somewhat slower:
#: which wins depends on the method.
PROFILES = {
    # ~3 minutes on 2 quiet cores with one llama.cpp engine; with the F16 one too, 439 s on
    # the slower cores of 2026-12 (a transformers step ~110 ms). A ProbeEdit prompt
    # (~900-1300 ids) costs seconds to prefill, and transformers decodes its gold
    # autoregressively at ~60 ms an id there (two threads do not speed up its single-id
    # steps): ProbeEdit golds are 761-1047 ids, so the cap keeps its case among the shortest
    # quarter, as chapter 6 does.
    "cpu": dict(
        model=SMOLLM2,
        cases={"probeedit": 1, "heval-fix-py": 2},
        max_ids={"probeedit": 800, "heval-fix-py": 300},
        repeats=1,
        warmup=1,
        threads=2,
        pld_grid=((20, 3),),
        kernel_P=256,
        kernel_N=(1, 2, 4, 8, 16, 32, 64),
        kernel_trials=2,
        agreement_cases=None,
        gguf_types=(None, "f16"),
    ),
    # A CPU-engine chapter: the paper has no llama.cpp setting (serving-engine integration is
    # its future work); ``paper`` runs every case of the two corpora and the full N grid.
    "paper": dict(
        model=SMOLLM2,
        cases={"probeedit": None, "heval-fix-py": None},
        max_ids=None,
        repeats=3,
        warmup=1,
        threads=1,
        pld_grid=((4, 2), (10, 2), (10, 3), (20, 3)),
        kernel_P=1024,
        kernel_N=tuple(2**k for k in range(10)),
        kernel_trials=5,
        agreement_cases=None,
        gguf_types=(None, "f16"),
    ),
}
#: CI's check of the ``paper`` path (make test-smoke), in seconds: the tiny random Qwen2
#: stand-in on both engines (fp32 GGUF exported by :mod:`cadlib.decoding.engines.gguf_export`), one
#: case per corpus, the paper's prompt-lookup grid and repeats, a short kernel grid.
PROFILES["smoke"] = {
    **PROFILES["paper"],
    "model": QWEN2_SMOKE,
    "cases": {"probeedit": 1, "heval-fix-py": 1},
    "kernel_P": 64,
    "kernel_N": (1, 2, 4, 8),
    "kernel_trials": 1,
}
#: What each profile's model is, for the chapter's labels.
MODEL_LABELS = {
    SMOLLM2: "SmolLM2-135M-Instruct (one GGUF, Q4_1: transformers dequantizes it to fp32, "
    "llama.cpp runs it as shipped and converted to F16)",
    QWEN2_SMOKE: "qwen2-smoke (a tiny random-weight Qwen2, fp32 on both engines, F16 too on "
    "llama.cpp: the smoke check of the code path, its times mean nothing)",
}
