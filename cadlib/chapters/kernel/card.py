"""Chapter 2's card: what the book's pages know of it without running it."""

from cadlib.record.card import Card

CARD = Card(
    name="kernel",
    number="2",
    notebook="02_kernel",
    title="The kernel",
    question=("How much faster is one parallel forward than N decode steps?"),
    paper=("§4.1", "App. H", "Table 17"),
    records=True,
)
