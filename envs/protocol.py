"""What a game's ``protocol`` module (``envs/<game>/protocol.py``) is made of: the bot
protocol's error, the checks of a request's fields, the base of an event table, and the two
contracts the protocol server (``training/frontends/protocol.py``) reads through the game's spec:

- ``ProtocolTable`` (the module's ``Table``): one seat's table, an engine of the game rebuilt
  from the events that seat was told, from which the server builds the seat's observation;
- ``ProtocolReporter`` (the module's ``Reporter``): the client's half, the events one seat
  sees of a game played on a real engine (the tests and the docs' example use it).

The messages and events themselves are documented in ``docs/bot-protocol.md``.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from .engine import MAX_SHOWN, GameEngine, clipped

Engine = TypeVar("Engine", bound=GameEngine)  # a game's engine class


class ProtocolError(ValueError):
    """A request the server refuses; the message names the problem, nothing has changed."""

    def __init__(self, message: str, event: int | None = None):
        super().__init__(message)
        self.event = event


# -------------------------------------------------------------------- the contracts
class ProtocolTable(Protocol):
    """The ``Table`` of a game's ``protocol`` module: one seat's table, rebuilt from that
    seat's events. Its hidden cards are placeholders that each event exchanges so that the
    engine fits what the seat was told; an event that can't fit raises ``ProtocolError``
    (the server undoes the whole update with a deep copy of the table)."""

    expect: str  # what the table waits for: "move" while a seat is to move, "over" at the end, else an event name
    game: Any  # the table's engine (``None`` before the first event deals the cards)

    @classmethod
    def start_rules(cls, rules: dict, players: int) -> dict:
        """The env arguments of a ``start``: the client's ``rules`` (a copy the method may
        change) for ``players`` seats, a number the spec's ``players`` range allows. Refuses
        (``ProtocolError``) rules that contradict ``players``."""
        ...

    @classmethod
    def from_env(cls, raw: Any, seat: int) -> ProtocolTable:
        """A new table for ``seat``, waiting for the first event, of a game under the rules of
        ``raw`` (the session's raw env, built from ``start_rules`` and reset)."""
        ...

    def ready_rules(self) -> dict:
        """What the ``ready`` reply states besides the env's ``rule_args()``: rules a client
        needs that the arguments may leave implicit (e.g. the deal sizes a preset names)."""
        ...

    def apply(self, event: dict) -> None:
        """Apply one event (any JSON value a client sent); ``ProtocolError`` if it is refused."""
        ...

    def to_act(self) -> int | None:
        """The seat to move, or ``None`` while the table waits for anything but a move."""
        ...

    def legal_actions(self) -> list[int]:
        """The legal actions of the seat to move, as the env numbers them."""
        ...

    def parse_action(self, text: Any) -> int:
        """A move's text -> its action; ``ProtocolError`` naming what is wrong with it."""
        ...

    def text(self, action: int) -> str:
        """An action as the protocol writes it."""
        ...

    def not_now(self, what: str) -> str:
        """Why ``what`` (e.g. ``"act"``) can't come now: what the table waits for."""
        ...

    def why_illegal(self, action: int) -> str:
        """Why this seat's ``action`` is not legal now, listing the legal moves."""
        ...

    def facts(self) -> dict:
        """The public facts a ``check`` event may assert; ``"totals"`` (the scores so far) is
        one of them from the start, the ``ok`` reply's totals."""
        ...

    def world(self, rng: Any) -> tuple[Any, Any]:
        """(the seat's view of the table, an engine sampled from that view alone): the
        engine holds nothing the seat doesn't know; the observation is read from it."""
        ...

    def prepare_env(self, raw: Any, view: Any, world: Any) -> None:
        """Make the raw env show the sampled engine ``world`` as this seat knows it, so that
        its ``observe`` encodes the seat's observation: the engine, no stale caches, and the
        seat's memory the engine doesn't hold (from ``view``)."""
        ...


class ProtocolReporter(Protocol):
    """The ``Reporter`` of a game's ``protocol`` module, built as ``Reporter(seat)``: what
    that seat sees of a game played on a real engine, as protocol events. ``opening(game)``
    gives the events of the game's start; around each move, ``token = before(game, action)``
    (before it is applied) and ``after(game, seat, token)`` (``seat`` the mover's) give the
    events of the move."""

    seat: int

    def opening(self, game: Any) -> list[dict]: ...
    def before(self, game: Any, action: int) -> Any: ...
    def after(self, game: Any, seat: int, token: Any) -> list[dict]: ...


# ------------------------------------------------------------------ field checks
def quoted(value) -> str:
    """A client's value as a message quotes it: JSON, clipped."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return clipped(text, MAX_SHOWN // 2)


def json_type(value) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false", type(None): "null"}.get(
        type(value), "a number"
    )


def fields(obj, what: str, required=(), optional=()) -> dict:
    """``obj`` if it is an object with the ``required`` keys and no key outside ``optional``."""
    if not isinstance(obj, dict):
        raise ProtocolError(f"{what} must be a JSON object, not {json_type(obj)}")
    missing = [k for k in required if k not in obj]
    if missing:
        raise ProtocolError(f"{what} lacks {', '.join(map(repr, missing))}")
    unknown = [k for k in obj if k not in required and k not in optional]
    if unknown:
        allowed = ", ".join(repr(k) for k in (*required, *optional))
        raise ProtocolError(
            f"{what} has unknown field {', '.join(quoted(k) for k in unknown)}: its fields are {allowed}"
        )
    return obj


def integer(value, what: str, low: int, high: int) -> int:
    if type(value) is not int or not low <= value <= high:
        raise ProtocolError(f"{what} must be an integer {low} to {high}, not {quoted(value)}")
    return value


def json_list(value, what: str) -> list:
    if not isinstance(value, list):
        raise ProtocolError(f"{what} must be a list, not {json_type(value)}")
    return value


def compare(facts: dict, event: dict, what: str) -> None:
    """A ``check`` event: every fact it gives must be the server's."""
    unknown = [k for k in event if k != "event" and k not in facts]
    if unknown:
        raise ProtocolError(
            f"{what} has unknown field {', '.join(quoted(k) for k in unknown)}: it may check {', '.join(facts)}"
        )
    for key, value in event.items():
        if key != "event" and value != facts[key]:
            raise ProtocolError(f"check failed: {key} is {quoted(facts[key])} here, the event says {quoted(value)}")


def players_in_rules(rules: dict, players: int) -> dict:
    """``start_rules`` for a game whose env takes the seat count as ``num_players``: the
    rules may repeat ``players``, not contradict it."""
    if rules.get("num_players", players) != players:
        raise ProtocolError(f"rules say num_players={quoted(rules['num_players'])} but players is {players}")
    rules["num_players"] = players
    return rules


# -------------------------------------------------------------------- the base
class EventTable(Generic[Engine]):
    """What every game's table shares (see ``ProtocolTable``): events handed to the handler
    their ``"event"`` field names (``EVENTS``: event -> method name), a ``check`` event's
    comparison, the engine's moves, and the defaults of the start, the ready reply and the
    env's preparation. ``Engine``: the game's engine class."""

    GAME: ClassVar[str] = ""  # the game's name in messages
    EVENTS: ClassVar[dict[str, str]] = {}
    expect: str
    game: Engine | None  # None until the first event deals the cards

    @property
    def engine(self) -> Engine:
        """The table's engine, where one exists: past an event's ``expect`` check (but the
        one that deals, which makes it) and in the words about a game under way."""
        game = self.game
        assert game is not None, "no deal yet"
        return game

    @classmethod
    def start_rules(cls, rules: dict, players: int) -> dict:
        return rules

    def ready_rules(self) -> dict:
        return {}

    def apply(self, event: dict) -> None:
        kind = event.get("event") if isinstance(event, dict) else None
        if not isinstance(kind, str) or kind not in self.EVENTS:
            if not isinstance(event, dict):
                raise ProtocolError(f"an event must be a JSON object, not {json_type(event)}")
            *first, last = (f'"{name}"' for name in self.EVENTS)
            raise ProtocolError(f"unknown {self.GAME} event {quoted(kind)}: events are {', '.join(first)} and {last}")
        getattr(self, self.EVENTS[kind])(event)

    def _check(self, ev: dict) -> None:
        compare(self.facts(), ev, "a check event")

    def facts(self) -> dict:  # pragma: no cover - interface
        raise NotImplementedError

    def to_act(self) -> int | None:
        return self.engine.current_player if self.expect == "move" else None

    def legal_actions(self) -> list[int]:
        return list(self.engine.legal_actions())

    def parse_action(self, text) -> int:
        try:
            return self.engine.text_to_action(text)
        except ValueError as exc:
            raise ProtocolError(str(exc)) from None

    def text(self, action: int) -> str:
        return self.engine.action_to_text(action)

    def prepare_env(self, raw, view, world) -> None:
        raw.game = world
        raw._obs_cache = {}
