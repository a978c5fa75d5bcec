"""An evaluation that survives being stopped: ``training.evaluate --log DIR`` keeps every
finished game in ``DIR/sets.jsonl``; the same command run again plays only the games that
are missing, and its result is the one an uninterrupted run gives (each game's seed and
each agent's randomness depend on the set, the rotation and the seat alone). So a long match
(search bots at 10,000 simulations, whose duplicate set takes hours) can be spread over many
sessions, and a later command with more ``--games`` adds sets to the same log.

The file's first line says which match it holds (the game, its arguments and rules, the
seats' agents, the first seed, deterministic or not); a run for another match is refused.
Every other line holds finished games of one set (one game, as a logged run writes them;
a whole set, as earlier versions did), appended whole and flushed to disk as they end:
``{"set": 3, "games": [{"rotation": 0, "scores": [...], "winners": [...]}]}`` (``winners``
null for a game cut by the env's safety net). A cut-off last line (a kill mid-write) is
dropped and its game played again; any other line that is not one of this match's games
stops the run with its line number.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from training.common import files

LOG_FORMAT, LOG_VERSION = "deckgym-evaluation-log", 1
LOG_FILE = "sets.jsonl"


class EvaluationLogError(ValueError):
    """A log that is not this match's, or a damaged line in it."""


def log_header(env, layout: list[str], seed: int, deterministic: bool) -> dict:
    return {
        "log": LOG_FORMAT,
        "version": LOG_VERSION,
        "env": env.id,
        "env_args": dict(env.args),
        "rule_args": env.rule_args,
        "layout": list(layout),
        "seed": seed,
        "deterministic": deterministic,
    }


def _canonical(value):
    return json.loads(json.dumps(value))  # tuples as lists, as they come back from the file


def _set_problem(line, seats: int) -> str | None:
    """What keeps ``line`` from being finished games of a ``seats``-seat match, or None."""
    if not isinstance(line, dict) or set(line) != {"set", "games"}:
        return 'not a set: expected {"set": ..., "games": [...]}'
    index, games = line["set"], line["games"]
    if type(index) is not int or index < 0:
        return f"set {index!r} is not a set number"
    listed = [g.get("rotation") if isinstance(g, dict) else None for g in games] if isinstance(games, list) else []
    rotations = [r for r in listed if type(r) is int and 0 <= r < seats]
    if not listed or rotations != listed or rotations != sorted(set(rotations)):
        return f"set {index}: expected games of rotations 0 to {seats - 1}, each once, in order"
    for game in games:
        scores, winners = game.get("scores"), game.get("winners", "missing")
        if set(game) != {"rotation", "scores", "winners"}:
            return f"set {index}, rotation {game['rotation']}: fields are rotation, scores, winners"
        if (
            not isinstance(scores, list)
            or len(scores) != seats
            or not all(type(s) in (int, float) and math.isfinite(s) for s in scores)
        ):
            return f"set {index}, rotation {game['rotation']}: scores must be {seats} numbers"
        if winners is not None and (
            not isinstance(winners, list) or not winners or not all(type(w) is int and 0 <= w < seats for w in winners)
        ):
            return f"set {index}, rotation {game['rotation']}: winners must be null or seats 0 to {seats - 1}"
    return None


def read_sets(folder: Path, header: dict, seats: int) -> dict[int, dict[int, tuple]]:
    """The finished games in the log (set -> rotation -> its ``(set, rotation, scores,
    winners)`` record), after checking that the log is this match's; a new log is started
    with ``header``. Call it with the folder held (``files.hold_folder``)."""
    path = folder / LOG_FILE
    if not path.exists():
        files.write_file(path, json.dumps(header) + "\n")
        return {}
    _, done, lines, torn = _parse(path, seats, header)
    if torn:
        files.write_file(path, b"\n".join(lines) + b"\n")
    return done


def read_log(folder: Path) -> tuple[dict, dict[int, dict[int, tuple]]]:
    """The header of the log in ``folder`` and its finished games (as ``read_sets``), for
    reading only: a cut-off last line is left out, the file is not touched."""
    path = folder / LOG_FILE
    if not path.exists():
        raise EvaluationLogError(f"{path}: no evaluation log there")
    first, done, _, _ = _parse(path)
    return first, done


def _parse(
    path: Path, seats: int | None = None, header: dict | None = None
) -> tuple[dict, dict[int, dict[int, tuple]], list[bytes], bool]:
    """The log's header, its finished games, its whole lines and whether the last line was
    cut off; with ``header``, after checking the log is that match's (``seats`` None: the
    log's own layout tells)."""
    data = path.read_bytes()
    pieces = data.split(b"\n")
    torn = pieces[-1] != b""  # the last write was cut off: the set is played again
    lines = pieces[:-1]
    try:
        first = json.loads(lines[0]) if lines else None
    except ValueError:
        first = None
    if not isinstance(first, dict) or first.get("log") != LOG_FORMAT:
        raise EvaluationLogError(f"{path} is not an evaluation log (its first line is no {LOG_FORMAT} header)")
    expected = header or {}
    differ = [key for key in expected if _canonical(expected[key]) != first.get(key)]
    if differ:
        raise EvaluationLogError(
            f"{path} holds another match ({', '.join(f'{k}: {first.get(k)!r} there' for k in differ)}): "
            "give another --log folder, or the command that made it"
        )
    if seats is None:
        seats = len(first.get("layout") or ())
    done: dict[int, dict[int, tuple]] = {}
    for number, raw in enumerate(lines[1:], start=2):
        try:
            line = json.loads(raw)
        except ValueError:
            raise EvaluationLogError(f"{path}, line {number}: not JSON; the log is damaged") from None
        problem = _set_problem(line, seats)
        if problem:
            raise EvaluationLogError(f"{path}, line {number}: {problem}; the log is damaged")
        games = done.setdefault(line["set"], {})
        for g in line["games"]:  # a game logged twice (a resumed run that raced a kill) is the same game
            games[g["rotation"]] = (line["set"], g["rotation"], g["scores"], g["winners"])
    return first, done, lines, torn


def append_set(folder: Path, records: list[tuple]) -> None:
    """Append finished games of one set (their records) and flush them to disk."""
    index = records[0][0]
    games = [{"rotation": r, "scores": list(scores), "winners": w and list(w)} for _, r, scores, w in records]
    with open(folder / LOG_FILE, "a") as log:
        log.write(json.dumps({"set": index, "games": games}) + "\n")
        log.flush()
        os.fsync(log.fileno())
