"""Property tests over random rule options, seat counts and seeds (hypothesis): invariants
of both engines that must hold in every position of every game."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from envs.craits import CraitsGame, Rules
from envs.craits.rules import CHOICES
from envs.pairs_draft import PairsDraftGame
from envs.pairs_draft.game import DECK

craits_rules = st.fixed_dictionaries(
    {name: st.sampled_from(values) for name, values in CHOICES.items()}
    | {"deals": st.lists(st.integers(1, 10), min_size=1, max_size=3)}
)


def _check_actions(game):
    legal = game.legal_actions()
    assert legal == sorted(set(legal))
    for action in legal:  # every legal action reads back from its text
        assert game.text_to_action(game.action_to_text(action)) == action
    return legal


@settings(max_examples=40, deadline=None)
@given(options=craits_rules, players=st.integers(2, 5), partnership=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_craits_games_keep_every_card_and_end(options, players, partnership, seed):
    partnership = partnership and players == 4
    rules = Rules(**options, partnership=partnership)
    game = CraitsGame(rules, players, seed)
    rng = random.Random(seed)
    steps = 0
    while not game.game_over:
        legal = _check_actions(game)
        assert legal, "no legal action before the end of the game"
        cards = [c for s in range(players) for c in game.hand(s)] + [game.top]
        assert len(cards) == len(set(cards))
        assert sum(game.hand_size(s) for s in range(players)) + len(game.stock) + len(game.discard) == 52
        assert (game.crank > 0) == (game.phase == "crank")
        game.apply(rng.choice(legal))
        steps += 1
        assert steps < 200_000
    assert game.legal_actions() == []
    totals = [sum(game.scores()[s] for s in side) for side in game.sides()]
    assert game.winners() == sorted(
        s for side, total in zip(game.sides(), totals) if total == min(totals) for s in side
    )


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), cut=st.integers(0, 87))
def test_pairs_draft_copy_replays_identically(seed, cut):
    """A copy taken at any point plays on exactly like the original."""
    game = PairsDraftGame(seed)
    rng = random.Random(seed)
    for _ in range(cut):
        game.apply(rng.choice(_check_actions(game)))
    twin = game.copy()
    while game.phase != "over":
        action = rng.choice(_check_actions(game))
        assert twin.legal_actions() == game.legal_actions()
        game.apply(action)
        twin.apply(action)
        held = sum(
            len(game.hand(s))
            + len(game.pack(s))
            + len(game.face_up(s))
            + len(game.face_down(s))
            + (game.discarded(s) is not None)
            for s in range(4)
        )
        assert held + len(game.set_aside()) + len(game.current_trick()) == len(DECK)
    assert twin.scores() == game.scores() and twin.winners() == game.winners()
