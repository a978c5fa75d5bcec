"""A person at the table in the terminal: the ``human`` agent spec of ``training.frontends.play``.

Everything a person is shown is built from their seat's point of view by the game's
``present`` module (``envs/present.py``), never from the table's full rendering (which
shows every hand): the seat's view of the table (``view_text``), what it must decide, the
legal moves, every move told as that seat may know it, and the score sheet at the end
(``result_text``).

``HumanAgent`` prompts with those and reads a move as its text (as listed) or the part
after its verb; bad input prompts again; end of input, Ctrl-C or ``quit`` ends the game
cleanly (``HumanQuit``, a ``SystemExit``: no traceback).
"""

from __future__ import annotations

import sys

from envs.present import SeatNarrator, presentation, presentation_of, seat_name
from envs.spec import game_spec


def view_text(view: dict, names=None) -> str:
    """A seat's view (the game's ``seat_view``) as text for the terminal; ``names`` (one
    per seat) label the other seats."""
    seat = view["seat"]

    def who(s):
        label = seat_name(s, seat)
        return f"{label} [{names[s]}]" if names and s != seat else label

    return "\n".join(presentation_of(game_spec(view["game"])).view_lines(view, who))


def result_text(view: dict, names=None) -> str:
    """The final score sheet of a finished game's view."""
    better = "lower" if view["lower_wins"] else "higher"
    lines = [f"final scores ({better} is better):"]
    for s, score in enumerate(view["scores"]):
        label = seat_name(s, view["seat"]) + (f" [{names[s]}]" if names and s != view["seat"] else "")
        lines.append(f"  {label:<30} {score:>5}" + ("  wins" if view["winners"] and s in view["winners"] else ""))
    return "\n".join(lines)


# --------------------------------------------------------------------- the terminal
class HumanQuit(SystemExit):
    """The person ended the game (end of input, Ctrl-C, ``quit``). A ``SystemExit`` with
    status 130: uncaught, it ends the program without a traceback."""

    def __init__(self, message: str = "game abandoned"):
        super().__init__(130)
        self.message = message


def help_text(game, legal) -> str:
    """How to answer the prompt, with this turn's moves as the examples."""
    moves = [game.action_to_text(a) for a in legal[:3]]
    short = [text.split(" ", 1)[1] for text in moves if " " in text]
    after = f" ({', '.join(map(repr, short))})" if short else ""
    return (
        f"Type a move as listed (e.g. {', '.join(map(repr, moves))}) or just the part after its verb{after}. "
        "'table' shows the table again, 'moves' the legal moves, 'quit' ends the game."
    )


class HumanAgent:
    """A person in the terminal. ``act`` shows the seat's view of the table (the engine of
    the env it is bound to, as its game's ``seat_view`` sees it) and the legal moves, and
    reads one.

    Bind it to the AEC env it plays in and its seat: ``HumanAgent(raw_env, seat)`` or
    ``HumanAgent().bind(raw_env, seat, names)``; without a seat it takes the seat that
    first asks it to act. Pass ``on_move`` to ``play_game`` to have every move told as this
    seat sees it (from the start when the seat is bound, else from its first turn), and
    call ``finish()`` after the game for the last moves and the score sheet."""

    name = "human"

    def __init__(self, raw_env=None, seat: int | None = None, names=None, input=input, output=None):
        self.raw, self.seat, self.names = raw_env, seat, names
        self._input = input
        self._output = output
        self.reset()

    def bind(self, raw_env, seat: int | None = None, names=None) -> HumanAgent:
        self.raw, self.seat = raw_env, seat
        if names is not None:
            self.names = list(names)
        return self

    def reset(self) -> None:
        self._narrator: SeatNarrator | None = None
        self._pending = None
        self._game = None

    # -- output --------------------------------------------------------------------
    def _print(self, text: str = "") -> None:
        print(text, file=self._output or sys.stdout, flush=True)

    def _narrate(self, game, viewer: int) -> SeatNarrator:
        """Print what happened since the last call: the pending move (now applied) first."""
        narrator = self._narrator
        if narrator is None or self._game is not game:
            narrator = self._narrator = presentation(game).Narrator(viewer)
            self._game = game
            for entry in narrator.start(game):
                self._print(entry["text"])
        if self._pending is not None:
            for entry in narrator.after(game, self._pending):
                self._print(self._line(entry, viewer))
            self._pending = None
        return narrator

    def _line(self, entry: dict, viewer: int) -> str:
        seat = entry.get("seat")
        if entry["kind"] == "move" and self.names and seat is not None and seat != viewer:
            return f"{entry['text']}  [{self.names[seat]}]"
        return entry["text"]

    def on_move(self, raw_env, seat: int, action) -> None:
        """``play_game``'s hook (called before each move is made): tells the moves as this
        seat sees them."""
        if self.raw is None:
            self.raw = raw_env
        if self.seat is None:  # not bound to a seat: told from its first turn on
            return
        game = raw_env.game
        self._pending = self._narrate(game, self.seat).before(game, seat, action)

    def finish(self) -> None:
        """After the game: the moves not told yet and the score sheet."""
        if self.raw is None or self.raw.game is None or self.seat is None:
            return
        game = self.raw.game
        self._narrate(game, self.seat)
        if game.is_over:
            self._print("\n" + result_text(presentation(game).seat_view(game, self.seat), self.names))

    # -- input ---------------------------------------------------------------------
    def act(self, observation, action_mask) -> int:
        if self.raw is None:
            raise RuntimeError("HumanAgent is not bound to an env: HumanAgent(raw_env) or .bind(raw_env, seat)")
        game = self.raw.game
        if self.seat is None:  # not bound to a seat: it plays the seat that first asks it
            self.seat = self.raw.agent_name_mapping[self.raw.agent_selection]
        seat = self.seat
        self._narrate(game, seat)
        legal = [int(a) for a in range(len(action_mask)) if action_mask[a]]
        self._show(game, seat, legal)
        while True:
            try:
                line = self._input("your move> ")
            except (EOFError, KeyboardInterrupt):
                self._print("\ngame abandoned")
                raise HumanQuit() from None
            if line is None:  # an input function that ran dry
                self._print("\ngame abandoned")
                raise HumanQuit()
            command = " ".join(str(line).lower().split())
            if command in ("quit", "exit", "q"):
                self._print("game abandoned")
                raise HumanQuit()
            if command in ("?", "help", "h"):
                self._print(help_text(game, legal))
            elif command in ("table", "t"):
                self._show(game, seat, legal)
            elif command in ("moves", "m"):
                self._print(self._moves(game, legal))
            elif command:
                action = self.parse(game, command, legal)
                if action is not None:
                    return action
                self._print(f"{line.strip()!r} is not a legal move here. {self._moves(game, legal)}  ('?' for help)")

    def _show(self, game, seat: int, legal) -> None:
        present = presentation(game)
        self._print("")
        self._print(view_text(present.seat_view(game, seat), self.names))
        self._print(present.prompt(game, seat) if game.current_player == seat else "")
        self._print(self._moves(game, legal))

    @staticmethod
    def _moves(game, legal) -> str:
        return "legal moves: " + ", ".join(game.action_to_text(a) for a in legal)

    @staticmethod
    def parse(game, text: str, legal) -> int | None:
        """The legal action ``text`` names, or None: the move's text (any case), or the part
        after its verb ('7H', '7H unannounced', 'S', '7')."""
        candidates = [text] + [
            f"{verb} {text}" for verb in dict.fromkeys(game.action_to_text(a).split()[0] for a in legal)
        ]
        for candidate in candidates:
            try:
                action = game.text_to_action(candidate)
            except (ValueError, IndexError):
                continue
            if action in legal:
                return action
        return None


def narrating_agent(agents) -> HumanAgent | None:
    """The first ``HumanAgent`` among ``agents`` (its ``on_move`` tells the moves), or None."""
    return next((a for a in agents if isinstance(a, HumanAgent)), None)
