"""The terminal agent (training/agents/human.py): prompts from the seat's own view (the game's
``present`` module), moves read as text, bad input re-prompts, the end of input ends the
game cleanly."""

from __future__ import annotations

import io
import random
import re

import pytest

from envs.craits import CraitsGame, Rules
from envs.present import presentation
from training.agents import make_agent
from training.agents.human import HumanAgent, HumanQuit, view_text
from training.common.games import EnvHandle
from training.matches.evaluate import play_game

CARD = re.compile(r"\b[A2-9TJQK][CDHS]\b")


class Script:
    """Input for a HumanAgent: a wrong word first, then a random legal move (sometimes only
    the part after the verb); records the table each prompt printed."""

    def __init__(self, env, seat, output, rng):
        self.env, self.seat, self.output, self.rng = env, seat, output, rng
        self.prompts = 0
        self.tables = []

    def __call__(self, prompt):
        game = self.env.raw.game
        self.tables.append((self.output.getvalue(), [game.hand(s) for s in range(game.num_players)]))
        self.prompts += 1
        if self.prompts % 5 == 1:
            return "bogus move"
        text = game.action_to_text(self.rng.choice(game.legal_actions()))
        return text.split(" ", 1)[1] if self.rng.random() < 0.5 and not text == "draw" else text


def play_with_human(env_id, args, seat, seed):
    env = EnvHandle(env_id, args)
    output = io.StringIO()
    script = Script(env, seat, output, random.Random(seed))
    human = HumanAgent(input=script, output=output).bind(env.raw, seat, names=["x"] * env.seats)
    agents = [human if s == seat else make_agent("heuristic", env) for s in range(env.seats)]
    scores, winners = play_game(env.raw, agents, seed, on_move=human.on_move)
    human.finish()
    return env, script, output.getvalue(), scores, winners


def test_craits_prompts_show_only_the_seats_own_cards():
    env, script, text, scores, winners = play_with_human("craits_v0", {"deals": [4, 3]}, 1, seed=5)
    assert script.prompts > 3 and "is not a legal move here" in text
    for printed, hands in script.tables:
        table = printed[printed.rfind("Craits  deal") :]  # the table shown at this prompt
        own = table[table.index("your hand:") :].splitlines()[0]
        assert set(CARD.findall(own)) == set(hands[1])
        hidden = {c for s, hand in enumerate(hands) if s != 1 for c in hand}
        assert not hidden & set(CARD.findall(table))  # a card in another hand is never shown
    assert "final scores (lower is better)" in text and f"{scores[1]}" in text
    assert text.count("is over:") == 2  # both deals' ends, every hand shown then


def test_pairs_draft_others_picks_stay_hidden():
    env, script, text, scores, winners = play_with_human("pairs_draft_v0", {}, 3, seed=2)
    assert script.prompts >= 22
    others = [line for line in text.splitlines() if re.match(r"seat [012] (picks|discards)", line)]
    assert len(others) == 3 * 12
    assert all(re.match(r"seat \d (picks a card|discards a card face down)  \[x\]$", line) for line in others)
    assert "final scores (higher is better)" in text


def test_bad_input_reprompts_and_short_forms_are_read():
    rules = Rules.preset("craits")
    game = CraitsGame.from_position(rules, hands=[["7H", "2C", "KD"], ["9S", "KS"]], top="7C", stock=["AS", "4D"])
    raw = type("Raw", (), {"game": game, "agent_name_mapping": {"player_0": 0}, "agent_selection": "player_0"})()
    answers = iter(["", "play 9S", "dance", "7h"])
    output = io.StringIO()
    human = HumanAgent(raw, 0, input=lambda prompt: next(answers), output=output)
    mask = [0] * 109
    for action in game.legal_actions():
        mask[action] = 1
    assert game.action_to_text(human.act(None, mask)) == "play 7H"
    text = output.getvalue()
    assert text.count("is not a legal move here") == 2 and "legal moves: play 2C, play 7H" in text
    assert "your hand: 2C 7H KD" in text
    table = text[: text.index("legal moves:")]
    assert "seat 1" in table and "9S" not in table and "KS" not in table


@pytest.mark.parametrize("error", [EOFError, KeyboardInterrupt])
def test_end_of_input_ends_the_game_cleanly(error):
    env = EnvHandle("pairs_draft_v0")

    def stop(prompt):
        raise error

    output = io.StringIO()
    human = HumanAgent(input=stop, output=output).bind(env.raw, 0)
    agents = [human] + [make_agent("random", env) for _ in range(3)]
    with pytest.raises(HumanQuit) as caught:
        play_game(env.raw, agents, 0, on_move=human.on_move)
    assert isinstance(caught.value, SystemExit) and caught.value.code == 130
    assert "game abandoned" in output.getvalue()


def test_quit_command():
    env = EnvHandle("craits_v0", {"deals": [3]})
    human = HumanAgent(input=lambda prompt: "quit", output=io.StringIO()).bind(env.raw, 0)
    with pytest.raises(HumanQuit):
        play_game(env.raw, [human] + [make_agent("random", env) for _ in range(3)], 1)


def test_blind_dealer_sees_no_hand():
    seed = next(s for s in range(500) if _blind(s))
    env = EnvHandle("craits_v0", {"deals": [3]})
    env.raw.reset(seed=seed)
    view = presentation(env.raw.game).seat_view(env.raw.game, 0)
    assert view["hand"] is None and "hidden" in view_text(view)
    assert not set(CARD.findall(view_text(view).split("your hand")[1])) & set(env.raw.game.hand(0))


def _blind(seed):
    env = EnvHandle("craits_v0", {"deals": [3]})
    env.raw.reset(seed=seed)
    return env.raw.game.phase == "blind_suit"


def test_narrator_tells_a_round_and_a_deal():
    rules = Rules.preset("craits", deals=(2,))
    game = CraitsGame.from_position(rules, hands=[["5H"], ["9S", "KS"]], top="7H", stock=["AS", "4D", "QC"])
    narrator = presentation(game).Narrator(1)
    token = narrator.before(game, 0, game.text_to_action("play 5H"))
    game.apply(game.text_to_action("play 5H"))
    entries = narrator.after(game, token)
    assert entries[0]["text"] == "seat 0 plays 5H: goes out, seat 1 draws 1"
    assert entries[1]["kind"] == "deal" and entries[1]["hands"][0] == [] and len(entries[1]["hands"][1]) == 3


def test_legal_moves_name_their_cards():
    rules = Rules.preset("craits", announce="action")
    game = CraitsGame.from_position(rules, hands=[["7H", "2C"], ["9S", "KS"]], top="7C", stock=["AS", "4D"])
    present = presentation(game)
    moves = present.legal_moves(game, 0)
    assert {"text": "play 7H unannounced", "card": "7H", "unannounced": True} in moves
    assert {"text": "play 2C", "card": "2C", "unannounced": False} in moves
    assert present.legal_moves(game, 1) == [] and present.prompt(game, 1) == ""


def test_help_names_this_turns_moves():
    rules = Rules.preset("craits")
    game = CraitsGame.from_position(rules, hands=[["7H", "2C", "KD"], ["9S", "KS"]], top="7C", stock=["AS", "4D"])
    raw = type("Raw", (), {"game": game, "agent_name_mapping": {"player_0": 0}, "agent_selection": "player_0"})()
    answers = iter(["?", "quit"])
    output = io.StringIO()
    human = HumanAgent(raw, 0, input=lambda prompt: next(answers), output=output)
    with pytest.raises(HumanQuit):
        human.act(None, [int(a in game.legal_actions()) for a in range(109)])
    assert (
        "Type a move as listed (e.g. 'play 2C', 'play 7H') or just the part after its verb ('2C', '7H')"
        in output.getvalue()
    )
