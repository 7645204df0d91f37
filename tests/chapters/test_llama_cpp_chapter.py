"""Chapter 6b's sample and its generated summary (no llama.cpp needed: numbers made by hand)."""

from cadlib.chapters import llama_cpp as L


def _method(decode_s, T=100, cases=1):
    return dict(
        cases=cases,
        T=T,
        forwards=10,
        decode_s=decode_s,
        wall_s=decode_s + 1.0,
        tokens_per_s=T / decode_s,
        speedup_vs_ar=1.0,
    )


def _numbers(llama_cad, llama_drafts, tf_best):
    methods = {
        "llama.cpp": {
            "probeedit": {
                "autoregressive": _method(8.0),
                "prompt lookup": _method(4.0),
                "Copy-as-Decode": _method(llama_cad),
                "Copy-as-Decode +drafts": _method(llama_drafts),
            }
        },
        "transformers": {
            "probeedit": {
                "autoregressive": _method(60.0),
                "Copy-as-Decode +drafts": _method(tf_best),
            }
        },
    }
    return dict(
        methods=methods, agreement={"llama.cpp": dict(rate=0.99, n=500, ci95=[0.98, 0.995])}
    )


def test_the_goal_takes_the_faster_llama_decoder_and_every_other_run_as_a_rival():
    text = L.text.run_summary(_numbers(llama_cad=3.0, llama_drafts=2.0, tf_best=2.5), "here")
    assert "**met** by Copy-as-Decode +drafts on llama.cpp" in text
    assert "llama.cpp agree with transformers at 99.0% of 500" in text
    assert "the fastest rival is Copy-as-Decode +drafts on transformers, 1.25x its latency" in text
    missed = L.text.run_summary(_numbers(llama_cad=3.0, llama_drafts=2.0, tf_best=1.0), "here")
    assert "**missed** by Copy-as-Decode +drafts" in missed and "0.50x its latency" in missed


def test_a_converted_gguf_engine_is_ours_too_and_its_baselines_are_rivals():
    numbers = _numbers(llama_cad=3.0, llama_drafts=2.0, tf_best=2.5)
    numbers["methods"]["llama.cpp F16"] = {
        "probeedit": {"autoregressive": _method(1.5), "Copy-as-Decode +drafts": _method(1.0)}
    }
    text = L.text.run_summary(numbers, "here")
    assert "**met** by Copy-as-Decode +drafts on llama.cpp F16" in text
    assert "the fastest rival is autoregressive on llama.cpp F16, 1.50x its latency" in text
    numbers["methods"]["llama.cpp F16"]["probeedit"]["autoregressive"] = _method(0.5)
    missed = L.text.run_summary(numbers, "x")
    assert "**missed** by Copy-as-Decode +drafts on llama.cpp F16" in missed


def test_the_sample_keeps_each_corpus_under_its_cap(tok, humanevalpack_dir):
    params = dict(
        cases={"probeedit": 1, "heval-fix-py": 2}, max_ids={"probeedit": 800, "heval-fix-py": 300}
    )
    xs = L.run.sample_inputs(params, tok, seed=0)
    assert [x.corpus for x in xs] == ["probeedit", "heval-fix-py", "heval-fix-py"]
    for x in xs:
        assert len(x.target) - 1 <= params["max_ids"][x.corpus]
    assert L.run.sample_inputs(params, tok, seed=0) == xs  # seeded
