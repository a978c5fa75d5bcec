"""Information-set Monte Carlo tree search (IS-MCTS) for the deckgym games.

The algorithm of Cowling, Powley & Whitehouse (2012), "Information Set Monte Carlo Tree
Search", with the parameters of OpenSpiel's ``algorithms/ismcts``. It is game-independent:
a game plugs in through its *search game*, the module ``envs.<game>.view``, whose functions
build a seat's view and sample worlds from it (``new_memory``, ``view``, ``determinize``,
``is_terminal``, ``visible``, ``private``, ``returns``, ``heuristic_action``).

```python
from envs.search import ISMCTSBot
bot = ISMCTSBot("craits", simulations=1000, uct_c=1.4, seed=0)
action = bot.act_on(game, seat)          # game: the engine, seat: the seat to act
bot = ISMCTSBot.from_spec("ismcts:simulations=1000,uct_c=1.4", "pairs_draft")
# guided by a trained network (training.agents.make_agent loads it from the spec):
bot = make_agent("ismcts:prior=craits,simulations=200", EnvHandle("craits_v0"))
```

## What the search may know

``act_on(game, seat)`` reads the engine once, through the search game's ``view``, into a
*seat view* (``CraitsView`` / ``PairsView``): a frozen dataclass holding the public state,
the seat's own cards and what the seat saw, and no hidden card. Everything after that
works from the view alone: the engine is never touched again. Two engine positions that
differ only in cards the seat can't see give equal views, hence (for a fixed seed) the
same move; ``tests/test_search.py`` checks this by swapping hidden cards.

What a view holds (details in the view modules):

- Craits: the public table (discard pile, top, current suit, phase, crank count,
  direction, announcements, lost turns, scores, pressure, every hand's size, the stock's
  size) and the seat's own hand (not while the dealer names a suit for an upcard 8 or 9
  without seeing the hand), and each player's voids revealed by play (the engine keeps
  them: ``voids``, ``fresh``).
- Pairs Draft: the public table (face-up and face-down cards, this round's plays, the
  start player, picks and rounds done, every hand's size), the seat's own cards, pack and
  discard, and what the seat can infer from the packs it saw: the bot remembers the pack
  it held at each of its own picks (as the env's observation does), which gives the
  cards the others took from packs it saw again, the contents of the packs it passed
  (less the unknown picks since) and, after the draft, its own 11 picks. This memory
  needs the bot to be asked for every pick of its seat; call ``reset()`` between games.

## Determinization

Each iteration samples a world consistent with the view (``search_game.determinize``):
the unseen cards are dealt uniformly at random to the places the view leaves open, with
every hand and the stock at their known sizes, the seat's own cards where they are and
cards of known whereabouts where they are known to be (Craits: a player who drew held none
of the cards it could have played then, so at least its hand size less the cards it drew
since are dealt from outside them). Moves already made in the current
simultaneous step of Pairs Draft (picks, discards of the seats before the searcher) are
unknown and re-made by the rollout policy. Engine randomness the seat can't know (the
order of a future Craits reshuffle, later deals) comes from the search's own generator.

``max_world_samples``: -1 samples a new world every iteration; ``k`` ≥ 1 samples ``k``
worlds once and reuses them (each iteration copies one at random), as in OpenSpiel.

## The tree (single-observer IS-MCTS)

Nodes are the searching seat's information sets: a node is reached by the sequence of
moves the searcher observed from the root (every move whose action it sees) and, after
each, the searcher's private observation (its own hand in Craits, which shows its draws;
the pack it receives in the Pairs Draft draft). Other players' decisions are nodes of
this same tree, keyed by the *searcher's* information (SO-ISMCTS), not by their own as
in OpenSpiel's multi-observer version: their legal moves differ between worlds, so each
edge keeps an availability count (how often its action was legal when its node was
visited) and UCB uses it in place of the parent's visits (Cowling et al.'s subset-armed
bandit). Each player chooses to maximize its own reward. Moves the searcher can't see (the
others' simultaneous picks and discards in Pairs Draft) are not tree moves: the rollout
policy makes them, like chance events. Forced moves (one legal action) pass through the
tree without counting as its expansion.

One iteration: sample a world; descend from the root, only the actions legal in this
world considered: at a node with an untried legal action, try one at random (expansion:
one new node per iteration, as OpenSpiel), else select by ``child_selection_policy``:

- ``uct``: UCB1, mean reward + ``uct_c`` · √(ln availability / visits);
- ``puct`` (the default): mean reward + ``uct_c`` · prior · √availability / (1 + visits),
  OpenSpiel's PUCT, with the prior from the game's heuristic rule: ``HEURISTIC_PRIOR``
  (0.5) on the move the rule would make in this world, the rest spread evenly.

then a rollout to the end (``rollout="heuristic"``: the heuristic bot's own rule, read off
the engine, for every player; ``"random"``; ``"prior"``: the guiding network's favourite
move; ``"prior_own"``: the network's for the searcher's own seat, the heuristic rule's for the
others); back up the rewards, every edge scored for the player who chose it.

## Guided by a network (``prior=BOT``)

``prior`` names a trained bot (a checkpoint folder, or a shipped bot by name); the caller
loads it (``training.agents.make_agent``) and passes it in as ``network``: anything with
``logits(observation)``. Then PUCT scores every legal move at once (no random expansion
first), mean reward + ``uct_c`` · prior · √availability / (1 + visits), an untried move's
mean reward counted as 0 (an even result: rewards are zero-sum). The priors are a softmax of
the network's scores for the legal moves at ``prior_temperature`` (default: 1 for a
policy's logits, ``VALUE_TEMPERATURE`` for a Q-network's values, which are rewards), from
the acting player's env observation *of the sampled world*, built by the game's
``encoder(view)`` (``envs/<game>/view.py``): for the searcher it is exactly the observation
the env gives it (tested), computed once per tree node; for another player it shows that
world's sampled hand, so it changes from world to world and is computed at each visit. The
network sees nothing the world doesn't hold, and the world holds nothing the seat can't know.
A guided search's default budget is ``GUIDED_SIMULATIONS`` (200): under 250 ms a move on one
core (docs/search.md).

Why PUCT by default: a Pairs Draft rollout's reward varies far more (standard deviation
about 0.3) than the difference between two reasonable draft picks (a few hundredths), so
with UCB1 a thousand iterations pick nearly at random among them and the search drafts
worse than the heuristic; the prior keeps the heuristic's move unless the search finds a
clearly better one. Heuristic rollouts that play exactly as the heuristic bot mattered
too (the opponents' real policy in the duplicate evaluation).

## Rewards

The env's rewards for the seat (and every player in the tree for itself):

- Craits: the search runs to the end of the current deal only; the reward is the env's
  deal reward (``reward="deal"``): per side (a seat, or a partnership), (mean of the other
  sides' deal points − its own deal points) / 100, pressure penalties included. A rollout
  still running after ``MAX_ROLLOUT_MOVES`` moves is scored as it stands.
- Pairs Draft: the game's result, the env's ``reward="points"``: (own result − mean of
  the other three results) / 20, where a result is the points plus 100 for an instant win.

## Parameters (OpenSpiel's names)

| option | default | meaning |
|---|---|---|
| ``simulations`` | 1000 | iterations per move (OpenSpiel ``max_simulations``) |
| ``max_time_ms`` | 0 | if > 0, also stop when this much time has passed (at least one iteration); given without ``simulations``, only the time limits the search |
| ``uct_c`` | 1.4 | exploration constant (of UCB1 or PUCT) |
| ``max_world_samples`` | -1 | -1: a new world per iteration; k ≥ 1: a fixed pool of k worlds |
| ``final_policy`` | ``max_visit_count`` | ``max_visit_count`` (ties at random), ``normalized_visit_count`` (sample in proportion to visits), ``max_value`` (best mean reward) |
| ``rollout`` | ``heuristic`` | ``heuristic``, ``random``, ``prior`` (the network's best move) or ``prior_own`` (the network's for the searcher, the heuristic's for the others) |
| ``leaf`` | ``rollout`` | how a new leaf is valued: ``rollout`` (played to the end by the ``rollout`` rule) or ``value`` (played on by that rule to the searcher's next decision, then valued by the ``prior`` network's best Q-value there; a Q-network only) |
| ``others`` | ``search`` | the other players' moves in the tree: ``search`` (chosen by the search for each player, as its own are) or ``rollout`` (the ``rollout`` rule's move in each world, as in the rollouts: an opponent model, exact against bots that play that rule, a guess against others; the partner too) |
| ``child_selection_policy`` | ``puct`` | ``puct`` (heuristic prior, or the network's) or ``uct`` (plain UCB1) |
| ``prior`` | (none) | a trained bot whose network gives PUCT's priors (above); ``simulations`` then defaults to 200 |
| ``prior_temperature`` | 0 (automatic) | the softmax temperature of the priors; 0: 1 for policy logits, 0.05 for Q-values |
| ``reward_transform`` | ``none`` | ``none``: the rewards above are backed up as they are; ``symlog``: as sign(r)·ln(1 + abs(r)), which keeps their sign and order and squashes heavy tails (the doubling penalties of Craits' ``empty_stock="pressure"``, where a few runaway rollouts would outweigh every other and dwarf the exploration term) |
| ``seed`` | None | an int, a sequence of ints, or None (fresh entropy) |

A move with a single legal action is returned without search.
"""

from __future__ import annotations

import itertools
import math
import random
import time
import types
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from .agent import SearchAgent
from .engine import as_action, shown
from .spec import game_spec

SEARCH_FUNCTIONS = (
    "new_memory",
    "view",
    "determinize",
    "is_terminal",
    "visible",
    "private",
    "returns",
    "heuristic_action",
)
# A game without them can't be searched with a network's guidance (encoder) or valued by it (sides).
OPTIONAL_FUNCTIONS = ("encoder", "sides")
FINAL_POLICIES = ("max_visit_count", "normalized_visit_count", "max_value")
ROLLOUTS = ("heuristic", "random", "prior", "prior_own")
LEAVES = ("rollout", "value")
OTHERS = ("search", "rollout")
CHILD_SELECTION_POLICIES = ("uct", "puct")
REWARD_TRANSFORMS = ("none", "symlog")
DEFAULTS = {
    "simulations": 1000,
    "max_time_ms": 0,
    "uct_c": 1.4,
    "max_world_samples": -1,
    "final_policy": "max_visit_count",
    "rollout": "heuristic",
    "leaf": "rollout",
    "others": "search",
    "child_selection_policy": "puct",
    "prior": "",
    "prior_temperature": 0.0,
    "reward_transform": "none",
    "seed": None,
}
GUIDED_SIMULATIONS = 200  # a guided search's default budget: under 250 ms a move on one core (docs/search.md)
HEURISTIC_PRIOR = 0.5  # PUCT: the prior's weight on the heuristic rule's move (the rest is uniform)
UNLIMITED_NUM_WORLD_SAMPLES = -1
TIE_TOLERANCE = 1e-5
MAX_ROLLOUT_MOVES = 2000  # a safety net: a Craits deal can cycle through reshuffles for long


def search_game(name: str):
    """The search game of a game's id or alias: its ``view`` module (``envs.spec.SearchGame``:
    view builder, determinizer, rollout rule)."""
    try:
        module = game_spec(name).module("view")
    except ValueError as exc:
        raise ValueError(f"{exc} (IS-MCTS)") from None
    # Its functions, not the module: a bot is copied and pickled (workers), a module is not.
    functions = {f: getattr(module, f) for f in SEARCH_FUNCTIONS}
    functions.update({f: getattr(module, f, None) for f in OPTIONAL_FUNCTIONS})
    return types.SimpleNamespace(**functions)


def random_action(state, rng: random.Random) -> int:
    legal = state.legal_actions()
    return legal[rng.randrange(len(legal))] if len(legal) > 1 else legal[0]


def _seed_int(seed):
    """``seed`` as something ``random.Random`` takes: None, an int (numpy's too), or a
    sequence of ints (as the evaluator passes) folded into one int."""
    if seed is None:
        return None
    number = as_action(seed)
    if number is not None:
        return number
    if isinstance(seed, (list, tuple)) and seed and all(as_action(s) is not None for s in seed):
        value = 0x5EED
        for s in seed:
            value = (value * 1_000_003 + as_action(s)) & ((1 << 64) - 1)
        return value
    raise ValueError(f"IS-MCTS option seed={shown(seed)}: use an int, a list of ints or None")


def _number(name: str, value, kind, low, allow=()) -> None:
    ok = type(value) is int if kind is int else (type(value) in (int, float) and math.isfinite(value))
    if not ok or (value < low and value not in allow):
        what = "an integer" if kind is int else "a number"
        extra = f" (or {', '.join(map(str, allow))})" if allow else ""
        raise ValueError(f"IS-MCTS option {name}={shown(value)}: must be {what} >= {low}{extra}")


def check_options(options: dict) -> dict:
    """Options with defaults filled in; ``ValueError`` naming any unknown or bad one."""
    unknown = [k for k in options if k not in DEFAULTS]
    if unknown:
        raise ValueError(
            f"unknown IS-MCTS option {', '.join(map(shown, unknown))}: the options are {', '.join(DEFAULTS)}"
        )
    opts = {**DEFAULTS, **options}
    if options.get("prior") and "simulations" not in options:
        opts["simulations"] = GUIDED_SIMULATIONS
    _number("simulations", opts["simulations"], int, 1)
    _number("max_time_ms", opts["max_time_ms"], float, 0)
    _number("uct_c", opts["uct_c"], float, 0)
    _number("max_world_samples", opts["max_world_samples"], int, 1, allow=(UNLIMITED_NUM_WORLD_SAMPLES,))
    for name, allowed in (
        ("final_policy", FINAL_POLICIES),
        ("rollout", ROLLOUTS),
        ("leaf", LEAVES),
        ("others", OTHERS),
        ("child_selection_policy", CHILD_SELECTION_POLICIES),
        ("reward_transform", REWARD_TRANSFORMS),
    ):
        if opts[name] not in allowed or type(opts[name]) is not str:
            raise ValueError(f"IS-MCTS option {name}={shown(opts[name])}: choose one of {', '.join(allowed)}")
    _number("prior_temperature", opts["prior_temperature"], float, 0)
    if type(opts["prior"]) is not str:
        raise ValueError(f"IS-MCTS option prior={shown(opts['prior'])}: name a trained bot (a checkpoint)")
    if opts["rollout"] in ("prior", "prior_own") and not opts["prior"]:
        raise ValueError(f"IS-MCTS option rollout={opts['rollout']}: give the network too (prior=BOT)")
    if opts["leaf"] == "value" and not opts["prior"]:
        raise ValueError("IS-MCTS option leaf=value: give the network that values the leaves (prior=BOT)")
    if opts["prior"] and opts["child_selection_policy"] != "puct":
        raise ValueError("IS-MCTS option prior: the network's priors need child_selection_policy=puct")
    _seed_int(opts["seed"])
    return opts


def parse_options(text: str) -> dict:
    """``"simulations=1000,uct_c=1.4"`` → ``{"simulations": 1000, "uct_c": 1.4}``: the options
    given, each value converted to its option's type and checked; ``ValueError`` for anything
    else."""
    if not isinstance(text, str):
        raise ValueError(f"IS-MCTS options must be text such as 'simulations=1000,uct_c=1.4', not {shown(text)}")
    options = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, raw = item.partition("=")
        key, raw = key.strip(), raw.strip()
        if not sep or not key or not raw:
            raise ValueError(f"IS-MCTS option {shown(item)}: write name=value, e.g. simulations=1000")
        if key not in DEFAULTS:
            check_options({key: raw})  # the unknown-option message
        if key in options:
            raise ValueError(f"IS-MCTS option {key} given twice")
        value: int | float | str | None
        try:
            if key == "seed" and raw.lower() == "none":
                value = None
            elif key in ("simulations", "max_world_samples", "seed"):
                value = int(raw)
            elif key in ("uct_c", "max_time_ms", "prior_temperature"):
                value = float(raw)
            else:
                value = raw
        except ValueError:
            kind = "an integer" if key in ("simulations", "max_world_samples", "seed") else "a number"
            raise ValueError(f"IS-MCTS option {key}={shown(raw)}: must be {kind}") from None
        options[key] = value
    check_options(options)
    return options


def _argmax(scored, rng: random.Random) -> int:
    """The action of the highest value among ``scored`` (``(action, value)`` pairs), ties
    within ``TIE_TOLERANCE`` broken at random."""
    best, candidates = -math.inf, []
    for a, value in scored:
        if value > best + TIE_TOLERANCE:
            best, candidates = value, [a]
        elif value > best - TIE_TOLERANCE:
            candidates.append(a)
            best = max(best, value)
    return candidates[rng.randrange(len(candidates))] if len(candidates) > 1 else candidates[0]


class _Edge:
    """An action at a node: visits, summed reward of its chooser, times it was legal, and
    the nodes after it by the searcher's private observation."""

    __slots__ = ("visits", "total", "avail", "children")

    def __init__(self) -> None:
        self.visits = 0
        self.total = 0.0
        self.avail = 0
        self.children: dict[Any, _Node] = {}  # by the searcher's private observation


class _Node:
    """An information set of the searching seat (single observer); ``prior``: the network's
    priors at the searcher's own decision here (the same in every world)."""

    __slots__ = ("edges", "prior")

    def __init__(self) -> None:
        self.edges: dict[int, _Edge] = {}
        self.prior: list[float] | None = None


class PriorNetwork(Protocol):
    """What guides a search: a trained network, its scores for every action from a seat's
    env observation (``training.agents.PolicyAgent`` is one)."""

    def logits(self, observation: np.ndarray) -> np.ndarray: ...


VALUE_TEMPERATURE = 0.05  # prior_temperature of a Q-network: its values are rewards (deal points / 100)


class ISMCTSBot(SearchAgent):
    """IS-MCTS for one game (a game's id or alias, e.g. ``"craits_v0"`` or ``"craits"``).

    ``act_on(game, seat)`` builds the seat's view from the engine and searches from it;
    ``policy_on(game, seat)`` gives the final policy as ``{action: probability}``. Options
    are the module docstring's; unknown or bad ones raise ``ValueError``. One instance may
    serve several seats (its Pairs Draft memory is per seat); ``reset()`` between games."""

    name = "ismcts"

    def __init__(self, game: str, network: PriorNetwork | None = None, action_values: bool = False, **options):
        self.search_game = search_game(game)
        opts = check_options(options)
        self.options = opts
        # The network named by ``prior`` (loaded by the caller: ``training.agents.make_agent``
        # reads checkpoints, this module never does); ``action_values``: its scores are
        # Q-values (a softmax at VALUE_TEMPERATURE makes them priors), else policy logits.
        if opts["prior"] and network is None:
            raise ValueError(
                f"IS-MCTS option prior={opts['prior']}: the network must be loaded and passed in "
                "(training.agents.make_agent does it from an agent spec)"
            )
        if network is not None and not opts["prior"]:
            raise ValueError("IS-MCTS: a network was given without the prior option that names it")
        if network is not None and self.search_game.encoder is None:
            raise ValueError(f"IS-MCTS option prior: game {game!r} has no observation encoder in its view module")
        if opts["leaf"] == "value":
            if not action_values:
                raise ValueError(
                    f"IS-MCTS option leaf=value: the network of prior={opts['prior']} gives policy logits, "
                    "not action values; value leaves need a Q-network (a Double DQN checkpoint)"
                )
            if self.search_game.sides is None:
                raise ValueError(f"IS-MCTS option leaf=value: game {game!r} has no sides function in its view module")
        self.value_leaves = opts["leaf"] == "value"
        self.network = network
        self.temperature = float(opts["prior_temperature"]) or (VALUE_TEMPERATURE if action_values else 1.0)
        self._encode: Callable[[Any, int], np.ndarray] | None = None  # per search: the view's encoder
        # max_time_ms alone (no simulations given) searches until the time is up.
        self.simulations = opts["simulations"] if "simulations" in options or not opts["max_time_ms"] else None
        self.max_time_ms = float(opts["max_time_ms"])
        self.uct_c = float(opts["uct_c"])
        self.max_world_samples = opts["max_world_samples"]
        self.final_policy = opts["final_policy"]
        self.rollout = opts["rollout"]
        self.others_by_rule = opts["others"] == "rollout"
        self.child_selection_policy = opts["child_selection_policy"]
        self.symlog = opts["reward_transform"] == "symlog"
        self.seed = opts["seed"]
        self._rng = random.Random(_seed_int(self.seed))
        self._policy = {
            "heuristic": self.search_game.heuristic_action,
            "random": random_action,
            "prior": self._network_action,
            "prior_own": self._own_network_action,
        }[self.rollout]
        self._searcher = -1  # the seat of the search under way
        self._memory: dict[int, Any] = {}  # seat -> the search game's memory (new_memory())
        self.last_root: _Node | None = None  # the root of the last search, for inspection
        # Asked between iterations; when it answers True the search ends with what it has
        # (a frontend whose game was closed meanwhile: the web app).
        self.stop: Callable[[], bool] | None = None

    @classmethod
    def from_spec(cls, spec: str, game: str, **extra) -> ISMCTSBot:
        """``"ismcts"`` or ``"ismcts:simulations=1000,uct_c=1.4"`` (``extra``, e.g. a seed,
        is added to the spec's options)."""
        name, _, text = spec.partition(":") if isinstance(spec, str) else (spec, "", "")
        if name != "ismcts":
            raise ValueError(f"not an IS-MCTS spec: {shown(spec)} (write ismcts:simulations=1000,uct_c=1.4)")
        return cls(game, **{**parse_options(text), **extra})

    def reset(self) -> None:
        """Forget what was remembered of the last game (the Pairs Draft draft memory)."""
        self._memory = {}

    # -------------------------------------------------------------------- interface
    def view(self, game, seat: int):
        """The seat's view of ``game`` (updates this bot's memory of the seat)."""
        if seat not in self._memory:
            self._memory[seat] = self.search_game.new_memory()
        return self.search_game.view(game, seat, self._memory[seat])

    def act_on(self, game, seat: int) -> int:
        return self.act_on_view(self.view(game, seat))

    def policy_on(self, game, seat: int) -> dict[int, float]:
        return self.policy_on_view(self.view(game, seat))

    def act_on_view(self, view) -> int:
        policy = self.policy_on_view(view)
        if len(policy) == 1:
            return next(iter(policy))
        actions = list(policy)
        weights = [policy[a] for a in actions]
        return self._rng.choices(actions, weights)[0]

    def policy_on_view(self, view) -> dict[int, float]:
        if view.current_player != view.seat:
            raise ValueError(f"IS-MCTS: seat {view.seat} is not to act (seat {view.current_player} is)")
        if self.network is not None:
            self._encode = self.search_game.encoder(view)
        self._searcher = view.seat
        first = self.search_game.determinize(view, self._rng, self._policy)
        legal = list(first.legal_actions())
        if not legal:
            raise ValueError("IS-MCTS: the game is over, there is no move to choose")
        if len(legal) == 1:
            return {legal[0]: 1.0}
        root = self._search(view, first)
        self.last_root = root
        return self._final_policy(root, legal)

    # ----------------------------------------------------------------------- search
    def _search(self, view, first) -> _Node:
        game = self.search_game
        rng = self._rng
        policy = self._policy
        root = _Node()
        worlds = [first]
        limit = self.max_world_samples
        deadline = time.perf_counter() + self.max_time_ms / 1000.0 if self.max_time_ms > 0 else None
        for i in range(self.simulations) if self.simulations is not None else itertools.count():
            if i == 0:
                state = first.copy() if limit != UNLIMITED_NUM_WORLD_SAMPLES else first
            elif limit == UNLIMITED_NUM_WORLD_SAMPLES:
                state = game.determinize(view, rng, policy)
            elif len(worlds) < limit:
                worlds.append(game.determinize(view, rng, policy))
                state = worlds[-1].copy()
            else:
                state = worlds[rng.randrange(len(worlds))].copy()
            self._simulate(state, root, view.seat)
            if deadline is not None and time.perf_counter() >= deadline:
                break
            if self.stop is not None and self.stop():
                break
        return root

    def _simulate(self, state, root: _Node, searcher: int) -> None:
        game = self.search_game
        terminal, visible, private = game.is_terminal, game.visible, game.private
        policy, rng, c = self._policy, self._rng, self.uct_c
        puct, prior_rule = self.child_selection_policy == "puct", game.heuristic_action
        guided, others_by_rule = self.network is not None, self.others_by_rule
        log, sqrt = math.log, math.sqrt
        node = root
        path = []
        done = False
        while True:
            legal = state.legal_actions()
            edges = node.edges
            forced = len(legal) == 1
            # others=rollout: another player's move is the rule's, not searched; like a forced
            # move it doesn't end the descent, so each iteration adds one move of the searcher's.
            modelled = forced or (others_by_rule and state.current_player != searcher)
            if modelled:
                action = legal[0] if forced else policy(state, rng)
                edge = edges.get(action)
                if edge is None:
                    edge = edges[action] = _Edge()
                edge.avail += 1
            elif guided:  # PUCT over every legal move at once, the network's priors
                player = state.current_player
                if player == searcher:  # its information set fixes its observation
                    if node.prior is None:
                        node.prior = self._priors(state, legal)
                    priors = node.prior
                else:  # another player's hand differs from world to world
                    priors = self._priors(state, legal)
                for a in legal:
                    e = edges.get(a)
                    if e is None:
                        e = edges[a] = _Edge()
                    e.avail += 1
                scored = (  # an untried move is valued 0 (rewards are zero-sum: an even result)
                    (a, (e.total / e.visits if e.visits else 0.0) + c * p * sqrt(e.avail) / (1 + e.visits))
                    for a, p, e in ((a, p, edges[a]) for a, p in zip(legal, priors))
                )
                action = _argmax(scored, rng)
                edge = edges[action]
            else:
                untried = [a for a in legal if a not in edges]
                if untried:
                    action = untried[rng.randrange(len(untried))] if len(untried) > 1 else untried[0]
                    edge = edges[action] = _Edge()
                else:
                    if puct:  # the rule's move is the prior's favourite (in this world)
                        favourite = prior_rule(state, rng)
                        other = (1.0 - HEURISTIC_PRIOR) / len(legal)
                        scored = (
                            (
                                a,
                                e.total / e.visits
                                + c * (other + HEURISTIC_PRIOR * (a == favourite)) * sqrt(e.avail) / (1 + e.visits),
                            )
                            for a, e in ((a, edges[a]) for a in legal)
                        )
                    else:
                        scored = (
                            (a, e.total / e.visits + c * sqrt(log(e.avail) / e.visits))
                            for a, e in ((a, edges[a]) for a in legal)
                        )
                    action = _argmax(scored, rng)
                    edge = edges[action]
                for a in legal:
                    seen = edges.get(a)
                    if seen is not None:
                        seen.avail += 1
            path.append((edge, state.current_player))
            state.apply(action)
            while not terminal(state) and not visible(state, searcher):
                state.apply(policy(state, rng))
            if terminal(state):
                done = True
                break
            token = private(state, searcher)
            child = edge.children.get(token)
            if child is None:
                child = edge.children[token] = _Node()
                if not modelled:
                    break
            node = child
        moves = 0
        if not done and self.value_leaves:  # on to the searcher's next decision, which the network values
            while not terminal(state) and state.current_player != searcher and moves < MAX_ROLLOUT_MOVES:
                state.apply(policy(state, rng))
                moves += 1
        if self.value_leaves and not terminal(state) and state.current_player == searcher:
            rewards = self._leaf_value(state, searcher)
        else:  # a rollout to the end (nothing left to play if the tree reached it)
            while not terminal(state) and moves < MAX_ROLLOUT_MOVES:
                state.apply(policy(state, rng))
                moves += 1
            rewards = game.returns(state)
        if self.symlog:  # heavy tails (create's doubling penalties) squashed, sign and order kept
            rewards = [math.copysign(math.log1p(abs(r)), r) for r in rewards]
        for edge, player in path:
            edge.visits += 1
            edge.total += rewards[player]

    def _priors(self, state, legal: list[int]) -> list[float]:
        """The network's priors over ``legal`` for the player to act in ``state``: a softmax of
        its scores at ``self.temperature``, from that player's observation of this world."""
        assert self._encode is not None and self.network is not None  # a guided search
        scores = self.network.logits(self._encode(state, state.current_player))[legal] / self.temperature
        weights = np.exp(scores - scores.max())
        return (weights / weights.sum()).tolist()

    def _leaf_value(self, state, searcher: int) -> list[float]:
        """``leaf=value``: every player's reward, from the network's value of the searcher's
        best legal move (Q-values are the env's rewards to go). Rewards are zero-sum between
        sides, so the searcher's side gets that value and each other side an equal share of
        its opposite (what the others expect among themselves is not known to the network)."""
        assert self._encode is not None and self.network is not None  # leaf=value needs prior=
        value = float(self.network.logits(self._encode(state, searcher))[state.legal_actions()].max())
        sides = self.search_game.sides(state)
        others = -value / (len(sides) - 1)
        rewards = [0.0] * sum(len(side) for side in sides)
        for side in sides:
            for seat in side:
                rewards[seat] = value if searcher in side else others
        return rewards

    def _network_action(self, state, rng=None) -> int:
        """``rollout=prior``: the network's favourite legal move for the player to act."""
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        assert self._encode is not None and self.network is not None  # rollout=prior needs prior=
        return legal[int(np.argmax(self.network.logits(self._encode(state, state.current_player))[legal]))]

    def _own_network_action(self, state, rng=None) -> int:
        """``rollout=prior_own``: the network's move for the searcher's own seat, the
        heuristic rule's for the others (the opponents the search assumes everywhere)."""
        if state.current_player == self._searcher:
            return self._network_action(state, rng)
        return self.search_game.heuristic_action(state, rng)

    def _final_policy(self, root: _Node, legal) -> dict[int, float]:
        edges = {a: root.edges[a] for a in legal if a in root.edges and root.edges[a].visits > 0}
        if not edges:  # cannot happen after one iteration; be safe
            return {a: 1.0 / len(legal) for a in legal}
        policy = {a: 0.0 for a in legal}
        kind = self.final_policy
        if kind == "normalized_visit_count":
            total = sum(e.visits for e in edges.values())
            for a, e in edges.items():
                policy[a] = e.visits / total
            return policy
        if kind == "max_visit_count":
            score = {a: float(e.visits) for a, e in edges.items()}
        else:
            score = {a: e.total / e.visits for a, e in edges.items()}
        best = max(score.values())
        winners = [a for a, s in score.items() if s > best - TIE_TOLERANCE]
        for a in winners:
            policy[a] = 1.0 / len(winners)
        return policy

    def root_stats(self) -> dict[int, tuple[int, float]]:
        """``{action: (visits, mean reward)}`` of the last search's root (for inspection)."""
        if self.last_root is None:
            return {}
        return {a: (e.visits, e.total / e.visits if e.visits else 0.0) for a, e in self.last_root.edges.items()}
