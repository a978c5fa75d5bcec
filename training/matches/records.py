"""Game records: one game as JSON lines, written by ``training.frontends.play``, ``training.matches.evaluate``
(``--record DIR``: a file per game in the folder DIR) and the web app, and checked and shown
by ``python -m training.replay``.

```
{"record": "deckgym-game-record", "version": 1, "env": "craits_v0", "env_args": {...},
 "rule_args": {...}, "seed": 7, "seats": 4, "agents": ["heuristic", "random", ...]}
{"seat": 1, "action": "play 7H"}
{"seat": 2, "action": "draw"}
...
{"result": {"scores": [12, 40, 0, 33], "winners": [2], "truncated": false}}
```

The header names the env, its arguments, the effective rules they gave (``rule_args``), the
seed of ``reset`` and the agent in each seat (extra keys, such as the web app's
``human_seat``, are kept). A move line holds the acting seat and the action as text (the
rules' card notation). The game is deterministic given the env, the seed and the actions,
so a record replays exactly; an episode shorter than the game (Craits ``episode="deal"``)
is followed by the next, as ``training.matches.evaluate.play_game`` plays it.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

from envs.engine import IllegalActionError, clipped, shown
from training.common.files import write_file
from training.common.games import EnvHandle
from training.common.version import deckgym_version

RECORD_FORMAT = "deckgym-game-record"
RECORD_VERSION = 1
MAX_RECORD_BYTES = 64 << 20  # far above any game's record; refused before reading
HEADER_KEYS = {"env": str, "env_args": dict, "rule_args": dict, "seed": int, "seats": int, "agents": list}


class RecordError(ValueError):
    """A record that is malformed, made under other rules, or holds an illegal move; the
    message names the file and the line."""


def header_of(env, seed: int, agents: list[str], **extra) -> dict:
    """The header line of a game in ``env`` (an ``EnvHandle``) from ``reset(seed)``."""
    return {
        "record": RECORD_FORMAT,
        "version": RECORD_VERSION,
        "env": env.id,
        "env_args": dict(env.args),
        "rule_args": env.rule_args,
        "seed": seed,
        "seats": env.seats,
        "agents": list(agents),
        "deckgym_version": deckgym_version(),
        **extra,
    }


def result_of(game, truncated: bool = False) -> dict:
    return {"scores": game.scores(), "winners": game.winners() if game.is_over else None, "truncated": truncated}


def record_text(header: dict, moves: list[dict], result: dict) -> str:
    """A game as JSON lines: the header, one ``{"seat", "action"}`` line per action, the result."""
    lines = [header, *moves, {"result": result}]
    return "".join(json.dumps(line, separators=(", ", ": ")) + "\n" for line in lines)


def write_record(path, header: dict, moves: list[dict], result: dict) -> Path:
    """Write a record atomically."""
    return write_file(path, record_text(header, moves, result))


def check_record_folder(folder) -> None:
    """``ValueError`` naming ``folder`` and the reason if records can't be written into it
    (``write_record`` makes it as needed): checked before the first move, so no game is played
    for a record that is then lost. A probe file is written there and removed, and any folder
    made for it too."""
    folder = Path(folder)
    if os.path.lexists(folder) and not folder.is_dir():
        raise ValueError(f"--record {folder}: exists and is not a folder (records are written into a folder)")
    made = [path for path in (folder, *folder.parents) if not os.path.lexists(path)]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError as exc:
        raise ValueError(f"--record {folder}: can't write records into it ({exc.strerror})") from None
    finally:
        for path in made:  # deepest first; a folder someone filled meanwhile stays
            with contextlib.suppress(OSError):
                path.rmdir()


class Recorder:
    """Collects a game's moves through ``play_game``'s ``on_move`` hook."""

    def __init__(self):
        self.moves: list[dict] = []

    def __call__(self, raw_env, seat: int, action) -> None:
        self.moves.append({"seat": seat, "action": raw_env.game.action_to_text(action)})


def parse_record(text: str, source: str = "record") -> tuple[dict, list[dict], dict]:
    """(header, moves, result) of a record's text; ``RecordError`` naming the line of the
    first thing that is not what the format says."""
    lines = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise RecordError(f"{source}, line {number}: not JSON ({clipped(str(exc))})") from None
        if not isinstance(value, dict):
            raise RecordError(f"{source}, line {number}: expected a JSON object, got {shown(value)}")
        lines.append((number, value))
    if not lines:
        raise RecordError(f"{source}: empty, not a deckgym game record")
    number, header = lines[0]
    if header.get("record") != RECORD_FORMAT or header.get("version") != RECORD_VERSION:
        raise RecordError(
            f"{source}, line {number}: not a deckgym game record header "
            f"(expected record={RECORD_FORMAT!r}, version={RECORD_VERSION})"
        )
    for key, kind in HEADER_KEYS.items():
        if not isinstance(header.get(key), kind) or isinstance(header.get(key), bool):
            raise RecordError(
                f"{source}, line {number}: header field {key!r} must be a {kind.__name__}, got {shown(header.get(key))}"
            )
    if len(lines) < 2 or set(lines[-1][1]) != {"result"}:
        raise RecordError(f'{source}: the last line must be the result ({{"result": ...}})')
    moves = []
    for number, move in lines[1:-1]:
        if set(move) != {"seat", "action"} or type(move["seat"]) is not int or not isinstance(move["action"], str):
            raise RecordError(
                f'{source}, line {number}: a move line is {{"seat": <int>, "action": <text>}}, got {shown(move)}'
            )
        moves.append(dict(move, line=number))
    return header, moves, lines[-1][1]["result"]


def read_record(path) -> tuple[dict, list[dict], dict]:
    path = Path(path)
    try:
        if not path.is_file():
            raise RecordError(f"{path}: no such record file")
        if path.stat().st_size > MAX_RECORD_BYTES:
            raise RecordError(f"{path}: over {MAX_RECORD_BYTES} bytes, not a game record")
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise RecordError(f"{path}: can't be read ({exc.strerror})") from None
    return parse_record(text, str(path))


def replay(
    header: dict, moves: list[dict], result: dict, source: str = "record", on_move=None, on_deal_end=None
) -> dict:
    """Play a record's moves through a fresh env and check it: the rules it was made under,
    every move's seat and legality, and the result. ``on_move(game, seat, text)`` is called
    before each move, ``on_deal_end(game)`` after each episode ends. Returns the result."""
    try:
        env = EnvHandle(header["env"], header["env_args"])
    except ValueError as exc:
        raise RecordError(f"{source}, line 1: {exc}") from None
    if env.rule_args != header["rule_args"]:
        made = header["rule_args"]
        differ = [
            f"{k}={made.get(k)!r} there, {env.rule_args.get(k)!r} here"
            for k in sorted(set(env.rule_args) | set(made))
            if env.rule_args.get(k) != made.get(k)
        ]
        raise RecordError(
            f"{source}, line 1: made under other rules than its env arguments give here ({'; '.join(differ)})"
        )
    if header["seats"] != env.seats or len(header["agents"]) != env.seats:
        raise RecordError(
            f"{source}, line 1: {header['seats']} seats and {len(header['agents'])} agents for a {env.seats}-seat table"
        )
    raw = env.raw
    raw.reset(seed=header["seed"])
    queue, truncated = iter(moves), False
    while True:
        if not raw.agents or all(raw.terminations[a] or raw.truncations[a] for a in raw.agents):
            truncated |= any(raw.truncations.values())
            if on_deal_end is not None:
                on_deal_end(raw.game)
            if raw.game.is_over or truncated:
                break
            raw.reset()
            continue
        seat = raw.agent_name_mapping[raw.agent_selection]
        move = next(queue, None)
        if move is None:
            raise RecordError(f"{source}: the record ends before the game does (seat {seat} is to act)")
        where = f"{source}, line {move['line']}"
        if move["seat"] != seat:
            raise RecordError(f"{where}: seat {move['seat']} moves, but seat {seat} is to act")
        game = raw.game
        try:
            action = game.text_to_action(move["action"])
        except ValueError as exc:
            raise RecordError(f"{where}: {exc}") from None
        if action not in game.legal_actions():
            raise RecordError(f"{where}: {IllegalActionError(game.illegal_message(action))}")
        if on_move is not None:
            on_move(game, seat, move["action"])
        raw.step(action)
    extra = next(queue, None)
    if extra is not None:
        raise RecordError(f"{source}, line {extra['line']}: a move after the end of the game")
    replayed = result_of(raw.game, truncated)
    if replayed != result:
        raise RecordError(f"{source}: the result line says {shown(result)}, the replay gives {replayed}")
    return replayed
