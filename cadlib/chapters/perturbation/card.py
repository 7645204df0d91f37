"""Chapter 5's card: what the book's pages know of it without running it."""

from cadlib.record.card import Card

CARD = Card(
    name="perturbation",
    number="5",
    notebook="05_perturbation",
    title="Span perturbation",
    question=("How precise must span selection be?"),
    paper=("§5", "Table 8"),
)
