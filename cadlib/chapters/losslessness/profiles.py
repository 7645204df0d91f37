"""Chapter 1's parameters: the checks are cheap, so both profiles run everything."""

__all__ = ["PROFILES"]

#: Chapter parameters (the checks are cheap: both profiles run everything).
PROFILES = {
    "cpu": {
        "corpora": [
            "heval-fix-py",
            "heval-fix-js",
            "probeedit",
            "heval-fix-java",
            "heval-fix-go",
            "heval-fix-cpp",
            "heval-fix-rust",
        ],
        "n_fuzz": 10_000,
        "noise_trials": 5,
    },
    "paper": {
        "corpora": [
            "heval-fix-py",
            "heval-fix-js",
            "probeedit",
            "heval-fix-java",
            "heval-fix-go",
            "heval-fix-cpp",
            "heval-fix-rust",
        ],
        "n_fuzz": 10_000,
        "noise_trials": 5,
    },
}
