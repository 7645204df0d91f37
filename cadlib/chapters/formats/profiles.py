"""Chapter 4's profiles: the corpora, the formats and the tokenizer of each run."""

from .run_formats import EXTENSION_FORMATS, TABLE3_FORMATS

__all__ = ["PROFILES"]

PROFILES = {
    profile: {
        "corpora": ["heval-fix-py", "heval-fix-js", "probeedit"],
        "extra_corpora": ["heval-fix-java", "heval-fix-go", "heval-fix-cpp", "heval-fix-rust"],
        "formats": list(TABLE3_FORMATS),
        "extension_formats": list(EXTENSION_FORMATS),
        "tokenizer": "qwen2.5",
    }
    for profile in ("cpu", "paper")  # data-level: the cpu profile already covers every case
}
