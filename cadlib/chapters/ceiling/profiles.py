"""Chapter 3's parameters: everything here is a data property, so both profiles do the same
(full) work; the ``paper`` profile reads the s(N) curve chapter 2 measured at its own
``paper`` profile."""

__all__ = ["PROFILES"]

#: Everything here is a data property, so both profiles do the same (full) work.
PROFILES = {
    "cpu": {
        "corpora": ("probeedit", "heval-fix-py", "heval-fix-js"),
        # extensions: the other HumanEvalPack languages and real Flask commits (ch. 3 only)
        "extra_corpora": (
            "heval-fix-java",
            "heval-fix-go",
            "heval-fix-cpp",
            "heval-fix-rust",
            "realedits-flask",
        ),
        "min_spans": (1, 2, 4, 8, 16, 32),
        "tokenizer": "qwen2.5",
        "kernel_curve": "results/kernel.json",
        "kernel_model": None,
    },
}
# the paper profile reads the s(N) curve the kernel chapter measured in its paper profile
PROFILES["paper"] = dict(PROFILES["cpu"], kernel_curve="results/kernel.paper.json")
