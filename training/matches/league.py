"""Leagues: every pair of agents in duplicate matches, OpenSkill and Elo ratings, kept in a folder.

    python -m training.league --out leagues/craits --agents random,heuristic,checkpoints/craits --games 50
    python -m training.league --out leagues/craits --agents runs/craits_quick/checkpoint   # adds one: plays only its matches
    python -m training.league --out leagues/craits                                          # resumes an interrupted league
    python -m training.league --config league.yaml                                          # the same options from a file
    python -m training.league --out leagues/craits --agents heuristic --ray                 # as tasks on a local Ray
    python -m training.league --out leagues/craits --ray-address HEAD:6379                  # on a Ray cluster

Agents are spec strings (``random``, ``heuristic``, a checkpoint folder, anything
``make_agent`` accepts), kept as given: ``checkpoints/craits`` and ``checkpoints/craits/``
are two agents. ``--agents`` is comma-separated; a config file (YAML or JSON, keys ``out``,
``env``, ``args``, ``agents``, ``games``, ``seed``, ``reference``) takes a list, for specs
holding commas. Command-line options win over the file's.

**The league folder** (``--out``) keeps everything:

- ``league.json``   format version, env id and arguments, effective rules, seed, duplicate
  sets per pairing, agents, reference agent. A folder made for another game, other rules or
  other env arguments is refused with a message saying what differs; leave out ``--env`` and
  ``--arg`` to continue a league with its own. A league keeps its ``--seed``; ``--games`` may
  change (more sets play only the new ones; fewer rate only the first ones).
- ``matches.jsonl`` the raw log, one line per game (fields below).
- ``ratings.md``, ``ratings.csv`` the ranking table; ``win_share.csv`` and ``win_share.png``
  the pairwise win-share matrix (a heatmap with the numbers in its cells).
- ``.lock``         held (``flock``) while a league plays, so a second one on the folder stops.

Agents given to a league are added to the ones it has (never removed; the reference agent,
``random`` unless ``--reference`` says otherwise, is always one), then every match not yet in
the log is played: adding an agent plays only the pairs it is in, a rerun plays nothing, and
an interrupted league plays only what is missing.

**Schedule.** Every pair of agents {A, B} (A the one that sorts first) plays ``--games``
duplicate sets. At n seats the agents alternate around the table, A in the even seats (A B A B
at 4 seats: in partnership Craits A's partnership against B's); at an odd number of seats the
mirrored table (B A B ...) is played as well, so neither holds the extra seat more often. A
duplicate set is one deal seed (``--seed`` + set index: every pair plays the same deals in a
set) played once per *distinct* rotation of the table (every agent moved one seat on each
time; A B A B needs two, A B and B A, to have each agent play every seat's cards; A B A at 3
seats needs three). A *match* is one pairing's table in one set: its id is a hash of the
seat layout and the deal seed, its games are ``<match>/<rotation>``. Agents' own randomness
is seeded from (deal seed, rotation, seat, match), so results do not depend on
``--processes``, on Ray, or on what else the league holds.

**Where matches run** (``training.running.executor``, docs/scaling.md): ``--processes`` local processes
by default; ``--ray`` plays them as Ray tasks on a local Ray, ``--ray-address ADDRESS`` (or the
``RAY_ADDRESS`` variable) on a running Ray cluster (Ray is the ``scale`` extra). Either way only
this process writes the folder, each match as it finishes: an interrupted Ray league resumes
like a local one, and a match whose worker died (retried by Ray) is counted once.

**Log.** One JSON line per game: ``match``, ``game``, ``set``, ``rotation``, ``match_games``
(games in its match), ``agents`` (the pair), ``seats`` (the agent in each seat), ``seed``
(the deal seed), ``env``, ``env_args``, ``rules`` (effective rule options), ``sides`` (seats
scored together: partnerships, otherwise each seat alone), ``scores`` (final, per seat) and
``winners`` (winning seats; null for a game cut by the env's safety net, counted as a draw).
A finished match's lines are appended in one write, then flushed to disk (fsync). On opening,
a cut-off last line (a kill mid-write) and the lines of unfinished matches are dropped, those
matches played again, and a game id seen twice is counted once. Any other line that is not one
of this league's games (not JSON, a field missing or of the wrong type, another game, rules or
deal seed, an agent not in the league, a wrong number of seats or scores, a seat number out of
range, ids that are not its table's) stops the league with its line number and what is wrong,
before anything is rated or rewritten. The folder is locked before league.json is read, so a
league started beside a running one stops without touching the folder.

**Ratings.** Games are rated in a fixed order (set, match id, rotation), whatever order they
were played in, so a league's ratings are reproducible.

- OpenSkill Plackett–Luce (``tau=0``: agents do not change during a league): each game ranks
  its sides (the side the game declares winner first, the others by their total score, lower
  first in Craits, higher first in Pairs Draft; equal totals tie; a truncated game is a draw).
  A side is a team of the ratings of the agents in its seats: in partnership Craits a team of
  two copies of one agent's rating. An agent holding several sides in one game (A B A B without
  partnerships) gets the mean of the updates its seats received. Ratings are then shifted so
  the reference agent's mu is 25 (Plackett–Luce depends only on differences); the ordinal
  mu − 3σ is the conservative estimate the table is sorted by.
- Elo: a batch Bradley–Terry fit (Hunter's MM algorithm, as OpenSpiel's ``evaluation/elo``,
  with its 0.1 pseudo-win per ordered pair of agents) of the head-to-head results: in every
  game each pair of agents shares one point in proportion to their win shares (winning seats
  held / winners; a truncated game, or one neither won, is half each). Strengths are turned
  into Elo with 400/ln 10 and shifted so the reference is at 0. The 95% interval is the
  percentile interval of ``--bootstrap`` refits on duplicate sets drawn with replacement
  (each keeps all of its pairings).
- Win share: an agent's part of the head-to-head points over all its games, and in the matrix
  row agent against column agent.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from envs.engine import clipped, shown
from training.agents import make_agent, split_agents
from training.common import files
from training.common.commands import command_parser
from training.common.files import hold_folder, write_file
from training.common.games import GAMES, EnvHandle, default_game, parse_env_args
from training.common.schema import read_yaml
from training.matches.evaluate import play_game, rotated
from training.running.executor import LocalExecutor, add_executor_arguments, executor_from_args

FORMAT_VERSION = 1
LEAGUE_FILE, LOG_FILE = "league.json", "matches.jsonl"
DEFAULT_GAMES, DEFAULT_REFERENCE = 50, "random"
REFERENCE_MU, REFERENCE_ELO = 25.0, 0.0
ELO_SCALE = 400.0 / math.log(10.0)
SMOOTHING = 0.1  # pseudo-wins per ordered pair, as OpenSpiel's evaluation/elo
BOOTSTRAP = 200
CONFIG_KEYS = ("out", "env", "args", "agents", "games", "seed", "reference")


class LeagueError(ValueError):
    """A league that can't be opened or run as asked: the message says why."""


# ---------------------------------------------------------------- schedule
@dataclass(frozen=True)
class Match:
    """One pairing's table in one duplicate set: ``rotations`` are the distinct rotations played."""

    id: str
    agents: tuple
    layout: tuple
    set: int
    seed: int
    rotations: tuple


def match_id(layout, deal_seed: int) -> str:
    text = json.dumps({"layout": list(layout), "seed": deal_seed}, separators=(",", ":"))
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def pair_layouts(a: str, b: str, seats: int) -> list[tuple]:
    """The tables a pair plays: alternating around the table, A in the even seats; at an odd
    number of seats also the mirror image, so each holds the extra seat as often."""
    layouts = [tuple(a if s % 2 == 0 else b for s in range(seats))]
    if seats % 2:
        layouts.append(tuple(b if s % 2 == 0 else a for s in range(seats)))
    return layouts


def distinct_rotations(layout) -> tuple:
    """The rotations (in ``evaluate.rotated``'s sense) that give different tables."""
    seen, out = set(), []
    for rotation in range(len(layout)):
        table = tuple(rotated(list(layout), rotation))
        if table not in seen:
            seen.add(table)
            out.append(rotation)
    return tuple(out)


def schedule(agents, seats: int, games: int, seed: int) -> list[Match]:
    """Every match of the league, set by set (all pairings of set 0 first)."""
    pairs = list(itertools.combinations(sorted(set(agents)), 2))
    matches = []
    for index in range(games):
        for a, b in pairs:
            for layout in pair_layouts(a, b, seats):
                matches.append(
                    Match(
                        match_id(layout, seed + index), (a, b), layout, index, seed + index, distinct_rotations(layout)
                    )
                )
    return matches


# ---------------------------------------------------------------- playing
def play_match(env, match: Match) -> list[dict]:
    """The match's games in ``env`` (an ``EnvHandle``), as log lines."""
    salt = int(match.id[:8], 16)
    lines = []
    for rotation in match.rotations:
        seats = rotated(list(match.layout), rotation)
        agents = [make_agent(spec, env, seed=[match.seed, rotation, seat, salt]) for seat, spec in enumerate(seats)]
        scores, winners = play_game(env.raw, agents, match.seed)
        sides = env.raw.game.sides()
        lines.append(
            {
                "match": match.id,
                "game": f"{match.id}/{rotation}",
                "set": match.set,
                "rotation": rotation,
                "match_games": len(match.rotations),
                "agents": list(match.agents),
                "seats": seats,
                "seed": match.seed,
                "env": env.id,
                "env_args": env.args,
                "rules": env.rule_args,
                "sides": [list(side) for side in sides],
                "scores": list(scores),
                "winners": None if winners is None else list(winners),
            }
        )
    return lines


_WORKER_ENV = None


def _init_worker(env_id, env_args):
    global _WORKER_ENV
    _WORKER_ENV = EnvHandle(env_id, env_args)


def _play_task(match):
    return play_match(_WORKER_ENV, match)


def play_matches(env, matches: list[Match], executor):
    """``(match, its log lines)`` for every match, played by ``executor`` (``training.running.executor``):
    in the order of ``matches`` locally, as they finish on Ray. Results do not depend on which."""
    workers = min(executor.workers, len(matches))
    chunksize = max(1, min(8, len(matches) // (workers * 8))) if workers else 1
    agents = {spec for match in matches for spec in match.agents}
    for index, lines in executor.imap(
        _play_task, matches, init=(_init_worker, (env.id, env.args)), chunksize=chunksize, agents=agents
    ):
        yield matches[index], lines


# ---------------------------------------------------------------- the folder


def _canonical(value):
    return json.loads(json.dumps(value))


def _given(args: dict, key: str, show) -> str:
    """An argument's value as a message shows it, or that it was not given."""
    return show(args[key]) if key in args else "not given"


def check_folder(out: Path) -> None:
    """Refuse a folder that holds other things than a league: before the lock, so that no lock
    file is put in someone else's folder, and again under it, in ``read_league``."""
    if (
        out.exists()
        and not (out / LEAGUE_FILE).exists()
        and (not out.is_dir() or any(p.name != files.LOCK_FILE for p in out.iterdir()))
    ):
        raise LeagueError(f"{out} is not a league folder (no {LEAGUE_FILE}) and not empty: give a new or empty folder")


def read_league(out: Path) -> dict | None:
    """The folder's league.json (None for a new or empty folder); a folder that holds other
    things is refused. Read under the folder's lock: a league that finished meanwhile is seen."""
    check_folder(out)
    file = out / LEAGUE_FILE
    if not file.exists():
        return None
    try:
        league = json.loads(file.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LeagueError(f"{file} is not readable JSON ({exc})") from None
    if not isinstance(league, dict) or league.get("format") != FORMAT_VERSION:
        raise LeagueError(f"{file}: not a league file of format {FORMAT_VERSION}")
    for key, kind in (
        ("env_id", str),
        ("env_args", dict),
        ("rule_args", dict),
        ("seed", int),
        ("games", int),
        ("agents", list),
        ("reference", str),
    ):
        if not isinstance(league.get(key), kind):
            raise LeagueError(f"{file}: {key!r} is missing or not a {kind.__name__}")
    return league


def league_differences(league: dict, env) -> list[str]:
    """What differs between the league's game and ``env`` (an ``EnvHandle``)."""
    if league["env_id"] != env.id:
        return [f"it plays {league['env_id']}, not {env.id}"]
    problems = []
    there, here = league["rule_args"], _canonical(env.rule_args)
    for key in sorted(set(there) | set(here)):
        if there.get(key) != here.get(key):
            problems.append(f"rule {key}={there.get(key)!r} there but {here.get(key)!r} here")
    there, here = league["env_args"], _canonical(env.args)
    for key in sorted(set(there) | set(here)):
        if there.get(key) != here.get(key):
            problems.append(f"argument {key}: {_given(there, key, repr)} there but {_given(here, key, repr)} here")
    return problems


def _text(value) -> bool:
    return isinstance(value, str)


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _mapping(value) -> bool:
    return isinstance(value, dict)


def _list_of(test):
    return lambda value: isinstance(value, list) and all(test(item) for item in value)


# Every field of a log line (as ``play_match`` writes them): the test of its value, and it in words.
LOG_FIELDS = {
    "match": (_text, "a string"),
    "game": (_text, "a string"),
    "set": (_whole, "a whole number"),
    "rotation": (_whole, "a whole number"),
    "match_games": (_whole, "a whole number"),
    "agents": (_list_of(_text), "a list of agent specs"),
    "seats": (_list_of(_text), "a list of agent specs"),
    "seed": (_whole, "a whole number"),
    "env": (_text, "a string"),
    "env_args": (_mapping, "a mapping"),
    "rules": (_mapping, "a mapping"),
    "sides": (_list_of(_list_of(_whole)), "a list of lists of seat numbers"),
    "scores": (_list_of(_finite), "a list of numbers"),
    "winners": (lambda value: value is None or _list_of(_whole)(value), "null or a list of seat numbers"),
}


def line_problem(line, league: dict) -> str | None:
    """What keeps a log line from being a game ``league`` (its league.json) plays, None if
    nothing: a line of another league or game, or one edited by hand, must not be rated."""
    if not isinstance(line, dict):
        return "not a game record"
    missing = [field for field in LOG_FIELDS if field not in line]
    if missing:
        return f"field(s) {', '.join(missing)} missing"
    for field, (test, kind) in LOG_FIELDS.items():
        if not test(line[field]):
            return f"{field} is {shown(line[field])}, not {kind}"
    if line["env"] != league["env_id"]:
        return f"a game of {shown(line['env'])}, the league plays {league['env_id']}"
    for field, own in (("env_args", league["env_args"]), ("rules", league["rule_args"])):
        there = line[field]
        for key in sorted(set(there) | set(own)):
            if (key in there, there.get(key)) != (key in own, own.get(key)):
                return f"{field} {key}: {_given(there, key, shown)}, the league's {_given(own, key, shown)}"
    unknown = [spec for spec in line["agents"] + line["seats"] if spec not in league["agents"]]
    if unknown:
        return f"agent {shown(unknown[0])} is not in the league"
    seats = league["seats"]
    if len(line["seats"]) != seats:
        return f"{len(line['seats'])} seats, the league plays {seats}"
    if len(line["scores"]) != seats:
        return f"{len(line['scores'])} scores for {seats} seats"
    side_seats = [seat for side in line["sides"] for seat in side]
    for field, numbers in (("sides", side_seats), ("winners", line["winners"] or [])):
        outside = [seat for seat in numbers if not 0 <= seat < seats]
        if outside:
            return f"seat {outside[0]} in {field} is out of range (seats 0-{seats - 1})"
    if sorted(side_seats) != list(range(seats)):
        return f"sides {shown(line['sides'])} do not hold every seat once"
    if line["seed"] != league["seed"] + line["set"]:
        return f"deal seed {line['seed']} is not set {line['set']}'s ({league['seed'] + line['set']})"
    # the table (seats before rotation) must be one the schedule gives the pair, and the ids its own
    layout = tuple(rotated(line["seats"], -line["rotation"]))
    pair = line["agents"]
    if (
        len(pair) != 2
        or pair[0] >= pair[1]
        or layout not in pair_layouts(pair[0], pair[1], seats)
        or line["rotation"] not in distinct_rotations(layout)
    ):
        return (
            f"seats {shown(line['seats'])} at rotation {line['rotation']} are not a table the league plays "
            f"for {shown(pair)}"
        )
    if line["match"] != match_id(layout, line["seed"]) or line["game"] != f"{line['match']}/{line['rotation']}":
        return f"match {shown(line['match'])} / game {shown(line['game'])}: not the ids of its table and deal seed"
    if line["match_games"] != len(distinct_rotations(layout)):
        return f"match_games {line['match_games']}, its table has {len(distinct_rotations(layout))}"
    return None


def read_log(path: Path, league: dict) -> tuple[dict, list[str]]:
    """The finished matches in the log (match id -> its game lines by rotation) and notes on
    what was dropped. The file is rewritten (atomically) without a cut-off last line, lines of
    unfinished matches and repeated games, so appends always follow whole lines. A line that is
    not one of ``league``'s games (``line_problem``) is refused, before anything is rewritten."""
    if not path.exists():
        return {}, []
    data = path.read_bytes()
    pieces = data.split(b"\n")
    tail = pieces.pop()  # after the last newline: empty unless the last write was cut
    notes = ["a cut-off last line"] if tail else []
    games: set[Any] = set()
    matches: dict[Any, dict[str, Any]] = {}  # match key -> its size and {rotation: (line, raw)}
    kept: list[bytes] = []
    repeated = 0
    for number, raw in enumerate(pieces, 1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except ValueError:  # not JSON: a cut-off write, if it is the file's last line
            if number == len(pieces) and not tail:
                notes.append("a damaged last line")
                continue
            line = None
        problem = line_problem(line, league)
        if problem:
            raise LeagueError(
                f"{path}, line {number}: {problem}; the log is damaged (remove that line to replay its match)"
            )
        key, game, rotation = line["match"], line["game"], line["rotation"]
        if game in games:
            repeated += 1
            continue
        games.add(game)
        matches.setdefault(key, {"size": line["match_games"], "lines": {}})["lines"][rotation] = (line, raw)
    finished = {}
    for key, match in matches.items():
        if len(match["lines"]) == match["size"]:
            finished[key] = {rotation: line for rotation, (line, _) in match["lines"].items()}
            kept.extend(raw for _, raw in match["lines"].values())
    unfinished = sum(len(m["lines"]) for k, m in matches.items() if k not in finished)
    if unfinished:
        notes.append(f"{unfinished} game(s) of unfinished matches")
    if repeated:
        notes.append(f"{repeated} repeated game(s)")
    if notes:
        write_file(path, b"".join(raw + b"\n" for raw in kept))
    return finished, notes


def append_lines(path: Path, lines: list[dict]) -> None:
    """A match's lines in one write, then flushed to disk: a kill leaves whole matches and at
    most a cut-off last line, which ``read_log`` drops."""
    data = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines).encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


# ---------------------------------------------------------------- ratings
def side_ranks(sides, scores, winners, lower_score_wins: bool) -> list[float]:
    """Plackett–Luce ranks (0 best, ties equal) of a game's sides: winners first, then by total."""
    if winners is None:
        return [0] * len(sides)
    keys = []
    for side in sides:
        total = sum(scores[s] for s in side)
        keys.append((0, 0) if any(s in winners for s in side) else (1, total if lower_score_wins else -total))
    order = sorted(set(keys))
    return [order.index(key) for key in keys]


def head_to_head(seats, winners) -> dict:
    """``{(a, b): a's point against b}`` for every ordered pair of agents in a game."""
    agents = list(dict.fromkeys(seats))
    share = {a: (sum(seats[s] == a for s in winners) / len(winners) if winners else 0.0) for a in agents}
    out = {}
    for a, b in itertools.permutations(agents, 2):
        total = share[a] + share[b]
        out[(a, b)] = 0.5 if winners is None or total == 0 else share[a] / total
    return out


def openskill_ratings(games, agents, lower_score_wins: bool, reference: str) -> dict:
    """``{agent: (mu, sigma)}`` after rating ``games`` in order, the reference's mu at 25."""
    from openskill.models import PlackettLuce

    model = PlackettLuce(tau=0.0)
    ratings = {a: (model.mu, model.sigma) for a in agents}
    for game in games:
        seats, sides = game["seats"], game["sides"]
        teams = [[model.rating(*ratings[seats[s]]) for s in side] for side in sides]
        ranks = side_ranks(sides, game["scores"], game["winners"], lower_score_wins)
        new = model.rate(teams, ranks=ranks)
        updates: dict[str, list[tuple[float, float]]] = {}
        for side, team in zip(sides, new):
            for seat, rating in zip(side, team):
                updates.setdefault(seats[seat], []).append((rating.mu, rating.sigma))
        for agent, values in updates.items():
            ratings[agent] = (float(np.mean([mu for mu, _ in values])), float(np.mean([s for _, s in values])))
    shift = REFERENCE_MU - ratings[reference][0] if reference in ratings else 0.0
    return {a: (mu + shift, sigma) for a, (mu, sigma) in ratings.items()}


def bradley_terry(wins, smoothing: float = SMOOTHING, max_iterations: int = 100_000, tolerance: float = 1e-12):
    """Log-strengths (natural log, mean 0) of a Bradley–Terry fit by Hunter's MM algorithm.

    ``wins[..., i, j]`` is i's points against j (draws counted half); leading axes are a batch
    (bootstrap resamples). ``smoothing`` pseudo-points are added to every ordered pair."""
    wins = np.asarray(wins, dtype=float)
    n = wins.shape[-1]
    if n < 2:
        return np.zeros(wins.shape[:-1])
    off = ~np.eye(n, dtype=bool)
    w = np.where(off, wins + smoothing, 0.0)
    games = w + np.swapaxes(w, -1, -2)
    total = w.sum(-1)
    gamma = np.ones(wins.shape[:-1])
    for _ in range(max_iterations):
        denominator = (games / (gamma[..., :, None] + gamma[..., None, :])).sum(-1)
        new = total / np.where(denominator > 0, denominator, 1.0)
        new = np.maximum(new / new.sum(-1, keepdims=True), 1e-300)
        done = np.max(np.abs(new - gamma)) < tolerance
        gamma = new
        if done:
            break
    log = np.log(gamma)
    return log - log.mean(-1, keepdims=True)


def elo_from_wins(wins, ref_index: int | None, smoothing: float = SMOOTHING) -> np.ndarray:
    """Elo (400/ln 10 per unit of log-strength) with the reference at ``REFERENCE_ELO``."""
    elo = ELO_SCALE * bradley_terry(wins, smoothing)
    anchor = elo[..., ref_index : ref_index + 1] if ref_index is not None else elo.mean(-1, keepdims=True)
    return elo - anchor + REFERENCE_ELO


def rate(games, agents, lower_score_wins: bool, reference: str, bootstrap: int = BOOTSTRAP, seed: int = 0) -> dict:
    """The league's ratings from its game lines (any order: they are sorted here)."""
    games = sorted(games, key=lambda g: (g["set"], g["match"], g["rotation"]))
    agents = list(agents)
    index = {a: i for i, a in enumerate(agents)}
    sets = sorted({g["set"] for g in games})
    set_index = {s: i for i, s in enumerate(sets)}
    n = len(agents)
    per_set = np.zeros((len(sets), n, n))
    counts = np.zeros((n, n))
    for game in games:
        for (a, b), point in head_to_head(game["seats"], game["winners"]).items():
            per_set[set_index[game["set"]], index[a], index[b]] += point
            counts[index[a], index[b]] += 1
    wins = per_set.sum(0)
    ref = index.get(reference)
    elo = elo_from_wins(wins, ref)
    elo_ci: list[list[float] | None] = [None] * n
    if bootstrap > 0 and len(sets) >= 2:
        rng = np.random.default_rng([seed, 2024])
        draws = rng.integers(len(sets), size=(bootstrap, len(sets)))
        samples = elo_from_wins(per_set[draws].sum(1), ref)
        low, high = np.percentile(samples, [2.5, 97.5], axis=0)
        elo_ci = [[float(lo), float(hi)] for lo, hi in zip(low, high)]
    skill = openskill_ratings(games, agents, lower_score_wins, reference)
    with np.errstate(invalid="ignore", divide="ignore"):
        matrix = np.where(counts > 0, wins / counts, np.nan)
    rows = []
    for agent in agents:
        i = index[agent]
        mu, sigma = skill[agent]
        played = sum(agent in game["seats"] for game in games)
        rows.append(
            {
                "agent": agent,
                "mu": mu,
                "sigma": sigma,
                "ordinal": mu - 3 * sigma,
                "elo": float(elo[i]),
                "elo_ci95": elo_ci[i],
                "win_share": float(wins[i].sum() / counts[i].sum()) if counts[i].sum() else None,
                "games": played,
            }
        )
    rows.sort(key=lambda r: (-r["ordinal"], r["agent"]))
    order = [index[r["agent"]] for r in rows]
    return {"rows": rows, "matrix": matrix[np.ix_(order, order)], "games": len(games), "sets": len(sets)}


# ---------------------------------------------------------------- outputs
def _number(value, digits: int) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def format_markdown(result: dict, league: dict, bootstrap: int) -> str:
    args = ", ".join(f"{k}={json.dumps(v)}" for k, v in league["env_args"].items()) or "default arguments"
    rules = ", ".join(f"{k}={json.dumps(v)}" for k, v in league["rule_args"].items()) or "none"
    seed, sets = league["seed"], league["games"]
    lower = league.get("lower_score_wins")
    lines = [
        f"# League: {league['env_id']} ({args})",
        "",
        f"- rules: {rules}",
        f"- {len(result['rows'])} agents, every pair in {sets} duplicate sets (deal seeds {seed}-{seed + sets - 1}); "
        f"{result['games']} games rated",
        f"- reference: {league['reference']} (OpenSkill mu pinned at {REFERENCE_MU:g}, Elo at {REFERENCE_ELO:g})",
        "",
        "| rank | agent | mu | sigma | mu - 3 sigma | Elo | Elo 95% CI | win share | games |",
        "|---:|---|---:|---:|---:|---:|---|---:|---:|",
    ]
    for rank, row in enumerate(result["rows"], 1):
        ci = row["elo_ci95"]
        interval = (
            "pinned" if row["agent"] == league["reference"] else "n/a" if ci is None else f"[{ci[0]:.0f}, {ci[1]:.0f}]"
        )
        agent = row["agent"].replace("|", "\\|")
        lines.append(
            f"| {rank} | {agent} | {row['mu']:.2f} | {row['sigma']:.2f} | {row['ordinal']:.2f} | "
            f"{row['elo']:.0f} | {interval} | {_number(row['win_share'], 3)} | {row['games']} |"
        )
    direction = "" if lower is None else f" ({'lower' if lower else 'higher'} final score is better)"
    lines += [
        "",
        f"mu, sigma: OpenSkill Plackett–Luce over every game in a fixed order; each game ranks its sides"
        f"{direction}, a partnership being a team; sorted by mu - 3 sigma. Elo: Bradley–Terry fit of the "
        f"head-to-head results (win shares), 400/ln 10 scale; 95% CI from {bootstrap} bootstrap resamples of "
        "the duplicate sets. Win share: the agent's part of its head-to-head points (0.5 = even). "
        "The pairwise matrix is in win_share.csv / win_share.png; every game in matches.jsonl.",
    ]
    return "\n".join(lines) + "\n"


def format_csv(result: dict) -> str:
    out = ["rank,agent,mu,sigma,ordinal,elo,elo_ci95_low,elo_ci95_high,win_share,games"]
    for rank, row in enumerate(result["rows"], 1):
        ci = row["elo_ci95"] or [None, None]
        out.append(
            ",".join(
                [
                    str(rank),
                    _csv_field(row["agent"]),
                    f"{row['mu']:.6f}",
                    f"{row['sigma']:.6f}",
                    f"{row['ordinal']:.6f}",
                    f"{row['elo']:.3f}",
                    _number(ci[0], 3),
                    _number(ci[1], 3),
                    _number(row["win_share"], 6),
                    str(row["games"]),
                ]
            )
        )
    return "\n".join(out) + "\n"


def _csv_field(text: str) -> str:
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\n') else text


def format_matrix_csv(result: dict) -> str:
    names = [row["agent"] for row in result["rows"]]
    out = [",".join(["agent"] + [_csv_field(n) for n in names])]
    for name, values in zip(names, result["matrix"]):
        out.append(",".join([_csv_field(name)] + [_number(float(v), 6) for v in values]))
    return "\n".join(out) + "\n"


def heatmap_png(result: dict, title: str) -> bytes:
    """The win-share matrix as a PNG heatmap (row agent against column agent), numbers in the cells."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    names = [clipped(row["agent"], 28) for row in result["rows"]]
    matrix = result["matrix"]
    n = len(names)
    fig = Figure(figsize=(max(4.5, 1.8 + 0.9 * n), max(3.8, 1.6 + 0.75 * n)))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_facecolor("#e0e0e0")  # the diagonal and pairs that never met
    image = ax.imshow(np.ma.masked_invalid(matrix), cmap="RdBu", vmin=0.0, vmax=1.0)
    for i in range(n):
        for j in range(n):
            if not math.isnan(matrix[i, j]):
                ax.text(
                    j,
                    i,
                    f"{matrix[i, j]:.2f}",
                    ha="center",
                    va="center",
                    fontsize=9,
                    color="white" if abs(matrix[i, j] - 0.5) > 0.3 else "black",
                )
    ax.set_xticks(range(n), names, rotation=40, ha="right", fontsize=8)
    ax.set_yticks(range(n), names, fontsize=8)
    ax.set_xlabel("opponent")
    ax.set_ylabel("agent")
    ax.set_title(title, fontsize=10)
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label="win share")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, metadata={"Software": None})
    return buffer.getvalue()


def write_outputs(out: Path, result: dict, league: dict, bootstrap: int) -> str:
    markdown = format_markdown(result, league, bootstrap)
    write_file(out / "ratings.md", markdown.encode())
    write_file(out / "ratings.csv", format_csv(result).encode())
    write_file(out / "win_share.csv", format_matrix_csv(result).encode())
    write_file(out / "win_share.png", heatmap_png(result, f"{league['env_id']}: win share, row vs column"))
    return markdown


# ---------------------------------------------------------------- the league
def _agent_list(value, source: str) -> list[str]:
    if isinstance(value, str):
        value = split_agents(value)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise LeagueError(f"{source}: agents must be a list of spec strings or a comma-separated string")
    agents = [v.strip() for v in value]
    if not all(agents):
        raise LeagueError(f"{source}: an agent spec is empty")
    return agents


def open_league(out: Path, agents, env_id, env_args, games, seed, reference) -> tuple[EnvHandle, dict, dict | None]:
    """The league's game, its settings (league.json as it is to be: ``agents`` added) and the
    league.json there is (None for a new league). Called with the folder held."""
    league = read_league(out)
    if league is not None and env_id is None and env_args is None:
        env = EnvHandle(league["env_id"], league["env_args"])
    else:
        env = EnvHandle(env_id or (league["env_id"] if league else default_game().id), env_args or {})
    if league is not None:
        problems = league_differences(league, env)
        if problems:
            made = ", ".join(f"{k}={json.dumps(v)}" for k, v in league["env_args"].items()) or "default arguments"
            raise LeagueError(
                f"league folder {out} was made for {league['env_id']} ({made}), not this game: "
                + "; ".join(problems)
                + ". Use another --out folder, or leave out --env and --arg "
                "to continue this league with its own"
            )
        if seed is not None and seed != league["seed"]:
            raise LeagueError(
                f"league folder {out} plays deal seeds from {league['seed']}, not {seed}: a league "
                "keeps its seed (leave out --seed, or use another --out folder)"
            )
    reference = reference or (league["reference"] if league else DEFAULT_REFERENCE)
    names = list(dict.fromkeys((league["agents"] if league else []) + [reference] + list(agents or [])))
    for spec in names:  # fail here with make_agent's message, not in a worker
        make_agent(spec, env, seed=0)
    settings = {
        "format": FORMAT_VERSION,
        "env_id": env.id,
        "env_args": _canonical(env.args),
        "rule_args": _canonical(env.rule_args),
        "seats": env.seats,
        "deals_per_game": env.deals,
        "lower_score_wins": env.spec.lower_score_wins,
        "seed": league["seed"] if league else (seed if seed is not None else 0),
        "games": games if games is not None else (league["games"] if league else DEFAULT_GAMES),
        "agents": names,
        "reference": reference,
    }
    return env, settings, league


def run_league(
    out,
    agents=None,
    env_id=None,
    env_args=None,
    games=None,
    seed=None,
    reference=None,
    processes: int = 1,
    bootstrap: int = BOOTSTRAP,
    verbose: bool = True,
    executor=None,
) -> dict:
    """Open (or create) the league in ``out``, add ``agents``, play every missing match and
    write the ratings. ``env_id``/``env_args``/``games``/``seed``/``reference`` None: the
    league's own (or the defaults for a new league). Matches are played by ``executor``
    (``training.running.executor``; None: ``processes`` local processes). Returns the ratings and what
    was played."""
    say = print if verbose else (lambda *a, **k: None)
    out = Path(out)
    if processes < 1 or bootstrap < 0:
        raise LeagueError(f"processes={processes}, bootstrap={bootstrap}: need processes >= 1, bootstrap >= 0")
    if games is not None and (isinstance(games, bool) or not isinstance(games, int) or games < 1):
        raise LeagueError(f"games={shown(games)}: need a whole number >= 1 (duplicate sets per pairing)")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise LeagueError(f"seed={shown(seed)}: need a whole number >= 0")
    if reference is not None and (not isinstance(reference, str) or not reference.strip()):
        raise LeagueError(f"reference={shown(reference)}: need an agent spec")
    check_folder(out)
    out.mkdir(parents=True, exist_ok=True)
    # Lock first, then read and decide: a league that ran meanwhile is seen, not written over.
    with hold_folder(out, "league"):
        env, settings, league = open_league(out, agents, env_id, env_args, games, seed, reference)
        names, reference = settings["agents"], settings["reference"]
        log = out / LOG_FILE
        finished, notes = read_log(log, settings)  # refuses a log not of this league before anything is written
        if settings != league:
            write_file(out / LEAGUE_FILE, (json.dumps(settings, indent=2) + "\n").encode())
        if notes:
            say(f"{log}: dropped {', '.join(notes)}; their matches are played again")
        planned = schedule(names, env.seats, settings["games"], settings["seed"])
        pending = [m for m in planned if m.id not in finished]
        say(
            f"league {out}: {env.id}, {len(names)} agents, {len(planned)} matches "
            f"({len(planned) - len(pending)} in the log, {len(pending)} to play)"
        )
        start, played, step = time.perf_counter(), 0, max(1, len(pending) // 10)
        executor = executor or LocalExecutor(processes)
        for match, lines in play_matches(env, pending, executor):  # only this process writes the log
            append_lines(log, lines)
            finished[match.id] = {line["rotation"]: line for line in lines}
            played += 1
            if played % step == 0 or played == len(pending):
                say(f"  {played}/{len(pending)} matches played ({time.perf_counter() - start:.1f} s)", flush=True)
        rated = [line for m in planned for line in finished[m.id].values()]
        result = rate(rated, names, env.spec.lower_score_wins, reference, bootstrap, settings["seed"])
        markdown = write_outputs(out, result, settings, bootstrap)
    say("\n" + markdown)
    return {**result, "played": played, "matches": len(planned), "markdown": markdown, "league": settings}


def read_config(path) -> dict:
    data = read_yaml(path)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise LeagueError(f"{path}: expected a mapping with keys {', '.join(CONFIG_KEYS)}")
    unknown = [k for k in data if k not in CONFIG_KEYS]
    if unknown:
        raise LeagueError(
            f"{path}: unknown key(s) {', '.join(map(shown, unknown))}; the keys are {', '.join(CONFIG_KEYS)}"
        )
    if "args" in data and not isinstance(data["args"], dict):
        raise LeagueError(f"{path}: args must be a mapping of env arguments")
    for key in ("out", "env", "reference"):
        if key in data and not isinstance(data[key], str):
            raise LeagueError(f"{path}: {key} must be a string")
    return data


def main(argv=None):
    parser = command_parser("league", __doc__)
    parser.add_argument("--out", help="the league folder (created if new; continued if it holds a league)")
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="YAML/JSON file with out, env, args, agents, games, seed, reference (options given here win)",
    )
    parser.add_argument("--agents", help="comma-separated agent specs to add to the league")
    parser.add_argument("--env", help=f"{' or '.join(GAMES)} (a new league: {default_game().id}; else the league's)")
    parser.add_argument("--arg", action="append", metavar="KEY=VALUE", help="env argument, e.g. --arg deals=[8]")
    parser.add_argument("--games", type=int, help=f"duplicate sets per pairing (new league: {DEFAULT_GAMES})")
    parser.add_argument("--seed", type=int, help="first deal seed (new league: 0; a league keeps its own)")
    parser.add_argument(
        "--reference",
        help=f"agent pinned at mu {REFERENCE_MU:g} / Elo {REFERENCE_ELO:g} (new league: {DEFAULT_REFERENCE})",
    )
    parser.add_argument(
        "--processes", type=int, default=min(os.cpu_count() or 1, 4), help="worker processes (1: play in this process)"
    )
    parser.add_argument("--bootstrap", type=int, default=BOOTSTRAP, help="resamples for the Elo intervals (0: none)")
    add_executor_arguments(parser)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        config = read_config(args.config) if args.config else {}
        out = args.out or config.get("out")
        if not out:
            raise LeagueError("give the league folder: --out DIR (or out: in --config)")
        agents = (
            _agent_list(args.agents, "--agents")
            if args.agents is not None
            else _agent_list(config["agents"], f"{args.config}: agents")
            if "agents" in config
            else []
        )
        env_args = parse_env_args(args.arg) if args.arg else config.get("args")
        env_id = args.env or config.get("env")
        if env_id is not None and env_args is None:
            env_args = {}  # a game named without arguments: its defaults
        games = args.games if args.games is not None else config.get("games")
        seed = args.seed if args.seed is not None else config.get("seed")
        reference = args.reference or config.get("reference")
        executor = executor_from_args(args, args.processes)
        result = run_league(
            out, agents, env_id, env_args, games, seed, reference, args.processes, args.bootstrap, executor=executor
        )
    except ValueError as error:  # a bad agent, env argument, folder, value; an illegal move
        parser.exit(1, f"error: {error}\n")
    except KeyboardInterrupt:
        parser.exit(130, "\ninterrupted: the finished matches are in the log; rerun the same command to resume\n")
    print(f"{result['played']} matches played, {time.perf_counter() - start:.1f} s with {executor.describe()}")
    return result


if __name__ == "__main__":
    main()
