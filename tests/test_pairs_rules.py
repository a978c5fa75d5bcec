"""Pairs Draft rules (RULES.md section 2), from explicit positions and scripted actions."""

import random
from collections import Counter

import pytest
from helpers import all_cards

from envs.engine import IllegalActionError
from envs.pairs_draft.game import PairsDraftGame, Score, score_cards

DECK = Counter({n: n for n in range(1, 11)})


def play(game, *numbers):
    for n in numbers:
        game.apply(game.text_to_action(f"play {n}"))


def taken(game):
    """The last round as (seat, number, forced, taker, face_up) tuples."""
    return [tuple(t) for t in game.previous_trick()]


def play_round(game, cards_by_seat):
    """Play one round, each seat's card from ``cards_by_seat``, in turn order."""
    for _ in range(4):
        play(game, cards_by_seat[game.current_player])


# -- taking the cards of a round (2.4) ---------------------------------------------------


def test_two_pairs_each_takes_own_card_face_up():
    game = PairsDraftGame.from_position([[5], [5], [7], [7]])
    play(game, 5, 5, 7, 7)
    assert [game.face_up(s) for s in range(4)] == [[5], [5], [7], [7]]
    assert all(game.face_down(s) == [] for s in range(4))
    assert taken(game) == [
        (0, 5, False, 0, True),
        (1, 5, False, 1, True),
        (2, 7, False, 2, True),
        (3, 7, False, 3, True),
    ]


def test_one_pair_higher_other_takes_both_face_down():
    game = PairsDraftGame.from_position([[5], [8], [5], [3]])
    play(game, 5, 8, 5, 3)
    assert game.face_up(0) == [5] and game.face_up(2) == [5]
    assert game.face_down(1) == [3, 8] and game.face_up(1) == []
    assert game.face_up(3) == [] and game.face_down(3) == []
    assert game.scores() == [0, -2, 0, 0]


def test_no_pair_lowest_keeps_own_highest_takes_other_three():
    game = PairsDraftGame.from_position([[4], [9], [2], [6]])
    play(game, 4, 9, 2, 6)
    assert game.face_up(2) == [2]
    assert game.face_down(1) == [4, 6, 9]
    assert [game.face_up(s) + game.face_down(s) for s in (0, 3)] == [[], []]
    assert game.scores() == [0, -3, 0, 0]


# -- pairs and forced cards (2.3) ----------------------------------------------------------


def test_paired_number_is_not_playable_while_holding_another():
    game = PairsDraftGame.from_position([[6, 1], [6, 2], [6, 3], [4, 5]])
    play(game, 6, 6)
    assert game.paired_numbers() == [6]
    assert game.legal_actions() == [game.text_to_action("play 3")]
    with pytest.raises(IllegalActionError, match="'play 6'.*player 2.*legal: play 3"):
        game.apply(game.text_to_action("play 6"))
    assert game.hand(2) == [3, 6] and len(game.current_trick()) == 2


def test_forced_card_counts_eleven_and_takes_the_other_card():
    game = PairsDraftGame.from_position([[6], [6], [6], [10]])
    play(game, 6, 6)
    assert game.legal_actions() == [5]  # holds only 6s: the paired 6 is forced
    play(game, 6, 10)
    assert taken(game)[2] == (2, 6, True, 2, False)
    # 11 beats 10: seat 2 takes its forced 6 and seat 3's 10 face down.
    assert game.face_down(2) == [6, 10] and game.face_down(3) == []
    assert game.face_up(0) == [6] and game.face_up(1) == [6]


def test_third_player_does_not_pair_a_paired_number_when_not_forced():
    # Seat 3 holds 6s and a 1: it must play the 1; its 6 can't join the pair.
    game = PairsDraftGame.from_position([[6, 2], [6, 3], [9, 4], [1, 6]])
    play(game, 6, 6, 9)
    assert game.legal_actions() == [0]
    play(game, 1)
    # B: 9 beats 1 and takes both.
    assert game.face_down(2) == [1, 9]


def test_two_forced_cards_pair_as_elevens_and_score_printed_number():
    game = PairsDraftGame.from_position([[6], [6], [6], [6]])
    play(game, 6, 6, 6)
    assert game.current_trick()[2].forced
    play(game, 6)
    assert [card.forced for card in game.previous_trick()] == [False, False, True, True]
    # A: a pair of 6s and a pair of 11s; every forced card goes face up as a 6.
    assert [game.face_up(s) for s in range(4)] == [[6], [6], [6], [6]]


def test_paired_numbers_last_for_the_round():
    game = PairsDraftGame.from_position([[6, 1], [6, 2], [6, 3], [4, 6]])
    play(game, 6)
    assert game.paired_numbers() == []
    play(game, 6)
    assert game.paired_numbers() == [6]
    play(game, 3)
    assert game.paired_numbers() == [6]
    assert game.legal_actions() == [3]  # seat 3 must play its 4
    play(game, 4)
    assert game.paired_numbers() == []
    play(game, 2, 6)  # round 2, led by seat 1: seat 2's 6 is an ordinary card again
    assert game.current_trick()[-1] == (2, 6, False) and game.paired_numbers() == []
    play(game, 6)
    assert game.current_trick()[-1] == (3, 6, False) and game.paired_numbers() == [6]


# -- round order ------------------------------------------------------------------------------


def test_start_player_moves_left_after_each_round_including_the_last():
    game = PairsDraftGame.from_position([[1, 2], [3, 4], [5, 6], [7, 8]], start_player=3)
    assert game.current_player == 3 and game.round_index == 0
    play(game, 7)  # seat 3 leads
    assert game.current_player == 0 and game.start_player == 3
    play(game, 1, 3, 5)
    assert game.start_player == 0 and game.current_player == 0 and game.round_index == 1
    assert [card.seat for card in game.previous_trick()] == [3, 0, 1, 2]
    assert game.current_trick() == []
    play(game, 2, 4, 6, 8)
    assert game.phase == "over" and game.current_player is None
    assert game.start_player == 1 and game.round_index == 2
    assert [card.seat for card in game.previous_trick()] == [0, 1, 2, 3]


# -- draft and discard (2.2) ---------------------------------------------------------------


def test_draft_passes_packs_left_after_all_four_picked():
    game = PairsDraftGame(seed=3)
    for pick in range(10):
        assert game.pick_index == pick
        before = [game.pack(s) for s in range(4)]
        hands_before = [game.hand(s) for s in range(4)]
        picks = {}
        for _ in range(4):
            seat = game.current_player
            action = game.legal_actions()[-1]
            picks[seat] = action + 1
            game.apply(action)
        assert list(picks) == [(game.start_player + i) % 4 for i in range(4)]
        for s in range(4):
            giver = (s - 1) % 4
            expected = list(before[giver])
            expected.remove(picks[giver])
            assert game.pack(s) == expected
            assert game.hand(s) == sorted(hands_before[s] + [picks[s]])


def test_draft_order_from_start_player_and_a_pick_touches_only_the_picker():
    game = PairsDraftGame(seed=5)
    start = game.start_player
    assert game.current_player == start and game.phase == "draft"
    packs = [game.pack(s) for s in range(4)]
    pack = game.pack(start)
    game.apply(game.text_to_action(f"pick {pack[0]}"))
    assert game.hand(start) == [pack[0]] and game.pack(start) == pack[1:]
    others = [s for s in range(4) if s != start]
    assert [game.pack(s) for s in others] == [packs[s] for s in others]
    assert all(game.hand(s) == [] for s in others)
    assert game.current_player == (start + 1) % 4 and game.pick_index == 0


def test_eleventh_pick_is_forced_but_still_an_action():
    game = PairsDraftGame(seed=8)
    while game.pick_index < 10:
        game.apply(game.legal_actions()[0])
    for _ in range(4):
        seat = game.current_player
        assert game.phase == "draft" and len(game.pack(seat)) == 1
        assert game.legal_actions() == [game.pack(seat)[0] - 1]
        game.apply(game.legal_actions()[0])
    assert game.phase == "discard" and game.pick_index == 11
    assert all(len(game.hand(s)) == 11 and game.pack(s) == [] for s in range(4))


def test_discard_each_seat_from_start_player_then_rounds_begin():
    game = PairsDraftGame(seed=13)
    while game.phase == "draft":
        game.apply(game.legal_actions()[0])
    start = game.start_player
    for i in range(4):
        seat = (start + i) % 4
        assert game.current_player == seat and game.phase == "discard"
        hand = game.hand(seat)
        assert len(hand) == 11 and game.legal_actions() == sorted({n - 1 for n in hand})
        game.apply(game.text_to_action(f"discard {hand[-1]}"))
        assert game.discarded(seat) == hand[-1] and game.hand(seat) == hand[:-1]
        later = [(start + j) % 4 for j in range(i + 1, 4)]
        assert all(len(game.hand(s)) == 11 and game.discarded(s) is None for s in later)
    assert game.phase == "play" and game.current_player == start and game.round_index == 0
    assert all(len(game.hand(s)) == 10 for s in range(4))
    assert game.scores() == [0, 0, 0, 0]  # the discard costs nothing


# -- scoring (2.5) -----------------------------------------------------------------------------


@pytest.mark.parametrize("kinds, points", [(1, 0), (2, 0), (3, 0), (4, 1), (5, 3), (6, 5), (7, 9), (8, 15), (9, 30)])
def test_distinct_numbers_table(kinds, points):
    assert score_cards(list(range(1, kinds + 1)), 0) == Score(points, False)


def test_ten_distinct_numbers_win_and_add_nothing():
    assert score_cards(list(range(1, 11)), 0) == Score(0, True)
    assert score_cards(list(range(1, 11)) + [9, 9], 3) == Score(6 - 3, True)


@pytest.mark.parametrize("copies, points", [(1, 0), (2, 2), (3, 6), (4, 20)])
def test_copies_table(copies, points):
    assert score_cards([7] * copies, 0) == Score(points, False)


@pytest.mark.parametrize("copies", [5, 6, 8])
def test_five_or_more_copies_win_and_add_nothing(copies):
    assert score_cards([8] * copies, 0) == Score(0, True)
    assert score_cards([8] * copies + [1, 2, 3, 3], 1) == Score(1 + 2 - 1, True)


def test_copies_score_per_number_and_face_down_costs_one_each():
    assert score_cards([2, 2, 5, 5, 5], 0) == Score(2 + 6, False)
    assert score_cards([], 4) == Score(-4, False)


def test_worked_example():
    assert score_cards([10, 9, 9, 8, 7, 7, 6, 4], 2) == Score(7, False)


def test_score_cards_rejects_bad_numbers():
    with pytest.raises(ValueError, match="11"):
        score_cards([11], 0)


# -- winners ------------------------------------------------------------------------------------


def test_winners_raises_before_the_end():
    game = PairsDraftGame.from_position([[1], [2], [3], [4]])
    with pytest.raises(ValueError, match="play phase"):
        game.winners()


def test_highest_total_wins():
    game = PairsDraftGame.from_position([[5], [5], [8], [3]])
    play(game, 5, 5, 8, 3)
    assert game.scores() == [0, 0, -2, 0]
    assert game.winners() == [0, 1, 3]  # tie shares


def test_sole_highest_total_wins():
    game = PairsDraftGame.from_position([[5, 5], [5, 6], [9, 7], [10, 8]])
    play_round(game, [5, 5, 9, 10])  # B: seat 3's 10 takes 9 and 10 face down
    play_round(game, [5, 6, 7, 8])  # C: seat 0's 5 is lowest, seat 3's 8 takes 6 7 8
    assert game.face_up(0) == [5, 5]
    assert game.scores() == [2, 0, 0, -5]
    assert game.winners() == [0]


def test_instant_winner_beats_higher_totals():
    game = PairsDraftGame.from_position([[7] * 5, [5] * 5, [8] * 5, [10] * 5])
    for _ in range(5):  # C: seat 1's 5 is lowest, seat 3's 10 takes the rest
        play_round(game, [7, 5, 8, 10])
    assert game.face_up(1) == [5] * 5
    assert game.scores() == [0, 0, 0, -15]
    assert game.winners() == [1]


def test_instant_winners_share_the_win_over_higher_totals():
    hands = [[7] * 5 + [9] * 5, [5] * 5 + [10] * 5, [8] * 5 + [7, 7, 8, 8, 8], [10] * 5 + [6] * 5]
    game = PairsDraftGame.from_position(hands)
    for _ in range(5):  # C: seat 1's 5 is lowest, seat 3's 10 takes the rest
        play_round(game, [7, 5, 8, 10])
    for second in (7, 7, 8, 8, 8):  # C: seat 3's 6 is lowest, seat 1's 10 takes the rest
        play_round(game, [9, 10, second, 6])
    assert game.phase == "over"
    assert game.face_up(1) == [5] * 5 and game.face_up(3) == [6] * 5
    assert game.scores() == [0, -15, 0, -15]
    assert game.winners() == [1, 3]


# -- actions and text ------------------------------------------------------------------------


def test_illegal_actions_raise_value_error_naming_the_action():
    game = PairsDraftGame.from_position([[1, 2], [3, 4], [5, 6], [7, 8]])
    with pytest.raises(
        ValueError, match=r"illegal action 'play 3' \(2\) for player 0; legal: play 1 \(0\), play 2 \(1\)"
    ):
        game.apply(2)
    for bad in (-1, 10, "1"):
        with pytest.raises(IllegalActionError):
            game.apply(bad)
    assert game.hand(0) == [1, 2] and game.current_player == 0


def test_no_action_is_legal_once_over():
    game = PairsDraftGame.from_position([[1], [2], [3], [4]])
    play(game, 1, 2, 3, 4)
    assert game.phase == "over" and game.legal_actions() == []
    with pytest.raises(IllegalActionError, match="the game is over"):
        game.apply(0)


def test_text_round_trips_with_the_verb_of_each_phase():
    game = PairsDraftGame(seed=2)
    seen = set()
    while game.phase != "over":
        verb = {"draft": "pick", "discard": "discard", "play": "play"}[game.phase]
        for action in range(10):
            text = game.action_to_text(action)
            assert text == f"{verb} {action + 1}"
            assert game.text_to_action(text) == action
        assert game.text_to_action(f"  {verb.upper()}   10 ") == 9
        seen.add(game.phase)
        game.apply(game.legal_actions()[0])
    assert seen == {"draft", "discard", "play"}


@pytest.mark.parametrize(
    "text, message",
    [
        ("play 3", "does not fit the draft phase: use 'pick <number>'"),
        ("discard 3", "does not fit the draft phase"),
        ("take 3", "unknown verb 'take'"),
        ("pick 0", "1-10"),
        ("pick 11", "1-10"),
        ("pick", "expected a verb and a number"),
        ("pick three", "expected a verb and a number"),
        ("pick 3 4", "expected a verb and a number"),
        ("", "expected a verb and a number"),
    ],
)
def test_bad_text_raises_value_error(text, message):
    with pytest.raises(ValueError, match=message):
        PairsDraftGame(seed=0).text_to_action(text)


def test_action_to_text_rejects_unknown_actions():
    game = PairsDraftGame(seed=0)
    for bad in (-1, 10):
        with pytest.raises(ValueError, match="actions are 0-9"):
            game.action_to_text(bad)


# -- from_position validation -----------------------------------------------------------------


@pytest.mark.parametrize(
    "hands, start, message",
    [
        ([[1], [2], [3]], 0, "need 4 hands, got 3"),
        ([[1, 2], [2], [3], [4]], 0, r"equal length, got lengths \[2, 1, 1, 1\]"),
        ([[], [], [], []], 0, "hand size must be 1-10, got 0"),
        (
            [[10] * 11, [9] * 9 + [8] * 2, [8] * 6 + [7] * 5, [7] * 2 + [6] * 6 + [5] * 3],
            0,
            "hand size must be 1-10, got 11",
        ),
        ([[1], [2], [11], [4]], 0, "seat 2: card 11 is not a number 1-10"),
        ([[1], [0], [3], [4]], 0, "seat 1: card 0"),
        ([[1], [2], ["3"], [4]], 0, "seat 2: card '3'"),
        ([[2], [2], [2], [4]], 0, "number 2 appears 3 times in the hands; the deck holds 2"),
        ([[1], [2], [3], [4]], 4, "start player must be a seat 0-3, got 4"),
    ],
)
def test_from_position_rejects_bad_positions(hands, start, message):
    with pytest.raises(ValueError, match=message):
        PairsDraftGame.from_position(hands, start_player=start)


def test_from_position_starts_the_rounds():
    game = PairsDraftGame.from_position([[1, 10], [2, 9], [3, 8], [4, 7]], start_player=2)
    assert game.phase == "play" and game.current_player == 2 and game.start_player == 2
    assert game.hand(2) == [3, 8] and game.legal_actions() == [2, 7]
    assert game.round_index == 0 and game.set_aside() == [] and game.discarded(0) is None
    assert game.scores() == [0, 0, 0, 0]


# -- whole games -----------------------------------------------------------------------------


def random_game(seed, action_seed):
    game = PairsDraftGame(seed=seed)
    rng = random.Random(action_seed)
    actions = []
    while game.phase != "over":
        action = rng.choice(game.legal_actions())
        actions.append(action)
        game.apply(action)
    return game, actions


def test_same_seed_and_actions_give_the_same_game():
    assert PairsDraftGame(seed=7).render() == PairsDraftGame(seed=7).render()
    first, actions = random_game(7, 1)
    second = PairsDraftGame(seed=7)
    for action in actions:
        second.apply(action)
    assert second.render() == first.render()
    assert second.scores() == first.scores() and second.winners() == first.winners()
    deals = {tuple(tuple(PairsDraftGame(seed=s).pack(p)) for p in range(4)) for s in range(5)}
    assert len(deals) == 5  # different seeds deal differently


def test_deal_gives_eleven_cards_to_each_and_sets_eleven_aside():
    game = PairsDraftGame(seed=4)
    assert all(len(game.pack(s)) == 11 and game.hand(s) == [] for s in range(4))
    assert len(game.set_aside()) == 11
    assert all_cards(game) == DECK
    assert game.num_players == 4 and game.pick_index == 0


def test_copy_is_independent():
    game = PairsDraftGame(seed=9)
    for _ in range(6):
        game.apply(game.legal_actions()[0])
    before = game.render()
    clone = game.copy()
    assert clone.render() == before
    while clone.phase != "over":
        clone.apply(clone.legal_actions()[-1])
    assert game.render() == before and game.phase == "draft"
    game.apply(game.legal_actions()[0])
    assert clone.phase == "over"

    game = PairsDraftGame.from_position([[5, 1], [5, 2], [9, 3], [4, 7]])
    play(game, 5, 5)
    clone = game.copy()
    play(clone, 9, 4)
    assert game.current_trick() == [(0, 5, False), (1, 5, False)] and game.face_up(0) == []
    assert game.paired_numbers() == [5] and clone.paired_numbers() == []
    assert clone.face_up(0) == [5] and clone.face_down(2) == [4, 9]


@pytest.mark.parametrize("seed", range(20))
def test_random_game_runs_to_the_end_with_every_card_accounted_for(seed):
    game = PairsDraftGame(seed=seed)
    rng = random.Random(seed)
    steps = 0
    while game.phase != "over":
        assert all_cards(game) == DECK
        game.apply(rng.choice(game.legal_actions()))
        steps += 1
    assert steps == 4 * 11 + 4 + 4 * 10
    assert all_cards(game) == DECK
    assert all(game.hand(s) == [] and game.discarded(s) is not None for s in range(4))
    assert sum(len(game.face_up(s)) + len(game.face_down(s)) for s in range(4)) == 40
    assert game.round_index == 10 and game.current_player is None
    assert game.winners() and set(game.winners()) <= {0, 1, 2, 3}
    assert "over" in game.render() and "winners" in game.render()


@pytest.mark.parametrize("start", [1.0, True, "1"])
def test_from_position_start_player_must_be_a_seat_number(start):
    with pytest.raises(ValueError, match="start player"):
        PairsDraftGame.from_position([[1], [2], [2], [3]], start)


def test_engine_apply_refuses_non_integer_actions():
    game = PairsDraftGame.from_position([[1], [2], [2], [3]])
    for bad in (0.0, True):
        with pytest.raises(IllegalActionError):
            game.apply(bad)
    game.apply(0)
    assert game.current_trick()[0].number == 1
