"""Chapter 6's card: what the book's pages know of it without running it."""

from cadlib.record.card import Card

CARD = Card(
    name="decoding",
    number="6",
    notebook="06_decoding",
    title="Decoding end to end",
    question=(
        "How much faster is the decoder end to end, against its bound and against prompt lookup?"
    ),
    paper=("§2.3", "§2.4", "App. H", "App. K", "App. P"),
    evidence=("full",),
    records=True,
)
