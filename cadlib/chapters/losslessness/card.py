"""Chapter 1's card: what the book's pages know of it without running it."""

from cadlib.record.card import Card

CARD = Card(
    name="losslessness",
    number="1",
    notebook="01_losslessness",
    title="Losslessness",
    question=(
        "Does the resolver invert every oracle program, byte for byte, and under which "
        "tokenizers does the FSM work?"
    ),
    paper=("§2.2", "§4.3", "Table 4", "App. I", "App. K"),
)
