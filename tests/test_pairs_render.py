"""Pairs Draft ``render()``: the last round with who took what (face up or face down), the
round- and game-ending events, and plain-word prompts in the draft, discard and rounds."""

import textwrap

from envs.pairs_draft.game import PairsDraftGame


def play(game, *numbers):
    for n in numbers:
        game.apply(game.text_to_action(f"play {n}"))


def play_round(game, cards_by_seat):
    """Play one round, each seat's card from ``cards_by_seat``, in turn order."""
    for _ in range(4):
        play(game, cards_by_seat[game.current_player])


def lines(game):
    return game.render().splitlines()


def expected(text):
    """Rendered lines written as they print, in an indented triple-quoted string."""
    return textwrap.dedent(text).strip("\n").splitlines()


def block(game):
    """The lines of the last-round block: its title, then its indented lines."""
    text = lines(game)
    first = next(i for i, line in enumerate(text) if line.startswith("last round"))
    end = first + 1
    while end < len(text) and text[end].startswith("  "):
        end += 1
    return text[first:end]


# -- the last round -----------------------------------------------------------------------


def test_no_pair_round_shows_each_play_the_lowest_face_up_and_the_highest_taking_the_rest():
    game = PairsDraftGame.from_position([[4, 1], [9, 2], [2, 3], [6, 5]])
    assert not any(line.startswith("last round") for line in lines(game))  # nothing played yet
    play(game, 4, 9, 2, 6)
    assert block(game) == expected("""
        last round (1/2, led by seat 0): no pair
          seat 0 played 4: face down to seat 1
          seat 1 played 9: face down to seat 1, the highest unpaired card
          seat 2 played 2: face up, the lowest card
          seat 3 played 6: face down to seat 1
          seat 1 takes 4 6 9 face down: -3 points
          seat 1 leads round 2
        """)
    assert "seat 1: hand [2] face up [] face down [4 6 9] score -3" in lines(game)
    assert lines(game)[-1] == "seat 1 plays a number from its hand: 2"


def test_one_pair_round_shows_the_pair_face_up_and_who_took_the_other_two():
    game = PairsDraftGame.from_position([[5, 1], [8, 2], [5, 3], [3, 4]])
    play(game, 5, 8, 5, 3)
    assert block(game)[:6] == expected("""
        last round (1/2, led by seat 0): one pair (5s)
          seat 0 played 5: face up, paired with seat 2
          seat 1 played 8: face down to seat 1, the highest unpaired card
          seat 2 played 5: face up, paired with seat 0
          seat 3 played 3: face down to seat 1
          seat 1 takes 3 8 face down: -2 points
        """)


def test_two_pairs_round_everyone_keeps_their_card_face_up():
    game = PairsDraftGame.from_position([[5, 1], [7, 2], [7, 3], [5, 4]], start_player=2)
    play(game, 7, 5, 5, 7)
    assert block(game) == expected("""
        last round (1/2, led by seat 2): two pairs (5s, 7s)
          seat 2 played 7: face up, paired with seat 1
          seat 3 played 5: face up, paired with seat 0
          seat 0 played 5: face up, paired with seat 3
          seat 1 played 7: face up, paired with seat 2
          everyone keeps their card face up
          seat 3 leads round 2
        """)


def test_forced_card_is_shown_as_eleven_in_play_and_in_the_last_round():
    game = PairsDraftGame.from_position([[6], [6], [6], [10]])
    play(game, 6, 6)
    assert "this round (led by seat 0): seat 0 played 6, seat 1 played 6" in lines(game)
    assert lines(game)[-1] == (
        "seat 2 holds only numbers already paired this round, so it must play one; it counts 11 for taking cards: 6"
    )
    play(game, 6)
    assert "this round (led by seat 0): seat 0 played 6, seat 1 played 6, seat 2 played 6 (forced: counts 11)" in lines(
        game
    )
    play(game, 10)
    assert block(game) == expected("""
        last round (1/1, led by seat 0): one pair (6s)
          seat 0 played 6: face up, paired with seat 1
          seat 1 played 6: face up, paired with seat 0
          seat 2 played 6 (forced: counts 11): face down to seat 2, the highest unpaired card
          seat 3 played 10: face down to seat 2
          seat 2 takes 6 10 face down: -2 points
          that was the last round: the game is over
        """)


def test_two_forced_cards_are_a_pair_of_elevens():
    game = PairsDraftGame.from_position([[6], [6], [6], [6]])
    play(game, 6, 6, 6, 6)
    assert block(game)[0] == "last round (1/1, led by seat 0): two pairs (6s, forced 11s)"
    assert "  seat 3 played 6 (forced: counts 11): face up, paired with seat 2" in block(game)


def test_paired_number_is_named_as_not_playable_in_the_prompt():
    game = PairsDraftGame.from_position([[6, 1], [6, 2], [6, 3], [4, 5]])
    play(game, 6, 6)
    assert lines(game)[-1] == "seat 2 plays a number from its hand: 3 (6 paired this round: not playable)"


# -- round- and game-ending events ------------------------------------------------------------


def test_five_copies_instant_win_is_announced_in_the_round_that_brings_it_and_at_the_end():
    game = PairsDraftGame.from_position([[7] * 5, [5] * 5, [8] * 5, [10] * 5])
    for _ in range(4):  # C: seat 1's 5 is lowest and stays face up
        play_round(game, [7, 5, 8, 10])
    assert "instant win" not in game.render()
    play_round(game, [7, 5, 8, 10])
    assert (
        "  instant win: seat 1 now has 5 copies of 5 face up; it wins when the game ends"
        " (shared with any other instant winner)"
    ) in block(game)
    assert "seat 1: hand [] face up [5 5 5 5 5] face down [] score 0 (instant win)" in lines(game)
    assert lines(game)[-1] == "winners: 1 (instant win: seat 1 has 5 copies of 5 face up)"


def test_ten_numbers_instant_win_and_the_last_round_ends_the_game():
    # Seat 0 keeps its 1 as the lowest card, then pairs 2..10 with seat 1 while seats 2
    # and 3 pair other numbers: it ends with ten different numbers face up.
    hands = [
        list(range(1, 11)),
        [9] + list(range(2, 11)),
        [10, 10, 10, 10, 9, 9, 9, 7, 7, 6],
        [8, 10, 10, 10, 9, 9, 9, 7, 7, 6],
    ]
    game = PairsDraftGame.from_position(hands)
    play_round(game, [1, 9, 10, 8])
    others = dict(zip(range(2, 11), [10, 10, 10, 9, 9, 9, 7, 7, 6]))
    for n in range(2, 11):
        assert "instant win" not in game.render()
        play_round(game, [n, n, others[n], others[n]])
    assert game.phase == "over" and game.winners() == [0]
    assert block(game)[-2:] == [
        "  instant win: seat 0 now has 10 different numbers face up; it wins when the game ends"
        " (shared with any other instant winner)",
        "  that was the last round: the game is over",
    ]
    assert lines(game)[-1] == "winners: 0 (instant win: seat 0 has 10 different numbers face up)"


def test_winners_by_highest_score_say_so_and_ties_share():
    game = PairsDraftGame.from_position([[5], [5], [8], [3]])
    play(game, 5, 5, 8, 3)
    assert game.render().splitlines()[0] == "Pairs Draft: over, start player 1"
    assert lines(game)[-1] == "winners: 0 1 3 (highest score: 0, shared)"


# -- draft and discard prompts ---------------------------------------------------------------


def test_draft_says_which_pack_each_seat_holds_and_what_the_seat_to_act_does():
    game = PairsDraftGame(seed=7)
    start = game.start_player
    text = lines(game)
    assert text[1].startswith("draft, pick 1 of 11: each seat keeps one number from the pack it holds")
    for seat in range(4):
        assert f"seat {seat}: pack [{' '.join(map(str, game.pack(seat)))}] (dealt to seat {seat}), picked []" in text
    choices = ", ".join(map(str, sorted(set(game.pack(start)))))
    assert text[-1] == f"seat {start} picks a number from its pack to keep: {choices}"
    for _ in range(4):  # one full pick: the packs pass left
        game.apply(game.legal_actions()[0])
    text = lines(game)
    assert text[1].startswith("draft, pick 2 of 11")
    assert all(
        f"seat {seat}: pack [{' '.join(map(str, game.pack(seat)))}] (dealt to seat {(seat - 1) % 4})" in game.render()
        for seat in range(4)
    )
    while game.pick_index < 10:
        game.apply(game.legal_actions()[0])
    assert lines(game)[-1] == f"seat {start} takes the last card of its pack: {game.pack(start)[0]}"


def test_discard_prompt_in_plain_words():
    game = PairsDraftGame(seed=7)
    while game.phase == "draft":
        game.apply(game.legal_actions()[0])
    seat = game.current_player
    text = lines(game)
    assert text[1].startswith("discard: each seat puts one of its 11 cards out of the game face down")
    choices = ", ".join(map(str, sorted(set(game.hand(seat)))))
    assert text[-1] == f"seat {seat} discards one card face down: {choices}"
    hand = game.hand(seat)
    game.apply(game.text_to_action(f"discard {hand[0]}"))
    assert f"seat {seat}: hand [{' '.join(map(str, hand[1:]))}] discarded {hand[0]}" in lines(game)
    assert lines(game)[-1].startswith(f"seat {(seat + 1) % 4} discards one card face down: ")


def test_render_changes_no_state():
    game = PairsDraftGame.from_position([[5, 1], [8, 2], [5, 3], [3, 4]])
    play(game, 5, 8, 5)
    before = (game.legal_actions()[:], game.current_trick(), game.scores())
    game.render()
    assert (game.legal_actions(), game.current_trick(), game.scores()) == before
