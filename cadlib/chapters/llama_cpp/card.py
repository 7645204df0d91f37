"""Chapter 6b's card: what the book's pages know of it without running it."""

from cadlib.record.card import Card

CARD = Card(
    name="llama_cpp",
    number="6b",
    notebook="06b_llama_cpp",
    title="On llama.cpp",
    question=("Does the same decoder pay off on llama.cpp, the engine CPU users run?"),
    paper=(),
    records=True,
)
