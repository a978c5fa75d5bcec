"""Play against the bots in the browser: a small local web app.

    python -m training.web                       # serves http://127.0.0.1:8000/
    python -m training.web --port 8080 --bots bots --bots runs

A person picks a game, its rules, their seat and a bot for each other seat (``random``,
``heuristic``, a checkpoint or exported bot found under ``--bots`` folders, or any agent
spec ``make_agent`` takes), then plays by clicking cards. The bots move on the server until
it is the person's turn. The page is plain HTML, JS and CSS in ``training/frontends/web_static``
(no build step); each game's folder may add a ``web.js`` that draws its table (``GET
/games.js`` serves them all), and a game without one is shown as the terminal shows it.
The games, their names, seats and rule options are read from the registered games' specs
and ``present`` modules (``envs/present.py``): nothing here names a game.

Each game is a *session* under a random id, held in memory (at most ``--max-games``, games
being created included; one idle for ``--idle-minutes`` is dropped when room is needed).
The page keeps the id in its address (``/#game=ID``), so each tab plays its own game and a
reload resumes it. Every answer holds only what the person's seat may see (the game's
``seat_view``): their own cards, the public table, the legal moves as text, the moves so
far as that seat knows them (another seat's hidden choice shows only as made), and the
scores.

Limits, so that no page and no request can make the server misbehave:

- Host: the server answers only requests naming it: ``localhost``, ``127.0.0.1``,
  ``[::1]``, the ``--host`` it was started with or the IP address the request arrived at,
  with its port; any other Host gets 421 (a web page whose domain is made to resolve to
  127.0.0.1 names its own domain). A request that changes something (not GET, HEAD,
  OPTIONS) and says where it comes from (``Origin``, as browsers do) must come from one of
  those addresses, else 403.
- A bot spec that is neither built in (``random``, ``heuristic``, ``ismcts[:options]``)
  nor listed by ``GET /api/options`` is loaded if it can be, else refused with one message
  whatever the reason: a page can't learn by asking what exists on this machine. The same
  holds for the network a guided search names (``ismcts:prior=BOT``); the shipped bots are
  listed with their guided search too (and ``shipped.STRONGEST_SEARCH``'s deeper one).
- A search bot's move takes at most ``--move-time-ms`` (default 5000): the limit is added
  to every IS-MCTS spec (one giving no time keeps its number of simulations, 1000 unless
  given); ``simulations`` over ``MAX_SIMULATIONS`` or a ``max_time_ms`` over the limit is
  refused. The other bots answer in milliseconds.
- The bots move in a thread of their own: a request about a game whose bots are moving
  answers at once (the state as of the last move, ``thinking`` naming the seat whose bot
  is choosing; a move or the record: 409). ``DELETE`` stops the game's bots after the
  current move, and the server stops on the first Ctrl-C or SIGTERM, dropping what is
  still running after ``SHUTDOWN_GRACE_S``.

API (JSON; an error is ``{"error": "..."}`` with a 4xx status naming the problem):

=====================================  ==================================================
``GET /api/options``                   games with their rule options and seats; the bots
                                       found (spec, kind, game)
``POST /api/games``                    new game: ``{"env": "craits_v0", "args": {"deals":
                                       [3]}, "agents": ["human", "heuristic", ...], "seed":
                                       7}`` (one agent per seat, ``"human"`` once; seed
                                       optional) -> 201 and the state
``GET /api/games/{id}?since=N``        the state; ``log`` holds the log entries from N on
``POST /api/games/{id}/move``          ``{"action": "play 7H", "since": N}``: the person's
                                       move, then the bots' until the person's turn
``GET /api/games/{id}/record``         the game record (JSON lines) once the game is over
``DELETE /api/games/{id}``             drop the game
``GET /games.js``                      the games' ``web.js`` files, one after another
=====================================  ==================================================

The state's ``view`` is the game's ``seat_view``; for a game without a ``web.js`` the state
also holds ``text``, that view as the terminal's lines, which the page shows.

The record is a ``training.matches.records`` game record, its header also naming the person's seat
(``human_seat``); ``python -m training.replay`` checks and shows it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ipaddress
import json
import secrets
import socket
import sys
import threading
import time
import traceback
from importlib import resources
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from envs.engine import clipped, shown
from envs.present import presentation, presentation_of
from envs.search import GUIDED_SIMULATIONS, ISMCTSBot, check_options, parse_options
from envs.spec import discover
from training import shipped
from training.agents import AGENT_SPECS, IllegalMoveError, checked_act, make_agent
from training.agents.human import view_text
from training.common.commands import command_parser
from training.common.games import EnvHandle, GameSpec
from training.matches.records import header_of, record_text, result_of

STATIC = Path(__file__).with_name("web_static")
HUMAN = "human"
WEB_SCRIPT = "web.js"  # how the page draws a game's table: a file in the game's package
MAX_BODY = 64 * 1024  # bytes of a request body
MAX_SPEC = 500  # characters of an agent spec
MAX_SEED = 2**53 - 1  # exact in JavaScript
MAX_BOTS_LISTED = 200
MAX_META_BYTES = 1 << 20
BUILTIN_BOTS = ("random", "heuristic")
MOVE_TIME_MS = 5000.0  # the longest a search bot may think about one move (--move-time-ms)
MAX_SIMULATIONS = 100_000  # IS-MCTS iterations a move, the most a spec may ask for
SHUTDOWN_GRACE_S = 1  # at Ctrl-C, requests still running after this long are dropped
BACKLOG = 2048  # connections waiting to be accepted (uvicorn's default)
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")  # the methods that change nothing here
DEFAULT_PORTS = {"http": 80, "https": 443}
NOT_OFFERED = (
    "not a bot this server offers (random, heuristic, ismcts[:options] or one GET /api/options lists), "
    "nor a checkpoint or exported bot it could seat at this table"
)


class ApiError(Exception):
    """A request the server refuses: ``status`` and a message naming the problem."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


# ---------------------------------------------------------------------- sessions
class Session:
    """One game: the env, an agent per bot seat, the person's seat, the log as that seat
    sees it and the actions for the record. Change it only inside ``claimed()``; what a
    request may read meanwhile is ``published()``. ``make_bot(spec, env, seed=...)`` builds
    a bot seat's agent. Nothing moves until ``advance()``."""

    def __init__(self, sid: str, env_id: str, env_args: dict, specs: list[str], seed: int, make_bot):
        self.id, self.specs, self.seed = sid, specs, seed
        try:
            self.env = EnvHandle(env_id, env_args)
        except (ValueError, TypeError) as exc:
            raise ApiError(400, f"args: {exc}") from None
        if len(specs) != self.env.seats:
            raise ApiError(
                400, f'agents: {len(specs)} given for {self.env.seats} seats: give one per seat ("human" for yours)'
            )
        if specs.count(HUMAN) != 1:
            raise ApiError(400, f'agents: name "human" for exactly one seat (yours), not {specs.count(HUMAN)}')
        self.seat = specs.index(HUMAN)
        self.agents: list = []  # per seat: its bot, None for the person
        for seat, spec in enumerate(specs):
            if spec == HUMAN:
                self.agents.append(None)
                continue
            try:
                self.agents.append(make_bot(spec, self.env, seed=seed + seat))
            except Exception as exc:  # a bad spec, a checkpoint for other rules, a missing runtime
                raise ApiError(400, f"agents: seat {seat} ({shown(spec)}): {clipped(str(exc), 600)}") from None
        self.raw = self.env.raw
        self.raw.reset(seed=seed)
        for agent in self.agents:
            if agent is not None:
                agent.reset()
            if isinstance(agent, ISMCTSBot):  # a search in progress ends when the game is closed
                agent.stop = lambda: self.closed
        self.present = presentation(self.raw.game)
        self.drawn_by_page = web_script(self.env.spec) is not None  # else the page shows ``text``
        self.narrator = self.present.Narrator(self.seat)
        self.log = self.narrator.start(self.raw.game)
        self.moves: list[dict] = []
        self.over = self.cut = False
        self.error: str | None = None
        self.closed: bool = False  # set from another thread (DELETE, shutdown): the bots stop
        self.lock = threading.Lock()
        self.touched = time.monotonic()
        self._published = self.state()

    @contextlib.contextmanager
    def claimed(self):
        """The game held for a change, or 409 at once while another request holds it (its
        bots are moving): no request, and no thread, waits on another."""
        if not self.lock.acquire(blocking=False):
            raise ApiError(409, "the bots are still moving: ask again once it is your turn")
        try:
            yield
        finally:
            self._published = self.state()
            self.touched = time.monotonic()
            self.lock.release()

    def close(self) -> None:
        self.closed = True

    def published(self, since: int = 0) -> dict:
        """The state as of the last change or bot move: it answers at once, even while a bot
        thinks (the thread moving the bots replaces it whole, never changes it)."""
        state = self._published
        if not 0 <= since <= state["log_size"]:
            raise ApiError(400, f"since={since}: the log has {state['log_size']} entries")
        return {**state, "log": state["log"][since:]}

    @property
    def game(self):
        return self.raw.game

    def _apply(self, seat: int, action: int) -> None:
        game = self.game
        token = self.narrator.before(game, seat, action)
        self.moves.append({"seat": seat, "action": game.action_to_text(action)})
        self.raw.step(action)
        self.log.extend(self.narrator.after(game, token))

    def advance(self) -> None:
        """The bots' moves until the person's turn or the end of the game (env episodes
        shorter than a game are chained, as ``evaluate.play_game`` does)."""
        raw = self.raw
        while not self.over:
            if not raw.agents:
                if raw.game.is_over or self.cut:
                    self.over = True
                    break
                raw.reset()
                continue
            agent = raw.agent_selection
            if raw.terminations[agent] or raw.truncations[agent]:
                self.cut |= raw.truncations[agent]
                raw.step(None)
                continue
            seat = raw.agent_name_mapping[agent]
            if seat == self.seat:
                return
            if self.closed:
                raise ApiError(410, "the game was closed while its bots were moving")
            self._published = self.state(thinking=seat)
            try:
                action = checked_act(self.agents[seat], seat, raw.observe(agent), raw.game)
            except Exception as exc:  # an illegal move, a broken policy
                traceback.print_exc()
                # An illegal move's message lists the bot's legal moves: its cards. Not for the page.
                why = "it chose an illegal move" if isinstance(exc, IllegalMoveError) else clipped(str(exc), 600)
                self.error = f"the bot in seat {seat} ({self.specs[seat]}) failed, so the game cannot go on: {why}"
                raise ApiError(500, self.error) from None
            self._apply(seat, action)
        if self.over and not any(e["kind"] == "result" for e in self.log):
            self.log.append(self._result_entry())

    def _result_entry(self) -> dict:
        result = self.result()
        if result["truncated"]:
            text = "the game was cut short (a deal ran past 10,000 actions): no winner"
        else:
            winners = result["winners"]
            who = ("seats " + ", ".join(map(str, winners)) + " win") if len(winners) > 1 else f"seat {winners[0]} wins"
            text = f"game over: {who}; scores " + ", ".join(f"seat {s} {p}" for s, p in enumerate(result["scores"]))
        return {"kind": "result", "text": text, **result}

    def result(self) -> dict:
        return result_of(self.game, self.cut)

    def play(self, text) -> None:
        if self.error:
            raise ApiError(500, self.error)
        if self.over:
            raise ApiError(409, "the game is over: start a new one")
        game = self.game
        if game.current_player != self.seat:
            raise ApiError(409, f"it is seat {game.current_player}'s turn, not yours")
        if not isinstance(text, str):
            raise ApiError(400, f"action: a move's text such as 'play 7H', not {type(text).__name__}")
        try:
            action = game.text_to_action(clipped(text, 100))
        except ValueError as exc:
            raise ApiError(400, f"action: {exc}") from None
        if action not in game.legal_actions():
            legal = ", ".join(game.action_to_text(a) for a in game.legal_actions())
            raise ApiError(400, f"action {shown(text)} is not a legal move now; legal: {legal}")
        self._apply(self.seat, action)
        self.advance()

    def state(self, since: int = 0, thinking: int | None = None) -> dict:
        """What the person's seat sees, the log from ``since`` on; ``thinking``: the seat
        whose bot is choosing its move now."""
        if not 0 <= since <= len(self.log):
            raise ApiError(400, f"since={since}: the log has {len(self.log)} entries")
        game = self.game
        over = self.over
        view = self.present.seat_view(game, self.seat)
        return {
            "id": self.id,
            "env": self.env.id,
            "name": self.env.spec.name,
            "args": self.env.args,
            "rule_args": self.env.rule_args,
            "seed": self.seed if over else None,  # with the seed every hand could be worked out
            "seat": self.seat,
            "agents": self.specs,
            "over": over,
            "error": self.error,
            "your_turn": not over and not self.error and game.current_player == self.seat,
            "thinking": thinking,
            "legal": [] if over or self.error else self.present.legal_moves(game, self.seat),
            "prompt": "" if over else self.present.prompt(game, self.seat),
            "view": view,
            # A game without a web.js: its view as the terminal writes it, for the page to show.
            **({} if self.drawn_by_page else {"text": view_text(view, self.specs).split("\n")}),
            "log": self.log[since:],
            "log_size": len(self.log),
            "deals": [e for e in self.log if e["kind"] == "deal"],
            "result": self.result() if over else None,
            "record": f"/api/games/{self.id}/record" if over else None,
        }

    def record(self) -> str:
        if not self.over:
            raise ApiError(409, "the record is ready once the game is over (it holds every hidden move)")
        return record_text(header_of(self.env, self.seed, self.specs, human_seat=self.seat), self.moves, self.result())


class Sessions:
    """The games in progress, at most ``limit``, those being created included; when full,
    the one idle longest (its bots not moving) goes if it has been idle ``idle_s`` seconds,
    else a new game is refused (503). A game dropped is closed: its bots stop."""

    def __init__(self, limit: int = 32, idle_s: float = 1800.0):
        self.limit, self.idle_s = limit, idle_s
        self._items: dict[str, Session] = {}
        self._creating = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def _make_room(self) -> None:
        if len(self._items) + self._creating < self.limit:
            return
        now = time.monotonic()
        waiting = [s for s in self._items.values() if not s.lock.locked()]
        oldest = min(waiting, key=lambda s: s.touched, default=None)
        if oldest is None or now - oldest.touched < self.idle_s:
            raise ApiError(
                503,
                f"{self.limit} games are in progress, the most this server holds: finish or close "
                "one (or wait until one has been idle a while)",
            )
        del self._items[oldest.id]
        oldest.close()

    def add(self, make) -> Session:
        """The game ``make(sid)`` builds, its place taken first: building it (loading bots)
        takes a while, and games being built must count."""
        with self._lock:
            self._make_room()
            self._creating += 1
        try:
            session = make(secrets.token_urlsafe(12))
        except BaseException:
            with self._lock:
                self._creating -= 1
            raise
        with self._lock:
            self._creating -= 1
            self._items[session.id] = session
        return session

    def get(self, sid: str) -> Session:
        session = self._items.get(sid)
        if session is None:
            raise ApiError(404, f"no game {shown(sid)}: it ended, was dropped after being idle, or never existed")
        session.touched = time.monotonic()
        return session

    def remove(self, sid: str) -> None:
        with self._lock:
            session = self._items.pop(sid, None)
        if session is None:
            raise ApiError(404, f"no game {shown(sid)}")
        session.close()

    def discard(self, session: Session) -> None:
        """Drop ``session`` if it is still held (a game whose start failed)."""
        with self._lock:
            if self._items.get(session.id) is session:
                del self._items[session.id]
        session.close()

    def close_all(self) -> None:
        """Stop every game's bots (the server is stopping)."""
        with self._lock:
            sessions = list(self._items.values())
        for session in sessions:
            session.close()


# --------------------------------------------------------------------- the options
def game_options() -> list[dict]:
    """Each registered game's name, seats and rule options, for the setup form."""
    return [
        {
            "id": spec.id,
            "name": spec.name,
            "players": dict(zip(("min", "max", "default"), spec.players)),
            "lower_wins": spec.lower_score_wins,
            **presentation_of(spec).rule_options(),
        }
        for spec in discover().values()
    ]


def web_script(spec: GameSpec) -> str | None:
    """The game's ``web.js`` (how the page draws its table), or None if it has none."""
    file = resources.files(spec.package) / WEB_SCRIPT
    return file.read_text(encoding="utf-8") if file.is_file() else None


def game_scripts() -> str:
    """Every registered game's ``web.js``, one after another: ``GET /games.js``."""
    return "\n".join(
        f"// {spec.id}: {spec.package}/{WEB_SCRIPT}\n{script}"
        for spec in discover().values()
        if (script := web_script(spec)) is not None
    )


def _read_meta(file: Path) -> dict | None:
    try:
        if file.stat().st_size > MAX_META_BYTES:
            return None
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def find_bots(roots) -> list[dict]:
    """The shipped bots, by name (``training.shipped``), then checkpoint folders (meta.json +
    policy.npz) and exported bots (bot.json + model.onnx) in ``roots`` and up to two folder
    levels below: ``{"spec", "kind", "env", "label"}``."""
    found = []
    for name in shipped.bot_names():
        meta = _read_meta(shipped.BOTS / name / "meta.json")
        if meta is not None and meta.get("env_id") in discover():
            found.append({"spec": name, "kind": "shipped", "env": meta["env_id"], "label": f"{name} (shipped)"})
            searches = [(f"ismcts:prior={name}", f"IS-MCTS guided by it, {GUIDED_SIMULATIONS} simulations")]
            if options := shipped.STRONGEST_SEARCH.get(name):
                searches.append((f"ismcts:prior={name},{options}", f"its strongest: {options}, up to a second a move"))
            found += [
                {"spec": spec, "kind": "search", "env": meta["env_id"], "label": f"{name} + search ({what})"}
                for spec, what in searches
            ]
    for root in map(Path, roots):
        if not root.is_dir():
            continue
        folders = [root]
        try:
            for child in sorted(root.iterdir()):
                if child.is_dir():
                    folders.append(child)
                    folders += sorted(p for p in child.iterdir() if p.is_dir())
        except OSError:
            continue
        for folder in folders:
            if (folder / "bot.json").is_file() and (folder / "model.onnx").is_file():
                kind, meta, spec = "exported", _read_meta(folder / "bot.json"), f"onnx:{folder.as_posix()}"
            elif folder.resolve().parent == shipped.BOTS:  # listed above, by name
                continue
            elif (folder / "meta.json").is_file() and (folder / "policy.npz").is_file():
                kind, meta, spec = "checkpoint", _read_meta(folder / "meta.json"), folder.as_posix()
            else:
                continue
            if meta is None or meta.get("env_id") not in discover():
                continue
            found.append({"spec": spec, "kind": kind, "env": meta["env_id"], "label": f"{spec} ({kind})"})
            if len(found) >= MAX_BOTS_LISTED:
                return found
    return found


def search_spec(spec: str, move_time_ms: float) -> str:
    """An IS-MCTS spec within this server's limits: ``simulations`` over ``MAX_SIMULATIONS``
    or a ``max_time_ms`` over ``move_time_ms`` refused (``ValueError``), and ``move_time_ms``
    given to a search that sets no time (with its simulations, 1000 unless given: a time
    alone would search for all of it)."""
    options = parse_options(spec.partition(":")[2])
    if options.get("simulations", 0) > MAX_SIMULATIONS:
        raise ValueError(f"simulations={options['simulations']} is over this server's cap of {MAX_SIMULATIONS} a move")
    time_ms = options.get("max_time_ms", 0)
    if time_ms > move_time_ms:
        raise ValueError(f"max_time_ms={time_ms:g} is over this server's limit of {move_time_ms:g} ms a move")
    if not time_ms:  # its simulations as given, else its default (fewer for a guided search)
        options = {"simulations": check_options(options)["simulations"], **options, "max_time_ms": move_time_ms}
    return "ismcts:" + ",".join(f"{name}={value}" for name, value in options.items())


def seat_bot(spec: str, env, seed: int, offered=(), move_time_ms: float = MOVE_TIME_MS):
    """The agent for a bot seat within this server's limits: a search's budget capped
    (``search_spec``); a spec neither built in nor ``offered`` (found by ``find_bots``)
    loads, or fails with one message whatever went wrong, so that a page can't probe which
    folders and files exist here."""
    if spec == "ismcts" or spec.startswith("ismcts:"):
        spec = search_spec(spec, move_time_ms)  # a bad option is named: it tells nothing of this machine
        prior = parse_options(spec.partition(":")[2]).get("prior")
        if not prior or prior in offered:
            return make_agent(spec, env, seed=seed)
    elif spec in BUILTIN_BOTS or spec in offered:
        return make_agent(spec, env, seed=seed)
    try:
        return make_agent(spec, env, seed=seed)
    except Exception:
        raise ValueError(NOT_OFFERED) from None


# ------------------------------------------------------------------------ the app
def _host_name(name: str) -> str:
    """A host name as compared: lower case; an IP address in its standard form (an IPv4
    one mapped into IPv6, as a dual-stack socket reports it, as IPv4), an IPv6 one in
    brackets as in a Host header."""
    try:
        address = ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return name.lower()
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is None:
            return f"[{address}]"
        address = address.ipv4_mapped
    return str(address)


def _name_and_port(text: str, scheme: str) -> tuple[str, int]:
    """A Host header's ``name:port`` (``[::1]:port``; the scheme's port if none), as compared."""
    name, sep, port = text.rpartition(":")
    if not sep or not (port.isascii() and port.isdigit()) or (":" in name and not name.endswith("]")):
        name, port = text, str(DEFAULT_PORTS.get(scheme, 80))
    return _host_name(name), int(port)


class ServedHostsOnly:
    """ASGI middleware against other web pages driving the app. A request must name this
    server in its Host: a page whose domain is made to resolve to 127.0.0.1 (DNS
    rebinding) names its own domain. A request that changes something must come from this
    server's own page where it says where it comes from (browsers send ``Origin``)."""

    def __init__(self, app, host: str):
        self.app, self.host = app, _host_name(host)

    async def __call__(self, scope, receive, send):
        refusal = self.refusal(scope) if scope["type"] == "http" else None
        if refusal is None:
            await self.app(scope, receive, send)
        else:
            await _json_error(*refusal)(scope, receive, send)

    def served(self, scope) -> list[tuple[str, int]]:
        """The ``(name, port)`` pairs this server answers to: the loopback names, its
        ``--host`` and the IP address the request arrived at, each with its port."""
        scheme = scope.get("scheme", "http")
        address, port = scope.get("server") or ("", DEFAULT_PORTS.get(scheme, 80))
        names = [*LOOPBACK_NAMES, self.host]
        with contextlib.suppress(ValueError):
            ipaddress.ip_address(address)  # the socket's address, not a name the client chose
            names.append(_host_name(address))
        return [(name, port) for name in dict.fromkeys(names)]

    def refusal(self, scope) -> tuple[int, str] | None:
        scheme = scope.get("scheme", "http")
        served = self.served(scope)
        headers = Headers(scope=scope)
        host = headers.get("host")
        if host is None or _name_and_port(host, scheme) not in served:
            names = ", ".join(f"{name}:{port}" for name, port in served)
            return 421, f"this server answers to Host {names} only, not {shown(host)}: open it at one of those"
        origin = headers.get("origin")
        if scope["method"] not in SAFE_METHODS and origin is not None:
            origin_scheme, _, rest = origin.partition("://")
            if origin_scheme != scheme or "/" in rest or _name_and_port(rest, scheme) not in served:
                pages = ", ".join(f"{scheme}://{name}:{port}" for name, port in served)
                return 403, (
                    f"refused: a {scope['method']} from the page at {shown(origin)}; this server takes "
                    f"changes only from its own pages ({pages})"
                )
        return None


async def off_the_loop(work):
    """``work()`` run in a daemon thread of its own, awaited: a bot thinking holds up no
    other request, and no stopped server waits for it."""
    loop = asyncio.get_running_loop()
    done = loop.create_future()

    def settle(result, error) -> None:
        if done.cancelled():  # the request was dropped meanwhile
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(result)

    def run() -> None:
        try:
            result, error = work(), None
        except BaseException as exc:  # handed to the request
            result, error = None, exc
        with contextlib.suppress(RuntimeError):  # the loop is closed: the server stopped meanwhile
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=run, name="deckgym-web-bots", daemon=True).start()
    try:
        return await done
    except asyncio.CancelledError:
        # Only the server stopping cancels a request (SHUTDOWN_GRACE_S after Ctrl-C): answer
        # it rather than log a traceback. The thread, a daemon, goes with the process.
        raise ApiError(503, "the server is stopping") from None


def _json_error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def api(handler):
    """An endpoint whose ``ApiError`` becomes a JSON error, and any other exception a 500
    JSON error (logged): no request can take the server down."""

    @functools.wraps(handler)
    async def endpoint(request: Request):
        try:
            return await handler(request)
        except ApiError as exc:
            return _json_error(exc.status, exc.message)
        except Exception as exc:
            traceback.print_exc()
            return _json_error(500, f"internal error: {type(exc).__name__}: {clipped(str(exc))}")

    return endpoint


async def read_json(request: Request, fields: dict) -> dict:
    """The request's JSON object, checked: size, syntax, an object, only ``fields`` (name ->
    required)."""
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        raise ApiError(415, "send the body as JSON with Content-Type: application/json")
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
        raise ApiError(413, f"the body is over {MAX_BODY} bytes")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise ApiError(413, f"the body is over {MAX_BODY} bytes")
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise ApiError(400, f"malformed JSON: {clipped(str(exc))}") from None
    if not isinstance(data, dict):
        raise ApiError(400, f"expected a JSON object, got {type(data).__name__}")
    unknown = [key for key in data if key not in fields]
    if unknown:
        raise ApiError(400, f"unknown field {', '.join(shown(k) for k in unknown)}; fields are {', '.join(fields)}")
    missing = [key for key, required in fields.items() if required and key not in data]
    if missing:
        raise ApiError(400, f"missing field {', '.join(missing)}")
    return data


def _integer(value, name: str, low: int, high: int) -> int:
    if type(value) is not int or not low <= value <= high:
        raise ApiError(400, f"{name}: an integer from {low} to {high}, not {shown(value)}")
    return value


def _since(request: Request) -> int:
    text = request.query_params.get("since", "0")
    if not text.isdigit() or len(text) > 12:
        raise ApiError(400, f"since={shown(text)}: a log position, 0 or more")
    return int(text)


def create_app(
    bot_roots=("checkpoints", "bots", "runs"),
    max_games: int = 32,
    idle_minutes: float = 30.0,
    host: str = "127.0.0.1",
    move_time_ms: float = MOVE_TIME_MS,
) -> Starlette:
    """The web app; ``app.state.sessions`` holds the games (``Sessions``). ``host``: the
    ``--host`` it is served on (a Host it answers to); ``move_time_ms``: a search bot's
    time for one move."""
    sessions = Sessions(max_games, idle_minutes * 60)
    roots = list(bot_roots)

    async def index(request: Request):
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    async def scripts(request: Request):
        return Response(
            await run_in_threadpool(game_scripts), media_type="text/javascript", headers={"Cache-Control": "no-cache"}
        )

    @api
    async def options(request: Request):
        bots = [
            {"spec": "random", "kind": "builtin", "env": None, "label": "random (any legal move)"},
            {"spec": "heuristic", "kind": "builtin", "env": None, "label": "heuristic (rule-based)"},
        ]
        bots += await run_in_threadpool(find_bots, roots)
        return JSONResponse({"games": game_options(), "bots": bots, "agent_specs": AGENT_SPECS})

    @api
    async def new_game(request: Request):
        data = await read_json(request, {"env": True, "args": False, "agents": True, "seed": False})
        env_id = data["env"]
        games = discover()
        if env_id not in games:
            raise ApiError(400, f"env: {shown(env_id)} is not a game here; choose one of {', '.join(games)}")
        args = data.get("args") or {}
        if not isinstance(args, dict):
            raise ApiError(400, f"args: a JSON object of env arguments, not {type(args).__name__}")
        if "render_mode" in args:
            raise ApiError(400, "args: render_mode is not for the web app (the page shows the table)")
        agents = data["agents"]
        if not isinstance(agents, list) or not all(isinstance(a, str) and a.strip() for a in agents):
            raise ApiError(400, 'agents: a list of agent specs, one per seat in seat order, "human" for yours')
        agents = [a.strip() for a in agents]
        if any(len(a) > MAX_SPEC for a in agents):
            raise ApiError(400, f"agents: a spec is at most {MAX_SPEC} characters")
        seed = data.get("seed")
        seed = secrets.randbelow(2**31) if seed is None else _integer(seed, "seed", 0, MAX_SEED)

        def start():
            offered = {bot["spec"] for bot in find_bots(roots)}
            make_bot = functools.partial(seat_bot, offered=offered, move_time_ms=move_time_ms)
            session = sessions.add(lambda sid: Session(sid, env_id, args, agents, seed, make_bot))
            try:
                with session.claimed():
                    session.advance()
                    return session.state()
            except Exception:
                sessions.discard(session)
                raise

        return JSONResponse(await off_the_loop(start), status_code=201)

    @api
    async def get_game(request: Request):
        session = sessions.get(request.path_params["sid"])
        return JSONResponse(session.published(_since(request)))

    @api
    async def move(request: Request):
        session = sessions.get(request.path_params["sid"])
        data = await read_json(request, {"action": True, "since": False})
        since = data.get("since", 0)
        _integer(since, "since", 0, 10**12)

        def play():
            with session.claimed():
                session.play(data["action"])
                return session.state(since)

        return JSONResponse(await off_the_loop(play))

    @api
    async def record(request: Request):
        session = sessions.get(request.path_params["sid"])

        def read():
            with session.claimed():
                return session.record()

        text = await run_in_threadpool(read)
        name = f"deckgym-{session.env.id}-seed{session.seed}.jsonl"
        return Response(
            text, media_type="application/x-ndjson", headers={"Content-Disposition": f'attachment; filename="{name}"'}
        )

    @api
    async def drop(request: Request):
        sessions.remove(request.path_params["sid"])
        return JSONResponse({"dropped": request.path_params["sid"]})

    async def http_error(request: Request, exc: HTTPException):
        return _json_error(exc.status_code, f"{request.method} {request.url.path}: {exc.detail}")

    routes = [
        Route("/", index),
        Route("/games.js", scripts),
        Route("/api/options", options),
        Route("/api/games", new_game, methods=["POST"]),
        Route("/api/games/{sid}", get_game, methods=["GET"]),
        Route("/api/games/{sid}", drop, methods=["DELETE"]),
        Route("/api/games/{sid}/move", move, methods=["POST"]),
        Route("/api/games/{sid}/record", record),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(ServedHostsOnly, host=host)],
        # Starlette types every handler as taking any Exception; this one is registered for HTTPException only
        exception_handlers={HTTPException: http_error},  # type: ignore[dict-item]
    )
    app.state.sessions = sessions
    return app


# ---------------------------------------------------------------------- serving
def bind_socket(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port``: connections wait in its backlog from now on,
    so an address printed after this is never refused while the server starts."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(BACKLOG)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def make_server(app):
    """The uvicorn server for ``app``: on stopping, requests still running after
    ``SHUTDOWN_GRACE_S`` are dropped (their bots' threads are daemons: nothing waits)."""
    import uvicorn

    return uvicorn.Server(
        uvicorn.Config(
            app, log_level="warning", lifespan="off", backlog=BACKLOG, timeout_graceful_shutdown=SHUTDOWN_GRACE_S
        )
    )


class ServerThread:
    """The app served by uvicorn in a background thread (tests, screenshots):
    ``with ServerThread(app) as server: server.url``. Port 0 takes a free port."""

    def __init__(self, app, host: str = "127.0.0.1", port: int = 0):
        self.app = app
        self.sock = bind_socket(host, port)
        self.url = url_of(self.sock)
        self.server = make_server(app)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> ServerThread:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the web server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()
        self.app.state.sessions.close_all()  # this process goes on: the bots' threads must stop


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def main(argv=None):
    parser = command_parser("web", __doc__)
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: this machine only); also a Host name the "
        "server answers to, besides localhost, 127.0.0.1 and [::1]",
    )
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 takes a free one)")
    parser.add_argument(
        "--bots",
        action="append",
        metavar="DIR",
        help="folder to list checkpoints and exported bots from, and two levels below "
        "(repeatable; default: checkpoints, bots, runs)",
    )
    parser.add_argument("--max-games", type=int, default=32, help="games held at once (default 32)")
    parser.add_argument(
        "--idle-minutes",
        type=float,
        default=30.0,
        help="a game idle this long may be dropped when the server is full (default 30)",
    )
    parser.add_argument(
        "--move-time-ms",
        type=float,
        default=MOVE_TIME_MS,
        help=f"the longest a search bot thinks about one move (default {MOVE_TIME_MS:g})",
    )
    args = parser.parse_args(argv)
    if (
        not 0 <= args.port <= 65535
        or args.max_games < 1
        or args.idle_minutes < 0
        or not 0 < args.move_time_ms < float("inf")
    ):
        parser.error("need 0 <= --port <= 65535, --max-games >= 1, --idle-minutes >= 0, a finite --move-time-ms > 0")
    app = create_app(
        args.bots or ("checkpoints", "bots", "runs"), args.max_games, args.idle_minutes, args.host, args.move_time_ms
    )
    try:
        server = make_server(app)
    except ImportError:
        parser.exit(1, 'error: the web app needs starlette and uvicorn: pip install -e ".[web]"\n')
    try:
        sock = bind_socket(args.host, args.port)
    except OSError as exc:
        parser.exit(1, f"error: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}\n")
    if not _is_loopback(args.host):
        print(
            f"warning: listening on {args.host}: anyone who reaches it can play, and load any checkpoint on this "
            "machine as a bot",
            file=sys.stderr,
        )
    try:
        print(f"deckgym web app: open {url_of(sock)}  (Ctrl-C stops it)", flush=True)
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
