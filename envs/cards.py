"""Card notation shared by every game (RULES.md): rank ``A 2 3 4 5 6 7 8 9 T J Q K``
(``10`` accepted for ``T`` on input) followed by suit ``C D H S``.

A card is the integer ``rank * 4 + suit`` (rank 0 = A … 12 = K, suit 0 = C … 3 = S), so
sorting integers sorts by rank A…K, then suit C D H S. Sets of cards are bit sets
(Python ints, bit ``card`` set), which keeps hand arithmetic allocation-free.
"""

from __future__ import annotations

RANKS = "A23456789TJQK"
SUITS = "CDHS"
NUM_CARDS = 52
FULL_DECK = (1 << NUM_CARDS) - 1


def card_to_text(card: int) -> str:
    return RANKS[card >> 2] + SUITS[card & 3]


def parse_card(text: str) -> int:
    """``"7H"`` → 26. Raises ``ValueError`` naming the text for anything else."""
    t = text.strip().upper()
    if t.startswith("10"):
        t = "T" + t[2:]
    if len(t) != 2 or t[0] not in RANKS or t[1] not in SUITS:
        raise ValueError(f"unknown card {text!r}: expected rank A23456789TJQK (or 10) then suit CDHS, e.g. '7H'")
    return RANKS.index(t[0]) * 4 + SUITS.index(t[1])


def parse_suit(text: str) -> int:
    t = text.strip().upper()
    if len(t) != 1 or t not in SUITS:
        raise ValueError(f"unknown suit {text!r}: expected one of C D H S")
    return SUITS.index(t)


def bits_to_cards(bits: int) -> list[int]:
    """Cards of a bit set, ascending."""
    out = []
    while bits:
        low = bits & -bits
        out.append(low.bit_length() - 1)
        bits ^= low
    return out


def cards_to_bits(cards) -> int:
    bits = 0
    for c in cards:
        bits |= 1 << c
    return bits


# Bit sets of all cards of one suit / one rank, used for legality tests.
SUIT_BITS = tuple(sum(1 << (r * 4 + s) for r in range(13)) for s in range(4))
RANK_BITS = tuple(sum(1 << (r * 4 + s) for s in range(4)) for r in range(13))
