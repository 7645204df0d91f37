"""Chapter 4's card: what the book's pages know of it without running it."""

from cadlib.record.card import Card

CARD = Card(
    name="formats",
    number="4",
    notebook="04_formats",
    title="Edit formats",
    question=("What do regeneration, search/replace and unified diff cost for the same edits?"),
    paper=("§4.4", "Table 3"),
)
