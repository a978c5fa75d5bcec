"""Play against the bots in the browser: a small local web app.

    python -m training.web                       # serves http://127.0.0.1:8000/
    python -m training.web --port 8080 --bots bots --bots runs

A person picks a game, its rules, their seat and a bot for each other seat (``random``,
``heuristic``, a checkpoint or exported bot found under ``--bots`` folders, or any agent
spec ``make_agent`` takes), then plays by clicking cards. The bots move on the server until
it is the person's turn. The page is plain HTML, JS and CSS in ``training/web_static``
(no build step).

Each game is a *session* under a random id, held in memory (at most ``--max-games``; one
idle for ``--idle-minutes`` is dropped when room is needed). The page keeps the id in its
address (``/#game=ID``), so each tab plays its own game and a reload resumes it. Every
answer holds only what the person's seat may see (``training.human.seat_view``): their own
cards, the public table, the legal moves as text, the moves so far as that seat knows them
(another seat's draft pick shows as "picks a card"), the hands at the end of a Craits deal
(shown to all then), and the scores.

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
=====================================  ==================================================

The record is a ``training.records`` game record, its header also naming the person's seat
(``human_seat``); ``python -m training.replay`` checks and shows it.
"""
from __future__ import annotations

import argparse
import functools
import ipaddress
import json
import secrets
import socket
import sys
import threading
import time
import traceback
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from envs.engine import clipped, shown

from .agents import AGENT_SPECS, IllegalMoveError, checked_act, make_agent
from .games import GAMES, EnvHandle
from .human import Narrator, legal_moves, prompt, seat_view
from .records import header_of, record_text, result_of

STATIC = Path(__file__).with_name("web_static")
HUMAN = "human"
GAME_NAMES = {"craits_v0": "Craits", "pairs_draft_v0": "Pairs Draft"}
MAX_BODY = 64 * 1024  # bytes of a request body
MAX_SPEC = 500  # characters of an agent spec
MAX_SEED = 2 ** 53 - 1  # exact in JavaScript
MAX_BOTS_LISTED = 200
MAX_META_BYTES = 1 << 20


class ApiError(Exception):
    """A request the server refuses: ``status`` and a message naming the problem."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


# ---------------------------------------------------------------------- sessions
class Session:
    """One game: the env, an agent per bot seat, the person's seat, the log as that seat
    sees it and the actions for the record. Use it under ``lock``."""

    def __init__(self, sid: str, env_id: str, env_args: dict, specs: list[str], seed: int):
        self.id, self.specs, self.seed = sid, specs, seed
        try:
            self.env = EnvHandle(env_id, env_args)
        except (ValueError, TypeError) as exc:
            raise ApiError(400, f"args: {exc}") from None
        if len(specs) != self.env.seats:
            raise ApiError(400, f"agents: {len(specs)} given for {self.env.seats} seats: give one per seat "
                                f"(\"human\" for yours)")
        if specs.count(HUMAN) != 1:
            raise ApiError(400, f"agents: name \"human\" for exactly one seat (yours), not {specs.count(HUMAN)}")
        self.seat = specs.index(HUMAN)
        self.agents = []
        for seat, spec in enumerate(specs):
            if spec == HUMAN:
                self.agents.append(None)
                continue
            try:
                self.agents.append(make_agent(spec, self.env, seed=seed + seat))
            except Exception as exc:  # a bad spec, a checkpoint for other rules, a missing runtime
                raise ApiError(400, f"agents: seat {seat} ({shown(spec)}): {clipped(str(exc), 600)}") from None
        self.raw = self.env.raw
        self.raw.reset(seed=seed)
        for agent in self.agents:
            if agent is not None:
                agent.reset()
        self.narrator = Narrator(self.seat)
        self.log = self.narrator.start(self.raw.game)
        self.moves: list[dict] = []
        self.over = self.cut = False
        self.error: str | None = None
        self.lock = threading.Lock()
        self.touched = time.monotonic()
        self.advance()

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

    def state(self, since: int = 0) -> dict:
        if not 0 <= since <= len(self.log):
            raise ApiError(400, f"since={since}: the log has {len(self.log)} entries")
        game = self.game
        over = self.over
        return {
            "id": self.id,
            "env": self.env.id,
            "name": GAME_NAMES.get(self.env.id, self.env.id),
            "args": self.env.args,
            "rule_args": self.env.rule_args,
            "seed": self.seed if over else None,  # with the seed every hand could be worked out
            "seat": self.seat,
            "agents": self.specs,
            "over": over,
            "error": self.error,
            "your_turn": not over and not self.error and game.current_player == self.seat,
            "legal": [] if over or self.error else legal_moves(game, self.seat),
            "prompt": "" if over else prompt(game, self.seat),
            "view": seat_view(game, self.seat),
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
    """The games in progress, at most ``limit``; when full, the one idle longest goes if it
    has been idle ``idle_s`` seconds, else a new game is refused (503)."""

    def __init__(self, limit: int = 32, idle_s: float = 1800.0):
        self.limit, self.idle_s = limit, idle_s
        self._items: dict[str, Session] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def _make_room(self) -> None:
        if len(self._items) < self.limit:
            return
        now = time.monotonic()
        oldest = min(self._items.values(), key=lambda s: s.touched)
        if now - oldest.touched < self.idle_s:
            raise ApiError(503, f"{self.limit} games are in progress, the most this server holds: finish or close "
                                "one (or wait until one has been idle a while)")
        del self._items[oldest.id]

    def add(self, make) -> Session:
        with self._lock:
            self._make_room()
            sid = secrets.token_urlsafe(12)
        session = make(sid)  # outside the lock: the bots may move first
        with self._lock:
            self._make_room()
            self._items[sid] = session
        return session

    def get(self, sid: str) -> Session:
        session = self._items.get(sid)
        if session is None:
            raise ApiError(404, f"no game {shown(sid)}: it ended, was dropped after being idle, or never existed")
        session.touched = time.monotonic()
        return session

    def remove(self, sid: str) -> None:
        with self._lock:
            if self._items.pop(sid, None) is None:
                raise ApiError(404, f"no game {shown(sid)}")


# --------------------------------------------------------------------- the options
def game_options() -> list[dict]:
    """Each game's seats and rule options, for the setup form."""
    from envs.craits.rules import CHOICES, DEAL_SIZES, PRESETS
    craits_rules = [{"name": "preset", "choices": list(PRESETS), "default": "craits"}]
    craits_rules += [{"name": name, "choices": list(choices), "default": None} for name, choices in CHOICES.items()]
    craits_rules.append({"name": "partnership", "choices": [False, True], "default": False})
    return [
        {"id": "craits_v0", "name": "Craits", "players": {"min": 2, "max": 5, "default": 4}, "lower_wins": True,
         "rules": craits_rules, "presets": PRESETS,
         "deals": {"presets": {k: list(v) for k, v in DEAL_SIZES.items()}, "default": "full"}},
        {"id": "pairs_draft_v0", "name": "Pairs Draft", "players": {"min": 4, "max": 4, "default": 4},
         "lower_wins": False, "rules": [], "presets": {}, "deals": None},
    ]


def _read_meta(file: Path) -> dict | None:
    try:
        if file.stat().st_size > MAX_META_BYTES:
            return None
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def find_bots(roots) -> list[dict]:
    """Checkpoint folders (meta.json + policy.npz) and exported bots (bot.json + model.onnx)
    in ``roots`` and up to two folder levels below: ``{"spec", "kind", "env", "label"}``."""
    found = []
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
            elif (folder / "meta.json").is_file() and (folder / "policy.npz").is_file():
                kind, meta, spec = "checkpoint", _read_meta(folder / "meta.json"), folder.as_posix()
            else:
                continue
            if meta is None or meta.get("env_id") not in GAMES:
                continue
            found.append({"spec": spec, "kind": kind, "env": meta["env_id"], "label": f"{spec} ({kind})"})
            if len(found) >= MAX_BOTS_LISTED:
                return found
    return found


# ------------------------------------------------------------------------ the app
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


def create_app(bot_roots=("checkpoints", "bots", "runs"), max_games: int = 32, idle_minutes: float = 30.0) -> Starlette:
    """The web app; ``app.state.sessions`` holds the games (``Sessions``)."""
    sessions = Sessions(max_games, idle_minutes * 60)
    roots = list(bot_roots)

    async def index(request: Request):
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    @api
    async def options(request: Request):
        bots = [{"spec": "random", "kind": "builtin", "env": None, "label": "random (any legal move)"},
                {"spec": "heuristic", "kind": "builtin", "env": None, "label": "heuristic (rule-based)"}]
        bots += await run_in_threadpool(find_bots, roots)
        return JSONResponse({"games": game_options(), "bots": bots, "agent_specs": AGENT_SPECS})

    @api
    async def new_game(request: Request):
        data = await read_json(request, {"env": True, "args": False, "agents": True, "seed": False})
        env_id = data["env"]
        if env_id not in GAMES:
            raise ApiError(400, f"env: {shown(env_id)} is not a game here; choose one of {', '.join(GAMES)}")
        args = data.get("args") or {}
        if not isinstance(args, dict):
            raise ApiError(400, f"args: a JSON object of env arguments, not {type(args).__name__}")
        if "render_mode" in args:
            raise ApiError(400, "args: render_mode is not for the web app (the page shows the table)")
        agents = data["agents"]
        if not isinstance(agents, list) or not all(isinstance(a, str) and a.strip() for a in agents):
            raise ApiError(400, "agents: a list of agent specs, one per seat in seat order, \"human\" for yours")
        agents = [a.strip() for a in agents]
        if any(len(a) > MAX_SPEC for a in agents):
            raise ApiError(400, f"agents: a spec is at most {MAX_SPEC} characters")
        seed = data.get("seed")
        seed = secrets.randbelow(2 ** 31) if seed is None else _integer(seed, "seed", 0, MAX_SEED)
        def start():
            session = sessions.add(lambda sid: Session(sid, env_id, args, agents, seed))
            with session.lock:
                return session.state()
        return JSONResponse(await run_in_threadpool(start), status_code=201)

    @api
    async def get_game(request: Request):
        session = sessions.get(request.path_params["sid"])
        since = _since(request)

        def state():
            with session.lock:
                return session.state(since)
        return JSONResponse(await run_in_threadpool(state))

    @api
    async def move(request: Request):
        session = sessions.get(request.path_params["sid"])
        data = await read_json(request, {"action": True, "since": False})
        since = data.get("since", 0)
        _integer(since, "since", 0, 10 ** 12)

        def play():
            with session.lock:
                session.play(data["action"])
                return session.state(since)
        return JSONResponse(await run_in_threadpool(play))

    @api
    async def record(request: Request):
        session = sessions.get(request.path_params["sid"])

        def read():
            with session.lock:
                return session.record()
        text = await run_in_threadpool(read)
        name = f"deckgym-{session.env.id}-seed{session.seed}.jsonl"
        return Response(text, media_type="application/x-ndjson",
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})

    @api
    async def drop(request: Request):
        sessions.remove(request.path_params["sid"])
        return JSONResponse({"dropped": request.path_params["sid"]})

    async def http_error(request: Request, exc: HTTPException):
        return _json_error(exc.status_code, f"{request.method} {request.url.path}: {exc.detail}")

    routes = [
        Route("/", index),
        Route("/api/options", options),
        Route("/api/games", new_game, methods=["POST"]),
        Route("/api/games/{sid}", get_game, methods=["GET"]),
        Route("/api/games/{sid}", drop, methods=["DELETE"]),
        Route("/api/games/{sid}/move", move, methods=["POST"]),
        Route("/api/games/{sid}/record", record),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={HTTPException: http_error})
    app.state.sessions = sessions
    return app


# ---------------------------------------------------------------------- serving
def bind_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


class ServerThread:
    """The app served by uvicorn in a background thread (tests, screenshots):
    ``with ServerThread(app) as server: server.url``. Port 0 takes a free port."""

    def __init__(self, app, host: str = "127.0.0.1", port: int = 0):
        import uvicorn
        self.sock = bind_socket(host, port)
        self.url = url_of(self.sock)
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> "ServerThread":
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


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m training.web", description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 takes a free one)")
    parser.add_argument("--bots", action="append", metavar="DIR",
                        help="folder to list checkpoints and exported bots from, and two levels below "
                             "(repeatable; default: checkpoints, bots, runs)")
    parser.add_argument("--max-games", type=int, default=32, help="games held at once (default 32)")
    parser.add_argument("--idle-minutes", type=float, default=30.0,
                        help="a game idle this long may be dropped when the server is full (default 30)")
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535 or args.max_games < 1 or args.idle_minutes < 0:
        parser.error("need 0 <= --port <= 65535, --max-games >= 1, --idle-minutes >= 0")
    try:
        import uvicorn
    except ImportError:
        parser.exit(1, "error: the web app needs starlette and uvicorn: pip install -e \".[web]\"\n")
    try:
        sock = bind_socket(args.host, args.port)
    except OSError as exc:
        parser.exit(1, f"error: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}\n")
    app = create_app(args.bots or ("checkpoints", "bots", "runs"), args.max_games, args.idle_minutes)
    if not _is_loopback(args.host):
        print(f"warning: listening on {args.host}: anyone who reaches it can play, and load any folder on this "
              "machine as a bot", file=sys.stderr)
    print(f"deckgym web app: open {url_of(sock)}  (Ctrl-C stops it)", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
