"""Chapter 6c's card: what the book's pages know of it without running it."""

from cadlib.record.card import Card

CARD = Card(
    name="kv_reuse",
    number="6c",
    notebook="06c_kv_reuse",
    title="Copies without prefill",
    question=(
        "Can copied lines reuse the prompt's KV entries instead of a prefill, and how "
        "often do greedy decisions still agree with the exact splice?"
    ),
    paper=(),
    evidence=("agreement",),
    records=True,
)
