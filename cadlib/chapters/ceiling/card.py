"""Chapter 3's card: what the book's pages know of it without running it."""

from cadlib.record.card import Card

CARD = Card(
    name="ceiling",
    number="3",
    notebook="03_ceiling",
    title="The copy ceiling",
    question=(
        "How much of each gold output can copy ops cover, what speedup does that bound, "
        "and what would a pointer decoder or speculation add?"
    ),
    paper=("§4.2", "Table 2", "App. D", "App. L", "App. M", "App. N"),
)
