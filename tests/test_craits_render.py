"""What ``CraitsGame.render()`` (and so the env's ``render()``) shows a player, from explicit positions."""

from __future__ import annotations

from envs import craits_v0
from envs.craits import CraitsGame, Rules


def pos(hands, top, stock=(), deals=(5,), preset="craits", **kw):
    options = {k: kw.pop(k) for k in ("partnership", "announce") if k in kw}
    return CraitsGame.from_position(Rules.preset(preset, deals=list(deals), **options), hands, top, list(stock), **kw)


def act(g, *texts):
    for text in texts:
        g.apply(g.text_to_action(text))


def test_last_move_says_what_its_power_did():
    g = pos([["KC", "QC"], ["5H", "JD"], ["QS"], ["QD"]], "7H", ["4C", "4D", "4S", "TS"], to_play=1)
    act(g, "play 5H")
    assert "last: seat 1 plays 5H: seats 2, 3, 0 draw 1" in g.render().splitlines()


def test_prompts_in_plain_words():
    g = pos([["2H", "QC"], ["AH", "KC"], ["2S", "KD"], ["KS"]], "7H", ["4D", "4H", "4S", "6C", "6D"])
    act(g, "play 2H", "play AH", "play 2S")
    lines = g.render().splitlines()
    assert lines[-2] == "last: seat 2 plays 2S: the crank goes on"
    assert lines[-1] == "seat 3 must take the crank: draw 5"
    g = pos([["9H", "QC"], ["KC"]], "7H", ["4D"])
    act(g, "play 9H")
    assert g.render().splitlines()[-1] == "seat 0 names a suit: D or H"
    g = pos([["QC", "JC"], ["KC"]], "7H", ["4D"])
    assert g.render().splitlines()[-1] == "seat 0 cannot play: draw 1"


def test_a_finished_deal_is_shown_before_the_next():
    g = pos([["KH"], ["QD", "3D"], ["5S"], ["QC"]], "7H", ["TC"], deals=(5, 5))
    act(g, "play KH")
    text = g.render()
    assert text.index("deal 1/2 is over: seat 0 went out") < text.index("Craits  deal 2/2")
    lines = text.splitlines()
    assert "last: seat 0 plays KH: goes out" in lines
    assert any(line.split() == ["seat", "1:", "3D", "QD", "0", "points"] for line in lines)  # the 3 cancels QD
    assert any(line.split() == ["seat", "2:", "5S", "30", "points"] for line in lines)
    assert any(line.split() == ["seat", "0:", "(out)", "0", "points"] for line in lines)
    act(g, g.action_to_text(g.legal_actions()[0]))
    assert "is over" not in g.render()  # only right after the deal ended


def test_game_over_names_the_winner():
    g = pos([["KH"], ["QD"], ["5S"], ["QC"]], "7H", ["TC"])
    act(g, "play KH")
    text = g.render()
    assert "deal 1/1 is over: seat 0 went out" in text
    assert text.splitlines()[-1].startswith("game over: seat 0 wins")


def test_partnership_shows_side_totals():
    g = pos([["KH", "QH"], ["QD"], ["5S"], ["QC"]], "7H", ["TC"], partnership=True, scores=[10, 20, 30, 40])
    assert "sides: seats 0+2 total 40, seats 1+3 total 60" in g.render().splitlines()


def test_pressure_shows_the_points_it_has_cost():
    g = pos([["QC", "JC"], ["KH"]], "7H", [], preset="create", pressures=[3, 0])
    act(g, "draw")
    lines = g.render().splitlines()
    assert "pressure 4 (75 points)" in lines[2]  # 5 + 10 + 20 + 40
    assert "last: seat 0 cannot play: takes a pressure (40 points)" in lines


def test_env_render_after_a_deal_shows_it():
    env = craits_v0.raw_env(num_players=2, deals=[1, 1], render_mode="ansi")
    env.reset(seed=3)
    while env.game.deal_index == 0:
        env.step(env.game.legal_actions()[0])
    assert "deal 1/2 is over" in env.render()
