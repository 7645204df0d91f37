"""Chapter 8's card: what the book's pages know of it without running it."""

from cadlib.record.card import Card

CARD = Card(
    name="fim",
    number="8",
    notebook="08_fim_constraint",
    title="The FIM constraint",
    question=(
        "Does the quotient-grammar constraint make gen bodies and FIM completions end "
        "where the file parses?"
    ),
    paper=(),
    evidence=("large",),
    records=True,
)
