"""Craits rules, one explicit position per rule line of RULES.md section 1.

Every test builds its position with ``CraitsGame.from_position`` (or, for upcards and
deals, a seeded ``CraitsGame``) and drives it with action texts through the public API.
Where the two presets (``craits``, ``create``) differ the test is parametrized over both.
"""

from __future__ import annotations

import random

import pytest

from envs.craits import CraitsGame, Rules, hand_points

PRESETS = ("craits", "create")
FULL = (8, 7, 6, 5, 4, 3, 2, 1, 2, 3, 4, 5, 6, 7, 8)
ALL_CARDS = {r + s for r in "A23456789TJQK" for s in "CDHS"}


# ----------------------------------------------------------------------------- helpers
def rules(preset="craits", **options):
    """A preset with overrides; one deal of 5 cards unless ``deals`` is given."""
    options.setdefault("deals", [5])
    return Rules.preset(preset, **options)


def pos(hands, top, stock=(), r=None, **kw):
    return CraitsGame.from_position(r if r is not None else rules(), hands, top, list(stock), **kw)


def act(g, *texts):
    for text in texts:
        g.apply(g.text_to_action(text))


def legal(g):
    return {g.action_to_text(a) for a in g.legal_actions()}


def hand(g, seat):
    return set(g.hand(seat))


def stock_texts(g):
    """The stock as card text, top first (``action_to_text(c)`` of card c is ``play <c>``)."""
    return [g.action_to_text(c)[5:] for c in reversed(g.stock)]


def upcard_game(r, n, rank):
    """A fresh game whose first upcard has ``rank`` (seed search)."""
    for seed in range(5000):
        g = CraitsGame(r, n, seed)
        if g.top[0] == rank:
            return g
    raise AssertionError(f"no seed gives an upcard of rank {rank}")


def pts(cards, preset="craits"):
    return hand_points(list(cards), Rules.preset(preset))


# ===================================================================== 1.1 presets, options
def test_default_rules_are_the_craits_preset():
    r = Rules()
    assert r == Rules.preset("craits") == Rules.preset()
    assert (r.crank_count, r.nine, r.seven_target, r.empty_stock, r.three_scoring, r.missed_announce_penalty) == (
        "value",
        "same_colour",
        "next",
        "reshuffle",
        "craits",
        "draw_2_lose_turn",
    )
    assert r.announce == "auto" and r.partnership is False and tuple(r.deals) == FULL


def test_create_preset_options():
    r = Rules.preset("create")
    assert (r.crank_count, r.nine, r.seven_target, r.empty_stock, r.three_scoring, r.missed_announce_penalty) == (
        "cards",
        "own_suit",
        "next_but_one",
        "pressure",
        "create",
        "draw_2",
    )
    # options independent of the preset keep their defaults
    assert r.announce == "auto" and r.partnership is False and tuple(r.deals) == FULL


def test_preset_overrides():
    r = Rules.preset(
        "craits", seven_target="next_but_one", deals=[5], announce="action", partnership=True, empty_stock="pressure"
    )
    assert r.seven_target == "next_but_one" and tuple(r.deals) == (5,) and r.announce == "action"
    assert r.partnership is True and r.empty_stock == "pressure" and r.crank_count == "value"


@pytest.mark.parametrize(
    "option,value",
    [
        ("crank_count", "double"),
        ("nine", "any"),
        ("seven_target", "previous"),
        ("empty_stock", "stop"),
        ("three_scoring", "poker"),
        ("missed_announce_penalty", "none"),
        ("announce", "shout"),
        ("partnership", "yes"),
        ("deals", "long"),
        ("deals", [0]),
        ("deals", []),
        ("deals", [3, -1]),
        ("deals", [2.5]),
        ("deals", ["x"]),
    ],
)
def test_bad_option_value_raises_naming_it(option, value):
    with pytest.raises(ValueError, match=option):
        Rules.preset("craits", **{option: value})


def test_unknown_option_and_preset_raise_naming_them():
    with pytest.raises(ValueError, match="jokers"):
        Rules.preset("craits", jokers=True)
    with pytest.raises(ValueError, match="poker"):
        Rules.preset("poker")


def test_number_of_players_two_to_five_default_four():
    assert CraitsGame(rules(), seed=1).num_players == 4
    for n in (2, 3, 4, 5):
        assert CraitsGame(rules(), n, seed=1).num_players == n
    for n in (1, 6):
        with pytest.raises(ValueError):
            CraitsGame(rules(), n, seed=1)


def test_partnership_only_with_four_players_raised_at_creation():
    r = rules(partnership=True)  # the option itself is fine
    CraitsGame(r, 4, seed=1)
    for n in (2, 3, 5):
        with pytest.raises(ValueError, match="partnership"):
            CraitsGame(r, n, seed=1)
    with pytest.raises(ValueError, match="partnership"):
        pos([["KC"], ["KD"], ["KH"]], "7C", r=r)


def test_deals_full_short_explicit():
    assert tuple(Rules().deals) == FULL
    assert tuple(Rules.preset("craits", deals="full").deals) == FULL
    assert tuple(Rules.preset("craits", deals="short").deals) == (8, 7, 6, 5, 4, 3, 2, 1)
    assert tuple(Rules.preset("craits", deals=[3, 1, 4]).deals) == (3, 1, 4)


@pytest.mark.parametrize("n,ok,bad", [(2, 25, 26), (3, 17, 18), (4, 12, 13), (5, 10, 11)])
def test_deal_size_needs_players_times_size_plus_one_at_most_52(n, ok, bad):
    g = CraitsGame(rules(deals=[ok]), n, seed=3)
    assert g.hand_size(0) >= ok
    with pytest.raises(ValueError, match="deals"):
        CraitsGame(rules(deals=[bad]), n, seed=3)


# ============================================================== 1.2 deck, deal, dealer
@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_one_52_card_deck_no_jokers(n):
    g = CraitsGame(rules(deals=[5]), n, seed=11)
    cards = [c for s in range(n) for c in g.hand(s)] + [g.top] + stock_texts(g)
    assert len(cards) == 52 and set(cards) == ALL_CARDS


def _expected_deal_start(g, r, n):
    """What RULES.md 1.2/1.3 say the table looks like right after a deal is dealt."""
    d, rank, size = g.dealer, g.top[0], r.deals[g.deal_index]
    sizes = [size] * n
    cur, phase, direction = (d + 1) % n, "play", 1
    if rank == "2":
        phase = "crank"
    elif rank == "4":
        cur = (d + 2) % n
    elif rank == "5":
        sizes = [size + (s != d) for s in range(n)]
    elif rank == "6":
        cur, phase = d, "extra_turn"
    elif rank == "7":
        target = (d + (2 if r.seven_target == "next_but_one" and n > 2 else 1)) % n
        sizes[target] += 1
    elif rank == "8" or (rank == "9" and r.nine == "same_colour"):
        cur, phase = d, "blind_suit"
    elif rank == "T" and n > 2:
        cur, direction = (d - 1) % n, -1
    return sizes, cur, phase, direction


@pytest.mark.parametrize(
    "preset,n,deals",
    [
        ("craits", 4, "full"),
        ("create", 4, "full"),
        ("craits", 2, "short"),
        ("create", 3, "short"),
        ("craits", 5, [1, 2, 3, 1, 2, 3, 1]),
        ("create", 5, "short"),
    ],
)
def test_every_deal_dealt_by_the_next_seat_with_its_hand_size(preset, n, deals):
    """First dealer seat 0, the deal passes left; every seat gets the hand size; the upcard
    acts as the dealer's play; every deal starts going left; game score = sum over deals."""
    r = Rules.preset(preset, deals=deals)
    rng = random.Random(5)
    g = CraitsGame(r, n, seed=17)
    dealt = []
    totals = [0] * n

    def check():
        dealt.append(g.dealer)
        assert g.dealer == g.deal_index % n
        sizes, cur, phase, direction = _expected_deal_start(g, r, n)
        assert [g.hand_size(s) for s in range(n)] == sizes, g.render()
        assert (g.current_player, g.phase, g.direction) == (cur, phase, direction), g.render()
        assert sum(sizes) + len(g.stock) + 1 == 52

    check()
    while not g.game_over:
        g.apply(rng.choice(g.legal_actions()))
        if g.deal_over:
            totals = [t + p for t, p in zip(totals, g.last_deal_points)]
            assert g.scores() == totals
            if not g.game_over:
                check()
    assert dealt == [i % n for i in range(len(r.deals))]
    assert g.deal_index == len(r.deals) - 1


# =============================================================== 1.3 turn order, upcard
def test_play_goes_left():
    g = pos([["QC", "KD"], ["JC", "KH"], ["3C", "KS"], ["AC", "QD"]], "KC", ["4D", "4H"])
    order = []
    for card in ("QC", "JC", "3C", "AC"):
        order.append(g.current_player)
        act(g, "play " + card)
    assert order == [0, 1, 2, 3] and g.current_player == 0 and g.direction == 1


def test_ten_reverses_direction_and_again():
    g = pos([["TC", "TH", "KD"], ["QH", "JD", "3D"], ["QC", "JH", "JS"], ["KC", "QS", "AD"]], "5C", ["4D", "4H"])
    act(g, "play TC")
    assert g.direction == -1 and g.current_player == 3
    act(g, "play KC")
    assert g.current_player == 2
    act(g, "play QC")
    assert g.current_player == 1
    act(g, "play QH")
    assert g.current_player == 0
    act(g, "play TH")
    assert g.direction == 1 and g.current_player == 1


def test_every_deal_starts_going_left_again():
    """A deal that ends while play goes right: the next deal goes left (unless its upcard is a 10)."""
    g = pos([["KC"], ["QD", "JD"], ["QS", "JS"], ["QH", "JH"]], "5C", ["4D", "4H"], r=rules(deals=[5, 5]), direction=-1)
    assert g.direction == -1
    act(g, "play KC")
    assert g.deal_over and not g.game_over and g.deal_index == 1 and g.dealer == 1
    assert g.direction == (-1 if g.top[0] == "T" else 1)


@pytest.mark.parametrize("preset,count", [("craits", 2), ("create", 1)])
def test_upcard_2_starts_a_crank_as_the_dealers_play(preset, count):
    g = upcard_game(rules(preset), 4, "2")
    assert g.dealer == 0 and g.phase == "crank" and g.crank == count and g.current_player == 1
    assert [g.hand_size(s) for s in range(4)] == [5, 5, 5, 5]
    assert legal(g) == ({f"play {c}" for c in g.hand(1) if c[0] in "A2"} or {"draw"})


@pytest.mark.parametrize("n,after", [(4, 2), (3, 2), (2, 0)])
def test_upcard_4_skips_the_player_after_the_dealer(n, after):
    g = upcard_game(rules(), n, "4")
    assert g.dealer == 0 and g.current_player == after and g.phase == "play"
    assert all(g.hand_size(s) == 5 for s in range(n))


@pytest.mark.parametrize("n", [2, 4])
def test_upcard_5_makes_every_other_player_draw(n):
    g = upcard_game(rules(), n, "5")
    assert [g.hand_size(s) for s in range(n)] == [5] + [6] * (n - 1)
    assert g.current_player == 1 and g.phase == "play"


def test_upcard_6_gives_the_dealer_an_ordinary_turn_at_once():
    g = upcard_game(rules(), 4, "6")
    assert g.current_player == 0 and g.phase == "extra_turn"
    top = g.top
    expected = {f"play {c}" for c in g.hand(0) if c[1] == top[1] or c[0] in "689"} or {"draw"}
    assert legal(g) == expected
    if legal(g) == {"draw"}:
        act(g, "draw")
        assert g.current_player == 1 and g.hand_size(0) == 6 and g.phase == "play"
    else:
        a = g.legal_actions()[0]
        g.apply(a)
        assert g.top == g.action_to_text(a)[5:] and g.hand_size(0) == 4


def _second_deal_upcard(rank, n=4):
    """A game (deals 1 then 5 cards) whose second deal, dealt by seat 1, has an upcard of ``rank``."""
    r = rules(deals=[1, 5])
    for seed in range(3000):
        g = CraitsGame(r, n, seed)
        rng = random.Random(seed)
        while g.deal_index == 0:
            g.apply(rng.choice(g.legal_actions()))
        if g.top[0] == rank:
            return g
    raise AssertionError(f"no seed gives a second-deal upcard of rank {rank}")


@pytest.mark.parametrize(
    "rank,player,phase,direction",
    [
        ("T", 0, "play", -1),
        ("4", 3, "play", 1),
        ("6", 1, "extra_turn", 1),
        ("8", 1, "blind_suit", 1),
        ("2", 2, "crank", 1),
        ("K", 2, "play", 1),
    ],
)
def test_upcard_of_a_later_deal_is_its_dealers_play(rank, player, phase, direction):
    g = _second_deal_upcard(rank)
    assert g.dealer == 1 and g.deal_index == 1
    assert (g.current_player, g.phase, g.direction) == (player, phase, direction)


@pytest.mark.parametrize(
    "preset,n,target", [("craits", 4, 1), ("create", 4, 2), ("craits", 2, 1), ("create", 2, 1), ("create", 3, 2)]
)
def test_upcard_7_hits_its_target(preset, n, target):
    g = upcard_game(rules(preset), n, "7")
    assert [g.hand_size(s) for s in range(n)] == [6 if s == target else 5 for s in range(n)]
    assert g.current_player == 1 and g.phase == "play"


@pytest.mark.parametrize("preset", PRESETS)
def test_upcard_8_dealer_names_any_suit_blind(preset):
    g = upcard_game(rules(preset), 4, "8")
    assert g.current_player == 0 and g.phase == "blind_suit"
    assert legal(g) == {"suit C", "suit D", "suit H", "suit S"}
    other = next(s for s in "CDHS" if s != g.top[1])
    act(g, "suit " + other)
    assert g.suit == other and g.top[0] == "8" and g.current_player == 1 and g.phase == "play"


def test_upcard_9_same_colour_dealer_names_one_of_two_suits_blind():
    g = upcard_game(rules("craits"), 4, "9")
    pair = {"C": "CS", "S": "CS", "D": "DH", "H": "DH"}[g.top[1]]
    assert g.current_player == 0 and g.phase == "blind_suit"
    assert legal(g) == {"suit " + s for s in pair}
    other = pair.replace(g.top[1], "")
    act(g, "suit " + other)
    assert g.suit == other and g.current_player == 1 and g.phase == "play"


def test_upcard_9_own_suit_stands():
    g = upcard_game(rules("create"), 4, "9")
    assert g.phase == "play" and g.current_player == 1 and g.suit == g.top[1]


@pytest.mark.parametrize("n,after,direction", [(4, 3, -1), (3, 2, -1), (5, 4, -1), (2, 1, 1)])
def test_upcard_10_reverses_so_the_dealers_right_plays_next(n, after, direction):
    g = upcard_game(rules(), n, "T")
    assert g.direction == direction and g.current_player == after and g.phase == "play"


@pytest.mark.parametrize("rank", ["A", "3", "J", "Q", "K"])
def test_upcard_without_power_next_player_takes_first_turn(rank):
    g = upcard_game(rules(), 4, rank)
    assert g.current_player == 1 and g.phase == "play" and g.crank == 0 and g.direction == 1
    assert all(g.hand_size(s) == 5 for s in range(4))


# ====================================================================== 1.4 ordinary turn
def test_legal_plays_suit_rank_and_wilds():
    g = pos([["2H", "7C", "8S", "9D", "KC", "3S", "AD"], ["QD", "JD"]], "7H", ["4C"])
    assert legal(g) == {"play 2H", "play 7C", "play 8S", "play 9D"}


def test_legal_plays_follow_the_suit_named_for_an_8():
    g = pos([["3S", "8H", "9D", "4C", "KH", "8D"], ["QD", "JD"]], "8C", ["4D"], suit="S")
    assert g.suit == "S"
    assert legal(g) == {"play 3S", "play 8H", "play 9D", "play 8D"}


def test_legal_plays_follow_the_suit_named_for_a_9():
    g = pos([["4H", "4D", "9S", "QC"], ["QD", "JD"]], "9D", ["4S"], suit="H")
    assert legal(g) == {"play 4H", "play 9S"}


def test_must_play_if_able():
    g = pos([["KH", "QC"], ["JD", "JS"]], "7H", ["4C"])
    assert legal(g) == {"play KH"}
    with pytest.raises(ValueError) as err:
        act(g, "draw")
    assert "draw" in str(err.value) and "play KH" in str(err.value)
    with pytest.raises(ValueError, match="play QC"):
        act(g, "play QC")


def test_cannot_play_draws_one_and_the_turn_passes_even_if_it_fits():
    g = pos([["QC", "JS"], ["KD", "KS"]], "7H", ["7C", "4C"])
    assert legal(g) == {"draw"}
    act(g, "draw")
    assert hand(g, 0) == {"QC", "JS", "7C"} and g.current_player == 1 and g.top == "7H"
    assert stock_texts(g) == ["4C"]
    act(g, "draw")  # seat 1 cannot play either
    assert hand(g, 1) == {"KD", "KS", "4C"} and g.current_player == 0
    assert legal(g) == {"play 7C"}


# ======================================================================== 1.5 card powers
@pytest.mark.parametrize("card", ["AC", "3C", "JC", "QC", "KC"])
def test_cards_without_power(card):
    g = pos([[card, "KD"], ["QD", "JD"], ["QH", "JH"]], "5C", ["4C"])
    act(g, "play " + card)
    assert g.top == card and g.current_player == 1 and g.phase == "play" and g.crank == 0
    assert g.direction == 1 and [g.hand_size(s) for s in range(3)] == [1, 2, 2]


@pytest.mark.parametrize("preset,count", [("craits", 2), ("create", 1)])
def test_2_starts_a_crank(preset, count):
    g = pos([["2C", "KD"], ["QD", "JD"], ["QH", "JH"]], "5C", ["4C"], r=rules(preset))
    act(g, "play 2C")
    assert g.phase == "crank" and g.crank == count and g.current_player == 1


@pytest.mark.parametrize(
    "n,to_play,direction,after", [(4, 0, 1, 2), (4, 1, -1, 3), (3, 0, 1, 2), (5, 4, 1, 1), (2, 0, 1, 0), (2, 1, 1, 1)]
)
def test_4_skips_the_next_player(n, to_play, direction, after):
    hands = [["QD", "JD"], ["QH", "JH"], ["QS", "JS"], ["KD", "KH"], ["KS", "AD"]][:n]
    hands[to_play] = ["4C"] + hands[to_play]
    g = pos(hands, "5C", ["4D"], to_play=to_play, direction=direction)
    act(g, "play 4C")
    assert g.current_player == after and g.phase == "play"


def test_4_with_two_players_same_player_takes_another_ordinary_turn():
    g = pos([["4C", "4D", "KD"], ["QH", "JH"]], "5C", ["3S"])
    act(g, "play 4C")
    assert g.current_player == 0 and legal(g) == {"play 4D"}
    act(g, "play 4D")
    assert g.current_player == 0 and legal(g) == {"play KD"}


def test_5_every_other_player_draws_one_in_turn_order_from_the_next():
    g = pos([["5H", "JD"], ["QD"], ["QS"], ["QC"]], "7H", ["KC", "KD", "KS", "AS"])
    act(g, "play 5H")
    assert hand(g, 0) == {"JD"}
    assert hand(g, 1) == {"QD", "KC"} and hand(g, 2) == {"QS", "KD"} and hand(g, 3) == {"QC", "KS"}
    assert g.current_player == 1 and stock_texts(g) == ["AS"]


def test_5_going_right_draws_in_that_order():
    g = pos([["5H", "JD"], ["QD"], ["QS"], ["QC"]], "7H", ["KC", "KD", "KS", "AS"], direction=-1)
    act(g, "play 5H")
    assert hand(g, 3) == {"QC", "KC"} and hand(g, 2) == {"QS", "KD"} and hand(g, 1) == {"QD", "KS"}
    assert g.current_player == 3


def test_5_with_two_players():
    g = pos([["5H", "JD"], ["QD"]], "7H", ["KC", "KD"])
    act(g, "play 5H")
    assert hand(g, 1) == {"QD", "KC"} and hand(g, 0) == {"JD"} and g.current_player == 1


SIX_HANDS = [["6C", "2C", "4C", "8H", "9D", "6H", "KD"], ["QD", "JD"], ["QS", "JS"], ["QH", "JH"]]


@pytest.mark.parametrize(
    "follow,phase,player",
    [("2C", "crank", 1), ("4C", "play", 2), ("8H", "suit", 0), ("9D", "suit", 0), ("6H", "extra_turn", 0)],
)
def test_6_extra_turn_follow_up_any_legal_card_with_its_power(follow, phase, player):
    g = pos(SIX_HANDS, "5C", ["4D", "4H"])
    act(g, "play 6C")
    assert g.current_player == 0 and g.phase == "extra_turn"
    assert legal(g) == {"play 2C", "play 4C", "play 8H", "play 9D", "play 6H"}
    act(g, "play " + follow)
    assert g.phase == phase and g.current_player == player
    if follow == "2C":
        assert g.crank == 2


def test_6_extra_turn_cannot_play_draws_one_and_the_turn_passes():
    g = pos([["6C", "KD", "QD"], ["JH", "JS"]], "5C", ["JC", "4H"])
    act(g, "play 6C")
    assert g.phase == "extra_turn" and legal(g) == {"draw"}
    act(g, "draw")
    assert hand(g, 0) == {"KD", "QD", "JC"} and g.current_player == 1 and g.phase == "play"
    assert g.top == "6C"


def test_6_follow_up_may_be_the_last_card():
    g = pos([["6C", "KC"], ["QD", "JD"]], "5C", ["4D"])
    act(g, "play 6C")
    assert g.phase == "extra_turn" and g.announced == [True, False]
    act(g, "play KC")
    assert g.game_over and g.scores() == [0, 20]


SEVEN_HANDS = [["7C", "KD"], ["QD", "JD"], ["QS", "JS"], ["QH", "JH"]]


@pytest.mark.parametrize("preset,target", [("craits", 1), ("create", 2)])
def test_7_target_draws_then_the_next_player_plays(preset, target):
    g = pos(SEVEN_HANDS, "5C", ["KC", "4H"], r=rules(preset))
    act(g, "play 7C")
    for s in (1, 2, 3):
        assert g.hand_size(s) == (3 if s == target else 2)
    assert "KC" in hand(g, target) and g.current_player == 1 and g.phase == "play"


@pytest.mark.parametrize("preset,target", [("craits", 0), ("create", 3)])
def test_7_target_going_right(preset, target):
    hands = [["QD", "JD"], ["7C", "KD"], ["QS", "JS"], ["QH", "JH"]]
    g = pos(hands, "5C", ["KC", "4H"], r=rules(preset), to_play=1, direction=-1)
    act(g, "play 7C")
    assert "KC" in hand(g, target) and g.current_player == 0


@pytest.mark.parametrize("preset", PRESETS)
def test_7_with_two_players_hits_the_opponent(preset):
    g = pos([["7C", "KD"], ["QD", "JD"]], "5C", ["KC", "4H"], r=rules(preset))
    act(g, "play 7C")
    assert hand(g, 1) == {"QD", "JD", "KC"} and g.current_player == 1


@pytest.mark.parametrize("preset,target", [("craits", 1), ("create", 2)])
def test_7_in_partnership_next_but_one_hits_the_partner(preset, target):
    g = pos(SEVEN_HANDS, "5C", ["KC", "4H"], r=rules(preset, partnership=True))
    act(g, "play 7C")
    assert "KC" in hand(g, target) and g.current_player == 1


def test_8_is_wild_and_its_player_names_any_suit():
    g = pos([["8D", "KD"], ["4H", "4S", "9C", "QD"]], "5C", ["4D"])
    assert legal(g) == {"play 8D"}
    act(g, "play 8D")
    assert g.phase == "suit" and g.current_player == 0
    assert legal(g) == {"suit C", "suit D", "suit H", "suit S"}
    act(g, "suit H")
    assert g.suit == "H" and g.top == "8D" and g.current_player == 1 and g.phase == "play"
    assert legal(g) == {"play 4H", "play 9C"}


@pytest.mark.parametrize("nine,pair", [("9C", "CS"), ("9S", "CS"), ("9D", "DH"), ("9H", "DH")])
def test_9_same_colour_names_its_suit_or_the_other_of_its_colour(nine, pair):
    g = pos([[nine, "KD"], ["QD", "JD"]], "5C", ["4D"], r=rules("craits"))
    act(g, "play " + nine)
    assert g.phase == "suit" and g.current_player == 0
    assert legal(g) == {"suit " + s for s in pair}
    other = pair.replace(nine[1], "")
    act(g, "suit " + other)
    assert g.suit == other and g.current_player == 1


@pytest.mark.parametrize("r", [rules("create"), rules("craits", nine="own_suit")])
def test_9_own_suit_stands_without_a_choice(r):
    g = pos([["9H", "KD"], ["QD", "JD"]], "5C", ["4D"], r=r)
    act(g, "play 9H")
    assert g.phase == "play" and g.suit == "H" and g.current_player == 1


def test_10_with_two_players_changes_nothing():
    g = pos([["TC", "KD"], ["QC", "JD"]], "5C", ["4D"])
    act(g, "play TC")
    assert g.direction == 1 and g.current_player == 1
    act(g, "play QC")
    assert g.current_player == 0


# ============================================================================ 1.5.1 crank
CRANK_HANDS = [["2C", "KD", "QH", "2S"], ["AC", "KH", "JC"], ["2H", "KS", "QS"], ["JD", "JH", "JS", "5H", "8D"]]
CRANK_STOCK = ["4D", "4H", "4S", "6D", "6H", "6S", "7D"]


@pytest.mark.parametrize("preset,counts", [("craits", (2, 3, 5)), ("create", (1, 2, 3))])
def test_crank_counts_and_the_first_player_without_a_or_2_draws_the_count(preset, counts):
    g = pos(CRANK_HANDS, "5C", CRANK_STOCK, r=rules(preset))
    act(g, "play 2C")
    assert (g.phase, g.crank, g.current_player) == ("crank", counts[0], 1)
    assert legal(g) == {"play AC"}  # no KH / JC: only A or 2
    act(g, "play AC")
    assert (g.crank, g.current_player) == (counts[1], 2)
    act(g, "play 2H")
    assert (g.crank, g.current_player) == (counts[2], 3)
    assert legal(g) == {"draw"}  # 5H follows suit and 8D is wild, yet neither may be played
    act(g, "draw")
    count = counts[2]
    assert hand(g, 3) == {"JD", "JH", "JS", "5H", "8D"} | set(CRANK_STOCK[:count])
    assert g.crank == 0 and g.phase == "play" and g.current_player == 0 and g.top == "2H"
    # the next player plays normally on the A/2 top: suit or rank, not only A/2
    assert legal(g) == {"play QH", "play 2S"}
    act(g, "play 2S")  # a 2 then starts a new crank
    assert (g.phase, g.crank, g.current_player) == ("crank", counts[0], 1)


def test_crank_no_wild_cards_and_must_play_an_a_or_2_if_held():
    g = pos([["KD", "QD"], ["AS", "2D", "8C", "9H", "5H", "KH"]], "2H", ["4D"], crank=2, to_play=1)
    assert legal(g) == {"play AS", "play 2D"}
    with pytest.raises(ValueError):
        act(g, "draw")
    with pytest.raises(ValueError):
        act(g, "play 8C")


@pytest.mark.parametrize("preset,count", [("craits", 6), ("create", 4)])
def test_crank_a_and_2_of_any_suit(preset, count):
    g = pos([["2C", "KD", "QD"], ["AH", "QH", "JD"]], "5C", ["4D", "4H", "4S", "6D", "6H", "6S", "7D"], r=rules(preset))
    act(g, "play 2C", "play AH")
    assert legal(g) == {"draw"}
    g2 = pos(
        [["2C", "2D", "KD"], ["AH", "AS", "JD"]], "5C", ["4D", "4H", "4S", "6D", "6H", "6S", "7D"], r=rules(preset)
    )
    act(g2, "play 2C", "play AH", "play 2D", "play AS")
    assert g2.crank == count and g2.current_player == 0 and legal(g2) == {"draw"}


# ================================================================= 1.6 announcing
def test_announce_auto_is_made_for_the_player_without_penalty():
    g = pos([["KH", "QH"], ["JD", "JS"], ["QC", "JC"]], "7H", ["4C", "4D"])
    assert legal(g) == {"play KH", "play QH"}
    with pytest.raises(ValueError):
        act(g, "play KH unannounced")
    assert g.announced == [False, False, False]
    act(g, "play KH")
    assert g.announced == [True, False, False] and g.hand_size(0) == 1 and stock_texts(g) == ["4C", "4D"]
    assert g.current_player == 1 and g.lose_turn == [False, False, False]
    assert "last card" in g.render()


def test_announce_action_offers_both_only_when_the_play_leaves_one_card():
    r = rules(announce="action")
    g = pos([["KH", "QH", "JC"], ["JD", "JS"]], "7H", ["4C"], r=r)
    assert legal(g) == {"play KH", "play QH"}
    g = pos([["KH", "QH"], ["JD", "JS"]], "7H", ["4C"], r=r)
    assert legal(g) == {"play KH", "play QH", "play KH unannounced", "play QH unannounced"}
    g = pos([["KH", "QC"], ["JD", "JS"]], "7H", ["4C"], r=r)
    assert legal(g) == {"play KH", "play KH unannounced"}
    act(g, "play KH")
    assert g.announced == [True, False] and g.hand_size(0) == 1 and stock_texts(g) == ["4C"]


def test_announce_action_offered_in_a_crank_and_after_a_6():
    r = rules(announce="action")
    g = pos([["KD", "QD"], ["AC", "QH"]], "2C", ["4C"], r=r, crank=2, to_play=1)
    assert legal(g) == {"play AC", "play AC unannounced"}
    g = pos([["6H", "7H", "KC"], ["JD", "JS"], ["QC", "JC"]], "5H", ["4C", "4D", "4S"], r=r)
    assert legal(g) == {"play 6H", "play 7H"}  # leaves two cards: no choice
    act(g, "play 6H")
    assert legal(g) == {"play 7H", "play 7H unannounced"}
    act(g, "play 7H unannounced")  # draws 2 at once, then the 7 hits seat 1
    assert hand(g, 0) == {"KC", "4C", "4D"} and hand(g, 1) == {"JD", "JS", "4S"}
    assert g.announced == [False, False, False]


@pytest.mark.parametrize("preset,skipped", [("craits", True), ("create", False)])
def test_unannounced_play_draws_2_then_the_power_then_loses_a_turn(preset, skipped):
    r = rules(preset, announce="action")
    hands = [["5H", "QC"], ["KH", "JC", "JD"], ["QH", "KC", "KD"], ["JH", "QS", "QD"]]
    g = pos(hands, "7H", ["AD", "AH", "AS", "3D", "3H", "3S"], r=r)
    act(g, "play 5H unannounced")
    assert hand(g, 0) == {"QC", "AD", "AH"}  # the 2 penalty cards first ...
    assert "AS" in hand(g, 1) and "3D" in hand(g, 2) and "3H" in hand(g, 3)  # ... then the 5
    assert g.announced[0] is False and g.lose_turn[0] is skipped
    act(g, "play KH", "play QH", "play JH")
    if skipped:
        assert g.current_player == 1 and g.lose_turn[0] is False
        act(g, "play JC", "play KC")  # once only: the next round reaches seat 0
        assert legal(g) == {"draw"}
        act(g, "draw")
        assert g.current_player == 0
    else:
        assert g.current_player == 0


@pytest.mark.parametrize("penalty,skipped", [("draw_2_lose_turn", True), ("draw_2", False)])
def test_lost_turn_with_two_players_the_opponent_plays_twice(penalty, skipped):
    r = rules("craits", announce="action", missed_announce_penalty=penalty)
    g = pos([["KH", "QC"], ["QH", "JH", "TS"]], "7H", ["4C", "4D", "4S"], r=r)
    act(g, "play KH unannounced")
    assert hand(g, 0) == {"QC", "4C", "4D"} and g.current_player == 1
    assert ("loses next turn" in g.render()) is skipped
    act(g, "play QH")
    assert g.current_player == (1 if skipped else 0)
    assert g.lose_turn == [False, False]


@pytest.mark.parametrize("penalty,skipped", [("draw_2_lose_turn", True), ("draw_2", False)])
def test_lost_turn_includes_a_crank_reaching_the_player(penalty, skipped):
    r = rules("craits", announce="action", missed_announce_penalty=penalty)
    hands = [["2C", "KD"], ["AC", "QH", "QS"], ["2H", "JH", "JS"], ["AD", "KH", "KS"]]
    stock = ["4C", "4D", "4H", "4S", "6C", "6D", "6H", "6S", "7C", "7D"]
    g = pos(hands, "5C", stock, r=r)
    act(g, "play 2C unannounced")
    assert hand(g, 0) == {"KD", "4C", "4D"} and g.phase == "crank" and g.crank == 2
    act(g, "play AC", "play 2H", "play AD")
    assert g.phase == "crank" and g.crank == 6
    if skipped:
        assert g.current_player == 1 and legal(g) == {"draw"} and g.lose_turn[0] is False
        act(g, "draw")
        assert hand(g, 1) == {"QH", "QS"} | set(stock[2:8])
    else:
        assert g.current_player == 0 and legal(g) == {"draw"}
        act(g, "draw")
        assert hand(g, 0) == {"KD", "4C", "4D"} | set(stock[2:8])


def test_unannounced_play_in_a_crank_draws_2_and_still_counts():
    r = rules("craits", announce="action")
    g = pos([["KD", "QD", "JD"], ["AC", "QH"], ["KS", "QS"]], "2C", ["4C", "4D", "4H", "4S"], r=r, crank=2, to_play=1)
    act(g, "play AC unannounced")
    assert hand(g, 1) == {"QH", "4C", "4D"} and g.crank == 3 and g.phase == "crank" and g.current_player == 2


# ==================================================================== 1.7 end of a deal
def test_deal_ends_when_a_player_holds_no_cards():
    hands = [["KH"], ["AC", "2C"], ["4D", "5D", "6D"], ["7S", "8S", "9S", "TS", "JS", "QS", "KS"]]
    g = pos(hands, "7H", ["3C"])
    act(g, "play KH")
    assert g.deal_over and g.game_over and g.phase == "over" and g.legal_actions() == []
    assert g.scores() == [0, 21, 75, 155] and g.last_deal_points == [0, 21, 75, 155]
    assert g.winners() == [0]


def test_last_5_still_makes_every_other_player_draw():
    g = pos([["5H"], ["QD"], ["QS"], ["QC"]], "7H", ["KC", "KD", "KS"])
    act(g, "play 5H")
    assert g.game_over and g.scores() == [0, 20, 20, 20]
    assert hand(g, 1) == {"QD", "KC"} and hand(g, 2) == {"QS", "KD"} and hand(g, 3) == {"QC", "KS"}


@pytest.mark.parametrize("preset,target", [("craits", 1), ("create", 2)])
def test_last_7_still_hits_its_target(preset, target):
    g = pos([["7C"], ["QD"], ["QS"], ["QH"]], "5C", ["KC", "4H"], r=rules(preset))
    act(g, "play 7C")
    assert g.game_over
    assert g.scores() == [0] + [20 if s == target else 10 for s in (1, 2, 3)]


@pytest.mark.parametrize("preset,count", [("craits", 2), ("create", 1)])
def test_last_2_starts_a_crank_and_the_deal_ends_when_it_ends(preset, count):
    g = pos([["2H"], ["QD", "KC"], ["QS"], ["QC"]], "7H", ["KD", "KS", "4H"], r=rules(preset))
    act(g, "play 2H")
    assert not g.deal_over and g.phase == "crank" and g.crank == count and g.hand_size(0) == 0
    act(g, "draw")
    assert g.game_over
    assert g.scores() == [0, 20 + 10 * count, 10, 10]


@pytest.mark.parametrize("preset,count,points", [("craits", 6, 4 * 15 + 2 * 30), ("create", 4, 4 * 15)])
def test_last_2_crank_reaches_the_out_player_who_draws_and_the_deal_ends(preset, count, points):
    hands = [["2H"], ["AH", "KC", "QC"], ["2S", "KD", "QD"], ["AS", "KS", "QS"]]
    stock = ["4C", "4D", "4H", "4S", "6C", "6D", "6H"]
    g = pos(hands, "7H", stock, r=rules(preset))
    act(g, "play 2H", "play AH", "play 2S", "play AS")
    assert g.current_player == 0 and g.hand_size(0) == 0 and not g.deal_over
    assert legal(g) == {"draw"}
    act(g, "draw")
    # A deal never goes on after someone has gone out: the drawer scores the cards drawn.
    assert g.deal_over and g.game_over and g.last_deal_points == [points, 20, 20, 20]


def test_out_player_who_draws_a_crank_scores_it_and_the_next_deal_starts():
    g = pos([["2H"], ["AH", "KC"]], "7H", ["4C", "4D", "4H", "QS"], r=rules(deals=[5, 5]))
    act(g, "play 2H", "play AH", "draw")  # seat 0, out, takes the count 3
    assert g.deal_over and not g.game_over and g.deal_index == 1 and g.phase != "over"
    assert g.last_deal_points == [45, 10] and g.scores() == [45, 10]


def test_out_in_a_crank_and_the_crank_taken_by_another_ends_the_deal():
    g = pos([["AH"], ["KC", "QC"], ["KD"], ["KS"]], "2H", ["4C", "4D", "4H", "4S"], crank=2)
    act(g, "play AH")
    assert not g.deal_over and g.crank == 3 and g.hand_size(0) == 0
    act(g, "draw")
    assert g.game_over and g.scores() == [0, 20 + 15 * 3, 10, 10]


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("last", ["6H", "8H", "9H", "4H", "TH", "AH", "3H"])
def test_last_6_8_9_no_extra_turn_no_suit_deal_ends(preset, last):
    g = pos([[last], ["QD"], ["QS"], ["QC"]], "7H", ["KC"], r=rules(preset))
    act(g, "play " + last)
    assert g.deal_over and g.game_over and g.legal_actions() == [] and g.phase == "over"
    assert g.scores() == [0, 10, 10, 10]


def test_deal_end_in_a_several_deal_game_reports_last_deal_points():
    g = pos([["KH"], ["QD", "JD"], ["5S"], ["QC"]], "7H", ["4C"], r=rules(deals=[5, 3]))
    act(g, "play KH")
    assert g.deal_over and not g.game_over
    assert g.last_deal_points == [0, 20, 30, 10] and g.scores() == [0, 20, 30, 10]
    assert g.deal_index == 1 and g.dealer == 1


# ====================================================================== scoring table
TABLE = {"A": 1, "2": 20, "4": 15, "5": 30, "6": 30, "7": 20, "8": 50, "9": 30, "T": 25, "J": 10, "Q": 10, "K": 10}


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("rank", sorted(TABLE))
def test_card_points_table(preset, rank):
    assert pts([rank + "S"], preset) == TABLE[rank]
    assert pts([rank + "S", rank + "D"], preset) == 2 * TABLE[rank]


@pytest.mark.parametrize("preset", PRESETS)
def test_deal_scores_every_hand_by_the_table(preset):
    hands = [["KH"], ["AC", "2C", "4C", "5C"], ["6D", "7D", "8D", "9D"], ["TS", "JS", "QS", "KS"]]
    g = pos(hands, "7H", ["3S"], r=rules(preset))
    act(g, "play KH")
    assert g.scores() == [0, 1 + 20 + 15 + 30, 30 + 20 + 50 + 30, 25 + 10 + 10 + 10]


@pytest.mark.parametrize(
    "cards,craits,create",
    [
        (["3C", "2D", "8S"], 20, 53),  # RULES.md craits example: the 3 cancels the 8
        (["3C", "3D", "4H", "9S", "TC"], 15, 21),  # RULES.md create example: 3+3+15
        (["3C", "3D", "8S"], 0, 53),  # RULES.md create example: 3+50
        (["3C"], -50, -50),  # a hand of only 3s: -50 per 3
        (["3C", "3D"], -100, -100),
        (["3C", "3D", "3H", "3S"], -200, -200),
        (["3C", "AS", "5D"], 1, 4),  # highest value first
        (["3C", "8S", "KH"], 10, 53),  # 8s included (craits) / never cancelled (create)
        (["3C", "8S"], 0, 53),
        (["3C", "3D", "3H", "8S"], 0, 56),  # create: 3 left over, 1 of them cancelled
        (["3C", "3D", "3H", "KS"], 0, 6),  # create: 1 cancels K, 2 left over, 1 cancelled
        (["3C", "3D", "3H", "3S", "KS"], 0, 9),  # create: 3 left over, 1 cancelled
        (["3C", "KS", "QS", "JS"], 20, 23),
        ([], 0, 0),
    ],
)
def test_three_scoring(cards, craits, create):
    assert pts(cards, "craits") == craits
    assert pts(cards, "create") == create
    assert hand_points(cards) == craits  # default rules


@pytest.mark.parametrize("preset,points", [("craits", [0, 20, -100, 40]), ("create", [0, 53, -100, 43])])
def test_deal_end_scores_threes(preset, points):
    hands = [["KH"], ["3C", "2D", "8S"], ["3H", "3S"], ["3D", "4C", "9S", "TC"]]
    g = pos(hands, "7H", ["AS"], r=rules(preset))
    act(g, "play KH")
    assert g.scores() == points


# ============================================================================ pressure
def test_pressure_card_not_drawn_costs_5_added_at_deal_end():
    g = pos([["QC", "JC"], ["KH", "KD"], ["QS"], ["QD"]], "7H", [], r=rules("create"))
    act(g, "draw")
    assert hand(g, 0) == {"QC", "JC"} and g.pressures == [1, 0, 0, 0] and g.current_player == 1
    assert g.scores() == [0, 0, 0, 0]
    act(g, "play KH")  # seat 1 ... still holds KD
    act(g, "draw")  # seat 2 cannot play on KH: pressure again
    assert g.pressures == [1, 0, 1, 0]
    assert g.scores() == [0, 0, 0, 0]


def test_pressure_costs_go_5_10_20_40_80_within_one_draw():
    r = rules("craits", empty_stock="pressure")
    g = pos([["KC", "QC"], ["KH"], ["QS"], ["QD"]], "2H", [], r=r, crank=5)
    act(g, "draw")
    assert hand(g, 0) == {"KC", "QC"} and g.pressures == [5, 0, 0, 0]
    act(g, "play KH")
    assert g.game_over and g.scores() == [20 + 5 + 10 + 20 + 40 + 80, 0, 10, 10]


def test_pressure_crank_count_3_from_empty_stock_costs_5_10_20():
    hands = [["2C", "KH"], ["AC", "QS"], ["2H", "QD"], ["JC", "JS"]]
    g = pos(hands, "5C", [], r=rules("create"))
    act(g, "play 2C", "play AC", "play 2H")
    assert g.crank == 3 and legal(g) == {"draw"}
    act(g, "draw")
    assert hand(g, 3) == {"JC", "JS"} and g.pressures == [0, 0, 0, 3]
    assert g.scores() == [0, 0, 0, 0]
    act(g, "play KH")
    assert g.game_over and g.scores() == [0, 10, 10, 20 + 5 + 10 + 20]


def test_pressure_only_for_the_cards_not_drawn():
    r = rules("craits", empty_stock="pressure")
    g = pos([["KC", "QC"], ["KH"], ["QS"], ["QD"]], "2H", ["JS"], r=r, crank=2)
    act(g, "draw")
    assert hand(g, 0) == {"KC", "QC", "JS"} and g.pressures == [1, 0, 0, 0]
    act(g, "play KH")
    assert g.game_over and g.scores() == [30 + 5, 0, 10, 10]


def test_pressure_tally_runs_across_the_game():
    r = rules("create", deals=[5, 5])
    g = pos([["QC", "JC"], ["KH"], ["QS"], ["QD"]], "7H", [], r=r)
    act(g, "draw", "play KH")
    assert g.deal_over and g.last_deal_points == [20 + 5, 0, 10, 10]
    assert g.deal_index == 1 and g.pressures == [1, 0, 0, 0]
    # the same seat's next pressure (in deal 2) costs 10
    g2 = pos(
        [["QC", "JC"], ["KH"], ["QS"], ["QD"]],
        "7H",
        [],
        r=r,
        deal_index=1,
        pressures=[1, 0, 0, 0],
        scores=[25, 0, 10, 10],
    )
    act(g2, "draw", "play KH")
    assert g2.game_over and g2.pressures == [2, 0, 0, 0]
    assert g2.last_deal_points == [30, 0, 10, 10] and g2.scores() == [55, 0, 20, 20]


def test_pressure_for_5_7_and_a_missed_announcement():
    r = rules("create", announce="action")
    g = pos([["5H", "KD", "QD"], ["JD"], ["JS"], ["JC"]], "7H", [], r=r)
    act(g, "play 5H")
    assert g.pressures == [0, 1, 1, 1]
    g = pos([["7H", "KD", "QD"], ["JD"], ["JS"], ["JC"]], "5H", [], r=r)
    act(g, "play 7H")  # create: next_but_one
    assert g.pressures == [0, 0, 1, 0]
    g = pos([["KH", "QD"], ["JD", "TD"], ["JS"], ["JC"]], "5H", [], r=r)
    act(g, "play KH unannounced")
    assert g.pressures == [2, 0, 0, 0] and hand(g, 0) == {"QD"}
    act(g, "draw", "draw", "draw", "draw")  # nobody can play on KH: a stalemate, scored as it stands
    assert g.game_over and g.pressures == [3, 1, 1, 1]
    assert g.scores() == [10 + 5 + 10 + 20, 10 + 25 + 5, 10 + 5, 10 + 5]


# =========================================================================== reshuffle
def test_reshuffle_discard_except_top_becomes_the_stock():
    g = pos([["QH", "AC", "AD"], ["JH", "AS", "2S"], ["KH", "3C", "3D"], ["4C", "4D", "4S"]], "7H", [])
    act(g, "play QH", "play JH", "play KH")
    assert legal(g) == {"draw"}
    act(g, "draw")
    got = hand(g, 3) - {"4C", "4D", "4S"}
    assert len(got) == 1 and got <= {"7H", "QH", "JH"}
    assert g.top == "KH" and len(g.stock) == 2
    assert set(stock_texts(g)) == {"7H", "QH", "JH"} - got


def test_reshuffle_keeps_the_named_suit():
    g = pos([["8C", "KD"], ["QC", "JS"], ["QS", "JD"]], "7H", [])
    act(g, "play 8C", "suit H")
    assert legal(g) == {"draw"}
    act(g, "draw")
    assert hand(g, 1) == {"QC", "JS", "7H"} and g.top == "8C" and g.suit == "H" and g.stock == []


def test_reshuffle_nothing_to_draw_skips_the_draw():
    g = pos([["QC", "JC"], ["KH", "KD"], ["QS"]], "7H", [])
    act(g, "draw")
    assert hand(g, 0) == {"QC", "JC"} and g.current_player == 1 and g.pressures == [0, 0, 0]


def test_reshuffle_in_the_middle_of_a_5s_draws():
    g = pos([["5H", "KD"], ["QD"], ["QS"], ["QC"]], "7H", ["KC"])
    act(g, "play 5H")
    assert hand(g, 1) == {"QD", "KC"}  # the last stock card
    assert hand(g, 2) == {"QS", "7H"}  # discard except top (5H) reshuffled: only 7H
    assert hand(g, 3) == {"QC"}  # nothing left to draw: skipped
    assert g.top == "5H" and g.stock == []


def test_reshuffle_in_the_middle_of_a_crank_count():
    g = pos([["2C", "KD", "QD"], ["KH", "QH"]], "5C", ["KS"])
    act(g, "play 2C", "draw")
    assert hand(g, 1) == {"KH", "QH", "KS", "5C"} and g.top == "2C" and g.stock == []


# =========================================================================== stalemate
@pytest.mark.parametrize("n", [2, 3, 4])
def test_stalemate_reshuffle_n_empty_draws_end_the_deal(n):
    hands = [["QC", "JC"], ["QS", "JS"], ["QD", "JD"], ["KC", "KS"]][:n]
    g = pos(hands, "7H", [], r=rules("craits"))
    for _ in range(n - 1):
        act(g, "draw")
        assert not g.deal_over
    act(g, "draw")
    assert g.deal_over and g.game_over and g.scores() == [20] * n


def test_stalemate_pressure_draws_count_and_penalties_are_scored():
    g = pos([["QC"], ["JC"]], "7H", [], r=rules("create"))
    act(g, "draw")
    assert not g.deal_over
    act(g, "draw")
    assert g.game_over and g.scores() == [15, 15]


def test_stalemate_count_reset_by_a_play():
    g = pos([["QC", "JC"], ["KH", "QS"], ["JS", "5C"]], "7H", [], r=rules("create"))
    act(g, "draw", "play KH", "draw", "draw")
    assert not g.deal_over  # 1 (reset by the play) 1 2
    act(g, "draw")
    assert g.game_over
    assert g.pressures == [2, 1, 1]
    assert g.scores() == [20 + 15, 10 + 5, 40 + 5]


def test_stalemate_counts_a_crank_count_taken_from_nothing():
    g = pos([["2H", "QC", "JC"], ["KS", "QS"]], "7H", [], r=rules("create"))
    act(g, "play 2H", "draw")
    assert not g.deal_over
    act(g, "draw")
    assert g.game_over and g.scores() == [20 + 5, 20 + 5]


def _trade_5s():
    """Two players trading 5s with every other card out of the game: each 5 makes the other
    redraw the card under it (reshuffled from a discard pile of two), and play cycles."""
    return pos([["5H", "KC"], ["5S", "KD"]], "5D", [])


def test_repetition_the_third_occurrence_of_a_position_ends_the_deal():
    g = _trade_5s()
    act(g, "play 5H", "play 5S")  # seat 1 redrew 5D, seat 0 redrew 5H: first occurrences
    assert hand(g, 0) == {"KC", "5H"} and hand(g, 1) == {"KD", "5D"} and g.top == "5S"
    act(g, "play 5H", "play 5S")  # both positions for the second time
    assert not g.deal_over and hand(g, 0) == {"KC", "5H"} and hand(g, 1) == {"KD", "5D"}
    act(g, "play 5H")  # seat 1 to play with KD 5D 5S on 5H: its third time
    assert g.deal_over and g.game_over and not g.deal_truncated
    assert g.scores() == [10, 10 + 30 + 30]  # scored as it stands


def test_repetition_counts_a_position_however_play_came_back_to_it():
    g = _trade_5s()
    act(g, "play 5H", "play 5S", "play 5H")  # seat 1 to play on 5H with KD 5D 5S: twice
    act(g, "play 5D")  # seat 0 redraws 5H, seat 1 keeps 5S: a position not seen before
    assert not g.deal_over and hand(g, 1) == {"KD", "5S"}
    act(g, "play 5H")  # seat 1 redraws 5D: KD 5D 5S on 5H for the third time
    assert g.deal_over and g.scores() == [10, 70]


def test_repetition_counts_per_deal():
    g = pos([["5H", "KC"], ["5S", "KD"]], "5D", [], r=rules(deals=[5, 5]))
    act(g, "play 5H", "play 5S", "play 5H", "play 5S", "play 5H")
    assert g.deal_over and g.deal_index == 1
    g2 = g.copy()
    assert g2.positions is None  # the new deal has not reshuffled: nothing to count


def test_deal_cut_after_10000_actions():
    g = pos([["QC", "JC"], ["KH", "KD"]], "7H", ["4S", "4C"])
    g.deal_actions = 9_999  # internal counter: no real deal reaches the safety net
    act(g, "draw")
    assert g.deal_over and g.game_over and g.deal_truncated
    assert g.scores() == [20 + 15, 20]


# ======================================================================== game score
def test_game_score_is_the_sum_over_deals():
    g = pos(
        [["KH"], ["QD", "JD"], ["5S"], ["QC"]],
        "7H",
        ["4C"],
        r=rules(deals=[5, 5]),
        deal_index=1,
        scores=[40, 0, 10, 20],
        dealer=1,
    )
    act(g, "play KH")
    assert g.game_over and g.last_deal_points == [0, 20, 30, 10] and g.scores() == [40, 20, 40, 30]
    assert g.winners() == [1]


def test_lowest_total_wins_and_ties_share():
    g = pos([["KH"], ["QD"], ["QS", "AS"], ["QC"]], "7H", ["4C"], scores=[10, 0, 0, 5])
    act(g, "play KH")
    assert g.scores() == [10, 10, 11, 15] and g.winners() == [0, 1]


def test_partnership_side_total_wins():
    r = rules(partnership=True)
    g = pos([["KH"], ["KC"], ["QC", "JC"], ["AC"]], "7H", ["4C"], r=r)
    act(g, "play KH")
    assert g.scores() == [0, 10, 20, 1] and g.winners() == [1, 3]  # side 0+2: 20, side 1+3: 11
    g = pos([["KH"], ["KC"], ["QC", "JC"], ["AC"]], "7H", ["4C"], r=rules())
    act(g, "play KH")
    assert g.winners() == [0]


def test_partnership_tied_sides_share():
    g = pos([["KH"], ["KC"], ["QC"], ["JC"]], "7H", ["4C"], r=rules(partnership=True), scores=[10, 0, 0, 0])
    act(g, "play KH")
    assert g.scores() == [10, 10, 10, 10] and g.winners() == [0, 1, 2, 3]


def test_winners_only_when_the_game_is_over():
    g = pos([["KH", "QH"], ["KC"]], "7H", ["4C"])
    with pytest.raises(ValueError):
        g.winners()


# ============================================================================= misc API
def test_from_position_rejects_duplicate_and_unknown_cards():
    with pytest.raises(ValueError, match="7H"):
        pos([["7H", "KD"], ["QD"]], "7H", ["4C"])
    with pytest.raises(ValueError, match="KD"):
        pos([["KD"], ["QD"]], "7H", ["KD"])
    with pytest.raises(ValueError, match="1X"):
        pos([["1X"], ["QD"]], "7H", ["4C"])


def test_action_texts_round_trip():
    g = pos([["KH", "QH"], ["KC"]], "7H", ["4C"], r=rules(announce="action"))
    for a in g.legal_actions():
        assert g.text_to_action(g.action_to_text(a)) == a
    assert g.text_to_action("play 10H") == g.text_to_action("play TH")
    with pytest.raises(ValueError):
        g.text_to_action("discard 7H")


def test_copy_is_independent():
    g = pos([["KH", "QH"], ["KC", "JC"]], "7H", ["4C"])
    c = g.copy()
    act(c, "play KH")
    assert hand(g, 0) == {"KH", "QH"} and g.current_player == 0 and g.top == "7H"
    assert c.top == "KH"


# ---------------------------------------------------------------- documented decisions
def test_decision_lost_turn_is_used_up_by_a_fours_extra_turn_with_two_players():
    rules = Rules.preset("craits", announce="action")
    g = CraitsGame.from_position(rules, [["4C", "KD"], ["QH", "JH"]], top="5C", stock=["2D", "3D", "6S"])
    g.apply(g.text_to_action("play 4C unannounced"))  # draws 2 first, then the 4 gives seat 0 another turn...
    assert g.hand(0) == ["2D", "3D", "KD"]
    assert g.current_player == 1 and not g.lose_turn[0]  # ...which the lost turn takes


def test_decision_a_player_skipped_by_a_four_keeps_the_lost_turn():
    rules = Rules.preset("craits", announce="action")
    g = CraitsGame.from_position(
        rules,
        [["4C", "9S", "KS"], ["5C", "KH"], ["JC", "QD", "QS"]],
        top="5D",
        stock=["2D", "3D", "6H", "7H", "TD", "TH"],
        to_play=1,
    )
    g.apply(g.text_to_action("play 5C unannounced"))  # seat 1 draws 2, owes a turn; the 5 makes 2 and 0 draw
    assert g.lose_turn[1] and g.current_player == 2
    g.apply(g.text_to_action("play JC"))
    g.apply(g.text_to_action("play 4C"))  # skips seat 1: the turn never reached it
    assert g.current_player == 2 and g.lose_turn[1]
    act(g, "draw")  # seat 2 holds no club, no 4 and no wild
    act(g, "play 9S", "suit S")  # seat 0; the turn would now reach seat 1...
    assert g.current_player == 2 and not g.lose_turn[1]  # ...and passes over it, once
