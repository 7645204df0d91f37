"""Chapter 7's card: what the book's pages know of it without running it."""

from cadlib.record.card import Card

CARD = Card(
    name="sft_pilot",
    number="7",
    notebook="07_sft_pilot",
    title="The SFT pilot",
    question=("Can a small model learn to select spans?"),
    paper=("§5", "Table 6", "Table 7", "Table 22"),
    evidence=("seeds", "full"),
    records=True,
)
