"""The bot protocol: a program in any language plays against a deckgym bot through JSON
lines on the bot's stdin and stdout (``python -m training.serve_bot AGENT``).
``docs/bot-protocol.md`` is the reference: every message, every event, a full exchange.

One request a line, one reply a line. A game is ``start`` (the game, its rules, the seat,
agent options) → ``update`` (what this seat saw happen, in card text) and ``act`` (the legal
moves; the reply is one move) as often as needed → ``stop``. The table is only ever
described in the rules' card notation, never as observation vectors.

This module is the game-free half: requests, sessions, the agent, line reading. Each game's
half is its ``protocol`` module (``envs/<game>/protocol.py``, found through the game's spec),
whose ``Table`` and ``Reporter`` follow the contracts of ``envs/protocol.py``.

## The state rebuilt from the messages

The server never sees another seat's cards, yet the encoder needs an engine. A session
keeps a *table* (the game's ``Table``): an engine of the game whose own-seat cards and
public state are exactly what the messages said, and whose hidden cards (the other hands,
the stock, the other packs, the cards set aside) are placeholders. Before each event another
seat's move needs and after each event that shows this seat cards, the placeholders are
exchanged among the hidden places so that the engine fits what was seen; then the engine
applies the move itself, so every rule follows as the env plays it. An event that can't fit
(a card this seat holds played by another, an unknown card, a move out of turn, …) is
refused with a message naming it, and the whole update is undone.

When the bot is to act, the observation is built the env's own way: the seat's view of the
table and an engine sampled from that view alone (the table's ``world``: the game's
``view`` module), put in a raw env of the same arguments with the seat's memory
(``prepare_env``), and the env's ``observe``: the one encoder. The sampled engine is also
what a search bot (``act_on``) searches from.

``SeatReporter`` is the client side for a game played on a real engine: the events each
seat sees, as the tests and the docs' example produce them (the game's ``Reporter``).
"""

from __future__ import annotations

import copy
import json
import math
import random
from pathlib import Path

import numpy as np

from envs.agent import SearchAgent
from envs.engine import clipped
from envs.protocol import ProtocolError, ProtocolReporter, ProtocolTable, fields, integer, json_list, json_type, quoted
from envs.search import parse_options
from envs.spec import GameSpec, discover, spec_of
from training.agents import PolicyAgent, checked_act, make_agent
from training.agents.folders import agent_folder
from training.common.games import EnvHandle

__all__ = [
    "MAX_LINE",
    "PROTOCOL_VERSION",
    "SERVED_SPECS",
    "BotServer",
    "ProtocolError",
    "SeatReporter",
    "Session",
    "read_lines",
    "serve",
]

PROTOCOL_VERSION = 1
MAX_LINE = 1 << 20  # bytes of UTF-8 (newline not counted): a longer request is refused while it is read
MAX_DIGITS = 4000  # an integer with more digits is refused (Python refuses to parse beyond 4300)
START_OPTIONS = ("seed", "deterministic", "scores")
SERVED_SPECS = (
    "'random', 'heuristic', 'ismcts[:simulations=1000,...]', a checkpoint folder or an exported bot (onnx:DIR)"
)


def _protocol_module(spec: GameSpec):
    """The game's ``protocol`` module; ``ProtocolError`` for a game that has none."""
    try:
        return spec.module("protocol", "be played over the bot protocol")
    except ValueError as exc:
        raise ProtocolError(str(exc)) from None


# -------------------------------------------------------------------------- server
class Session:
    """One game seen from one seat: the table, the agent and the env whose encoder builds
    the observation."""

    def __init__(self, agent_spec: str, message: dict, env_id: str | None = None):
        fields(message, "start", ("type", "protocol", "game", "seat", "players"), ("rules", "options", "id"))
        if type(message["protocol"]) is not int or message["protocol"] != PROTOCOL_VERSION:
            raise ProtocolError(
                f"protocol version {quoted(message['protocol'])} is not spoken here: this server "
                f"speaks version {PROTOCOL_VERSION}"
            )
        game = message["game"]
        if not isinstance(game, str):
            raise ProtocolError(f"game must be a string (an env id), not {json_type(game)}")
        games = discover()
        if game not in games:
            raise ProtocolError(f"unknown game {quoted(game)}: games are {', '.join(games)}")
        if env_id is not None and game != env_id:
            raise ProtocolError(f"this server plays {env_id} only, not {game}")
        if not isinstance(message.get("rules", {}), dict):
            raise ProtocolError(f"rules must be a JSON object of env arguments, not {json_type(message['rules'])}")
        rules = dict(message.get("rules") or {})
        for key in ("render_mode", "illegal_action"):
            if key in rules:
                raise ProtocolError(f"rules: {key!r} is no rule of the game")
        table_class = _protocol_module(games[game]).Table
        fewest, most, _ = games[game].players
        players = integer(message["players"], "players", fewest, most)
        rules = table_class.start_rules(rules, players)
        seat = integer(message["seat"], "seat", 0, players - 1)
        options = fields(message.get("options", {}), "options", (), START_OPTIONS)
        seed = options.get("seed")
        if seed is not None and type(seed) is not int:
            raise ProtocolError(f"options.seed must be an integer, not {quoted(seed)}")
        for key in ("deterministic", "scores"):
            if key in options and not isinstance(options[key], bool):
                raise ProtocolError(f"options.{key} must be true or false, not {quoted(options[key])}")
        try:
            env = EnvHandle(game, rules)
        except ValueError as exc:
            raise ProtocolError(f"rules: {exc}") from None
        try:
            self.agent = make_agent(agent_spec, env, seed=seed, deterministic=options.get("deterministic", True))
        except (ValueError, OSError) as exc:
            raise ProtocolError(f"agent {agent_spec}: {exc}") from None
        self.agent.reset()
        self.env, self.seat, self.players = env, seat, players
        self.scores = options.get("scores", True)
        self.raw = env.raw
        self.raw.reset(seed=0)
        self.agent_name = self.raw.possible_agents[seat]
        self.rng = random.Random(seed)
        self.table: ProtocolTable = table_class.from_env(self.raw, seat)
        self.last_observation = None  # the last observation built for the agent (for tests)

    def ready(self) -> dict:
        rules = {**self.env.rule_args, **self.table.ready_rules()}
        return {
            "type": "ready",
            "protocol": PROTOCOL_VERSION,
            "game": self.env.id,
            "seat": self.seat,
            "players": self.players,
            "agent": getattr(self.agent, "name", "agent"),
            "rules": rules,
        }

    def update(self, message: dict) -> dict:
        fields(message, "update", ("type", "events"), ("id",))
        events = json_list(message["events"], "events")
        saved = copy.deepcopy(self.table)
        for i, event in enumerate(events):
            try:
                self.table.apply(event)
            except ProtocolError as exc:
                self.table = saved
                raise ProtocolError(f"event {i} ({_brief(event)}): {exc}", event=i) from None
            except Exception as exc:  # a bug here must not leave a half-applied update
                self.table = saved
                raise ProtocolError(
                    f"event {i} ({_brief(event)}): internal error: {type(exc).__name__}: {exc}", event=i
                ) from None
        return self.status("ok")

    def status(self, kind: str) -> dict:
        table = self.table
        return {
            "type": kind,
            "expect": table.expect,
            "to_act": table.to_act() if table.game else None,
            "totals": table.facts()["totals"],
        }

    def act(self, message: dict) -> dict:
        fields(message, "act", ("type", "legal"), ("id",))
        table, seat = self.table, self.seat
        if table.expect != "move" or table.to_act() != seat:
            why = (
                table.not_now("act")
                if table.expect != "move"
                else f"act can't come now: seat {table.to_act()} is to move, not you (seat {seat})"
            )
            raise ProtocolError(why)
        texts = json_list(message["legal"], "legal")
        legal = table.legal_actions()
        given = {}
        for text in texts:
            given[table.parse_action(text)] = text
        wrong = [text for a, text in given.items() if a not in legal]
        if wrong:
            why = table.why_illegal(table.parse_action(wrong[0]))
            raise ProtocolError(f"legal lists {quoted(wrong[0])}, which is not legal here: {why}")
        missing = [table.text(a) for a in legal if a not in given]
        if missing:
            raise ProtocolError(
                f"legal lacks {', '.join(map(repr, missing))}: the legal moves here are "
                f"{', '.join(table.text(a) for a in legal)}"
            )
        observation, world = self.observe()
        action = int(checked_act(self.agent, seat, observation, world))
        reply = {"type": "move", "action": table.text(action)}
        if self.scores and len(legal) > 1:
            scores = self._scores(observation, legal)
            if scores is not None:
                reply["score_kind"], reply["scores"] = scores
        return reply

    def observe(self):
        """The seat's observation, by the env's own encoder (see the module docstring), and
        the engine it was read from (sampled from the seat's view alone)."""
        view, world = self.table.world(self.rng)
        raw = self.raw
        self.table.prepare_env(raw, view, world)
        raw.agent_selection = self.agent_name
        observation = raw.observe(self.agent_name)
        mask = np.flatnonzero(observation["action_mask"]).tolist()
        if mask != self.table.legal_actions():
            raise AssertionError(f"the sampled engine's legal moves {mask} differ from the table's")
        self.last_observation = observation
        return observation, world

    def _scores(self, observation, legal):
        agent, text = self.agent, self.table.text
        if isinstance(agent, SearchAgent):  # visits of the last search's root
            stats = agent.root_stats()
            return "visits", {text(a): stats[a][0] if a in stats else 0 for a in legal}
        if isinstance(agent, PolicyAgent):
            logits = agent.logits(observation["observation"])
        elif type(agent).__name__ == "OnnxAgent":
            logits = agent.logits(observation["observation"], observation["action_mask"])
        else:
            return None
        return "logits", {text(a): round(float(logits[a]), 6) for a in legal}


def _brief(event) -> str:
    if isinstance(event, dict) and event.get("event") == "move":
        return f"move by seat {quoted(event.get('seat'))}: {quoted(event.get('move'))}"
    if isinstance(event, dict) and "event" in event:
        return f"{quoted(event['event'])}"
    return quoted(event)


def _check_spec(spec: str) -> None:
    """Refuse at once an agent spec no start could build (each start builds the agent for
    its game and rules, where a checkpoint is checked against them)."""
    if spec in ("random", "heuristic"):
        return
    if spec == "ismcts" or spec.startswith("ismcts:"):
        options = parse_options(spec.partition(":")[2])  # checked (they are the same for every game)
        prior = options.get("prior")
        if prior and not Path(agent_folder(prior)).is_dir():
            raise ValueError(
                f"IS-MCTS option prior={prior!r}: no such checkpoint; name a checkpoint folder or a shipped bot"
            )
        return
    if not Path(agent_folder(spec)).is_dir():
        raise ValueError(f"unknown agent {spec!r}: serve {SERVED_SPECS}")


class BotServer:
    """The protocol's message handler: ``handle(message)`` answers one request (a parsed
    JSON value), ``handle_line(text)`` one line; the CLI (``training.frontends.serve_bot``) and the
    tests both go through it. One game at a time."""

    def __init__(self, agent_spec: str, env_id: str | None = None):
        if agent_spec == "human":
            raise ValueError("the human agent reads the terminal, which the protocol uses: serve a bot")
        games = discover()
        if env_id is not None and env_id not in games:
            raise ValueError(f"unknown env id {env_id!r}: choose one of {', '.join(games)}")
        _check_spec(agent_spec)
        self.agent_spec = agent_spec
        self.env_id = env_id
        self.session: Session | None = None

    def handle_line(self, line: str | bytes) -> dict:
        """One request line (text, or bytes that must be UTF-8) -> the reply."""
        if isinstance(line, str):
            line = line.encode("utf-8", "surrogatepass")
        if len(line.rstrip(b"\r\n")) > MAX_LINE:
            return _too_long()
        try:
            message = json.loads(
                line.decode("utf-8"), parse_constant=_non_finite, parse_float=_finite_float, parse_int=_bounded_int
            )
        except UnicodeDecodeError as exc:
            return {
                "type": "error",
                "error": f"the request is not UTF-8 text: byte 0x{line[exc.start]:02x} at offset {exc.start}",
            }
        except json.JSONDecodeError as exc:
            return {"type": "error", "error": f"malformed JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"}
        except ProtocolError as exc:
            return {"type": "error", "error": str(exc)}
        except RecursionError:
            return {"type": "error", "error": "the request is nested too deeply"}
        return self.handle(message)

    def handle(self, message) -> dict:
        try:
            reply = self._dispatch(message)
        except ProtocolError as exc:
            reply = {"type": "error", "error": str(exc)}
            if exc.event is not None:
                reply["event"] = exc.event
        except Exception as exc:  # a bug or an agent's failure: say so, keep serving
            reply = {"type": "error", "error": f"internal error: {type(exc).__name__}: {clipped(str(exc))}"}
        if isinstance(message, dict) and "id" in message:
            reply["id"] = message["id"]
        return reply

    def _dispatch(self, message) -> dict:
        if not isinstance(message, dict):
            raise ProtocolError(f"a request must be a JSON object, not {json_type(message)}")
        kind = message.get("type")
        if kind not in ("start", "update", "act", "stop"):
            raise ProtocolError(
                f'unknown request type {quoted(kind)}: requests are "start", "update", "act" and "stop"'
            )
        if kind == "start":
            if self.session is not None:
                raise ProtocolError('a game is under way: send "stop" before starting another')
            self.session = Session(self.agent_spec, message, self.env_id)
            return self.session.ready()
        if self.session is None:
            raise ProtocolError(f'{kind} can\'t come now: no game is under way (send "start" first)')
        if kind == "stop":
            fields(message, "stop", ("type",), ("id",))
            self.session = None
            return {"type": "bye"}
        return self.session.update(message) if kind == "update" else self.session.act(message)


def _non_finite(name: str):
    raise ProtocolError(f"{name} is not a JSON number: numbers must be finite")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ProtocolError(f"the number {clipped(text, 40)} is out of range: numbers must be finite")
    return value


def _bounded_int(text: str) -> int:
    if len(text) > MAX_DIGITS:
        raise ProtocolError(f"an integer of {len(text)} digits is refused: at most {MAX_DIGITS}")
    return int(text)


def _too_long() -> dict:
    return {"type": "error", "error": f"the request is longer than {MAX_LINE} bytes"}


def _encoded(reply: dict) -> str:
    """The reply as strict JSON (never NaN or Infinity; requests can't carry them, and this
    holds if a reply ever would)."""
    try:
        return json.dumps(reply, allow_nan=False)
    except (ValueError, RecursionError) as exc:
        fallback = {"type": "error", "error": f"internal error: the reply can't be written as JSON: {exc}"}
        return json.dumps(fallback)


def read_lines(stdin):
    """Lines of a binary stream, each at most ``MAX_LINE`` bytes (newline not counted), or
    ``None`` for a longer one, which is skipped while it is read: memory stays bounded."""
    while True:
        line = stdin.readline(MAX_LINE + 2)  # room for "\r\n"
        if not line:
            return
        if line.endswith(b"\n") or len(line) <= MAX_LINE:
            yield line
            continue
        while line and not line.endswith(b"\n"):
            line = stdin.readline(1 << 16)
        yield None


def serve(server: BotServer, stdin, stdout) -> None:
    """Answer requests from ``stdin`` (a binary stream), one a line, until end of input;
    blank lines are ignored. No line ends the server: each bad one gets an ``error`` reply."""
    for line in read_lines(stdin):
        if line is not None and not line.strip():
            continue
        reply = _too_long() if line is None else server.handle_line(line)
        stdout.write(_encoded(reply) + "\n")
        stdout.flush()


# ------------------------------------------------------------------ the client side
class SeatReporter:
    """What one seat sees of a game played on a real engine, as protocol events: the
    client's half of the protocol (the tests and the docs' example use it), told by the
    engine's game's ``Reporter`` (``envs.protocol.ProtocolReporter``).

    ``opening(game)`` gives the events of the game's start; around each move,
    ``token = before(game, action)`` (before it is applied) and ``after(game, seat, token)``
    (``seat`` the mover's) give the events of the move."""

    def __init__(self, seat: int):
        self.seat = seat
        self._reporters: dict[type, ProtocolReporter] = {}  # engine class -> its game's reporter

    def opening(self, game) -> list[dict]:
        return self._reporter(game).opening(game)

    def before(self, game, action: int):
        return self._reporter(game).before(game, action)

    def after(self, game, seat: int, token) -> list[dict]:
        return self._reporter(game).after(game, seat, token)

    def _reporter(self, game) -> ProtocolReporter:
        kind = type(game)
        if kind not in self._reporters:
            self._reporters[kind] = _protocol_module(spec_of(game)).Reporter(self.seat)
        return self._reporters[kind]
