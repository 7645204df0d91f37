"""Chapter 1's command: ``python -m cadlib.chapters.losslessness.commands fetch`` (``make
vocab``) fetches llama.cpp's vocabulary files for Appendix K
(:func:`cadlib.models.tokenizer.fetch_vocabs`), converts DeepSeek-Coder's and Llama 3's once
into the cadlib cache, and prints how many of llama.cpp's test strings each conversion
tokenizes to llama.cpp's expected ids."""

from __future__ import annotations

import argparse

from cadlib.models.tokenizer import VOCAB_FILES, fetch_vocabs, reference_agreement

from .run_portability import load

__all__ = ["fetch", "main"]


def fetch() -> int | str:
    """Fetch and convert the vocabularies; 0, or a message naming those that did not load."""
    print(fetch_vocabs())
    toks, missing = load(VOCAB_FILES)  # converted once, cached for the chapters
    for name, tok in toks.items():
        agree, n = reference_agreement(name, tok)
        print(f"{name}: agrees with llama.cpp on {agree} of {n} test strings")
    return f"not loaded: {missing}" if missing else 0


def main(argv: list[str] | None = None) -> int | str:
    """``python -m cadlib.chapters.losslessness.commands fetch``."""
    parser = argparse.ArgumentParser(
        prog="python -m cadlib.chapters.losslessness.commands",
        description=__doc__.split("\n\n")[0],
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("fetch", help="fetch and convert llama.cpp's vocabulary files")
    parser.parse_args(argv)
    return fetch()


if __name__ == "__main__":
    raise SystemExit(main())
