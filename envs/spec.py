"""How a game declares itself: one ``GameSpec`` in its folder (``envs/<game>/spec.py``),
registered once, read by every tool (training, the search bot, the protocol server, the web
app, terminal play, export, leagues). No tool outside a game's folder names the game.

A game is a package with these modules (the spec's ``package``; each is documented by the
``Protocol`` of the same name below):

- ``env``: the PettingZoo AEC env, ``env(**kwargs)`` and ``raw_env(**kwargs)``;
- ``view``: the seat's view and its determinization, for the search bot (``SearchGame``);
- ``protocol``: the bot protocol's table, rebuilt from one seat's events (``ProtocolTable``);
- ``present``: the table as a seat sees it, in words and as JSON, for people (``Presentation``).

Built-in games register when ``envs`` is imported; a game from another installed package
registers through the ``deckgym.games`` entry point (its value: the ``GameSpec`` object), or
by calling ``register_game`` itself; ``DECKGYM_GAME_MODULES`` (comma-separated module names)
imports such modules first, for a game that is not installed.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from types import ModuleType
from typing import Any, Protocol

import pettingzoo

from .engine import shown

ENTRY_POINT_GROUP = "deckgym.games"
MODULES_VARIABLE = "DECKGYM_GAME_MODULES"


@dataclass(frozen=True)
class GameSpec:
    """Everything the tools need to know of a game; the rest is in its modules."""

    id: str  # the env id, e.g. "craits_v0" (PettingZoo: "deckgym/craits-v0")
    name: str  # for people, e.g. "Craits"
    package: str  # the game's package, holding the modules env, view, protocol, present
    players: tuple[int, int, int]  # (fewest, most, default) players
    lower_score_wins: bool  # penalty points (lower wins) or gains (higher wins)
    heuristic: Callable[[Any], Any]  # raw env -> the heuristic agent for that env's rules
    observation_version: int = 1  # bumped when the observation encoding changes (exported bots check it)
    aliases: tuple[str, ...] = ()  # other names a tool accepts, e.g. "craits" for the search bot
    deals: Callable[[Any], int | None] = lambda raw: None  # raw env -> deals in a game (None: no deals)
    deal_over: Callable[[Any], bool] = lambda game: False  # engine -> whether its last action ended a deal
    short_game: dict = field(default_factory=dict)  # env args for one short game, to watch a bot play
    # Every action's meaning, when the engine's text for an action depends on the phase (an
    # exported bot's sidecar lists them); None: the engine's action_to_text at the start.
    action_names: tuple[str, ...] | None = None
    # The relabellings under which the game plays the same, as (observation index, action index)
    # arrays, the identity first (envs.craits.env.suit_symmetries); none: the game has none.
    symmetries: Callable[[], list[tuple[Any, Any]]] = lambda: []

    def module(self, part: str, use: str = "use it there") -> ModuleType:
        """The game's module ``part`` (``env``, ``view``, ``protocol``, ``present``);
        ``ValueError`` when the game has none, saying what it can't be (``use``: "be shown
        to people", ...)."""
        name = f"{self.package}.{part}"
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:  # the module is there; something it imports is not
                raise
            raise ValueError(f"{self.id} can't {use}: it has no module {name}") from None

    @property
    def pettingzoo_id(self) -> str:
        return "deckgym/" + self.id.replace("_v", "-v")


class SearchGame(Protocol):
    """The ``view`` module: what the search bot needs (see ``envs/search.py``)."""

    def new_memory(self) -> Any: ...  # what a seat remembers of play beyond the public table
    def view(self, game: Any, seat: int, memory: Any = None) -> Any: ...  # what ``seat`` may know
    def determinize(self, view: Any, rng: Any, policy: Any = None) -> Any: ...  # an engine fitting the view
    def is_terminal(self, state: Any) -> bool: ...  # where a search stops (may be a deal's end)
    def visible(self, state: Any, searcher: int) -> bool: ...  # the searcher sees the move to come
    def private(self, state: Any, searcher: int) -> Any: ...  # what the searcher alone saw change
    def returns(self, state: Any) -> list[float]: ...  # every seat's reward at a terminal state
    def heuristic_action(self, state: Any, rng: Any = None) -> int: ...  # the rollout rule

    # Optional: ``encoder(view)`` -> ``encode(state, player)``, a player's env observation of a
    # sampled world, for a search guided by a network (``ismcts:prior=BOT``).


GAMES: dict[str, GameSpec] = {}  # env id -> spec, in the order registered
_discovered = False


def register_game(spec: GameSpec) -> GameSpec:
    """Make ``spec`` known to every tool and to PettingZoo's registry (``pettingzoo.make``).
    Registering the same spec again does nothing; another spec under a taken id or alias is
    refused."""
    taken = {name: s for s in GAMES.values() for name in (s.id, *s.aliases)}
    for name in (spec.id, *spec.aliases):
        if name in taken and taken[name] is not spec and taken[name] != spec:
            raise ValueError(f"game name {name!r} is taken by {taken[name].package}")
    GAMES[spec.id] = spec
    try:  # the registry exists from PettingZoo 1.27; without it the envs work, unnamed there
        if spec.pettingzoo_id not in pettingzoo.aec_registry:
            pettingzoo.register("aec", spec.pettingzoo_id, entry_point=f"{spec.package}.env:env")
    except AttributeError:
        pass
    return spec


def discover() -> dict[str, GameSpec]:
    """Every registered game: the built-in ones, those of ``DECKGYM_GAME_MODULES`` and the
    ``deckgym.games`` entry points (looked up once)."""
    global _discovered
    if not _discovered:
        _discovered = True
        for name in filter(None, (n.strip() for n in os.environ.get(MODULES_VARIABLE, "").split(","))):
            importlib.import_module(name)
        for point in entry_points(group=ENTRY_POINT_GROUP):
            spec = point.load()
            if not isinstance(spec, GameSpec):
                raise TypeError(f"entry point {point.name} = {point.value} is not a GameSpec")
            register_game(spec)
    return GAMES


def game_spec(name: str) -> GameSpec:
    """The game of an env id or alias; ``ValueError`` naming the games otherwise."""
    games = discover()
    for spec in games.values():
        if name == spec.id or name in spec.aliases:
            return spec
    raise ValueError(f"unknown game {shown(name)}: choose one of {', '.join(games)}")


_specs_of: dict[type, GameSpec] = {}  # engine class -> its game


def spec_of(engine: Any) -> GameSpec:
    """The registered game whose package defines the engine's class (or a class it derives from)."""
    kind = type(engine)
    spec = _specs_of.get(kind)
    if spec is None:
        games = discover().values()
        spec = next((s for k in kind.__mro__ for s in games if k.__module__.startswith(s.package + ".")), None)
        if spec is None:
            raise ValueError(f"no registered game defines the engine {kind.__qualname__}")
        _specs_of[kind] = spec
    return spec


def default_game() -> GameSpec:
    """The game a tool plays when none is named: the first registered."""
    return next(iter(discover().values()))
