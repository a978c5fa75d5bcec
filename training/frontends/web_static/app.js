// deckgym web app: the setup form and the table. Plain JS, no build step.
// The server holds the game; this page shows what the server sends for the person's seat
// and posts the move texts of the buttons and cards clicked.
//
// What a table looks like is the game's: its folder's web.js (served in /games.js, loaded
// before this file) registers a function that, given the page's helpers (`page` below),
// returns the game's drawing hooks:
//
//   window.deckgymGames[envId] = (page) => ({ stage, opponent, center, me, card, ... });
//
//   stage(view)            the header's words for where the game is (not called once over)
//   opponent(view, seat)   nodes under another seat's name
//   center(view, state)    nodes in the middle of the table
//   me(view)               nodes after "You · seat N"
//   card(card, action)     a card's node (page.card makes one); without it no card is drawn
//   clicksCard(move)       whether clicking move.card (in move.zone, "hand" if none) plays the move
//   hiddenHand             the words shown while view.hand is null
//   pack(view)             null, or {cards, handTitle}: cards to pick from (zone "pack")
//   moveButton(move)       {text, class} of a legal move's button
//   entry(entry, state)    nodes for a log entry the game draws itself, or null (its text)
//   sheet(view, state)     {rows, hint}: the score sheet's rows under its head, a note
//   seen(view)             nodes under "Cards seen" (none: the part is hidden)
//
// A hook a game leaves out is TEXT_TABLE's: a game without a web.js is shown as the
// terminal shows it (the state's `text`), its legal moves as buttons.
"use strict";

const $ = (selector) => document.querySelector(selector);

let options = null; // GET /api/options
let state = null; // the last game state
let gameId = null;
let logSize = 0;
let busy = false;
let refreshTimer = null;

// ------------------------------------------------------------------ helpers
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("data-")) node.setAttribute(key, value);
    else if (key in node) node[key] = value;
    else node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

async function api(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  let data;
  try {
    data = await response.json();
  } catch {
    data = { error: `HTTP ${response.status}` };
  }
  if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
  return data;
}

function setBusy(on) {
  busy = on;
  document.body.dataset.busy = on ? "1" : "0";
}

function seatLabel(seat) {
  if (!state) return `seat ${seat}`;
  return seat === state.seat ? `seat ${seat} (you)` : `seat ${seat} · ${state.agents[seat]}`;
}

// A card: a button playing `action` when given (raised and outlined), else a plain face.
function cardNode(card, action, attrs, ...children) {
  const node = el(action ? "button" : "span", attrs, ...children);
  node.dataset.card = card;
  if (action) {
    node.type = "button";
    node.dataset.action = action;
    node.classList.add("playable");
  }
  return node;
}

function backs(count) {
  const box = el("span", { class: "backs", title: `${count} cards` });
  for (let i = 0; i < Math.min(count, 12); i++) box.append(el("span", { class: "back" }));
  if (count > 12) box.append(el("span", { class: "more", text: `+${count - 12}` }));
  return box;
}

// ---------------------------------------------------------------- the games
const page = { el, backs, seatLabel, card: cardNode }; // what a game's web.js draws with

// A game without a web.js: its view as the terminal's lines, the scores, the moves as buttons.
const TEXT_TABLE = {
  stage: () => "in play",
  opponent: (view, seat) => [el("div", { class: "seat-line", text: `score ${view.scores[seat]}` })],
  center: (view, state) => [el("pre", { class: "table-text", id: "table-text", text: (state.text || []).join("\n") })],
  me: (view) => [` · score ${view.scores[view.seat]}`],
  card: null,
  clicksCard: (move) => move.card !== undefined,
  hiddenHand: "Your hand is hidden now.",
  pack: () => null,
  moveButton: (move) => ({ text: move.text, class: "" }),
  entry: () => null,
  sheet: (view) => ({
    rows: [el("tr", { class: "total" }, el("th", { text: "total" }), ...view.scores.map((p) => el("td", { text: p })))],
    hint: view.lower_wins ? "lowest total wins" : "highest score wins",
  }),
  seen: () => [],
};

const tables = {}; // env id -> the game's hooks
function table() {
  const id = state.env;
  if (!tables[id]) {
    const make = (window.deckgymGames || {})[id];
    tables[id] = { ...TEXT_TABLE, ...(make ? make(page) : {}) };
  }
  return tables[id];
}

// ------------------------------------------------------------------- setup
function currentGame() {
  return options.games.find((g) => g.id === $("#env").value);
}

function buildSetup() {
  const env = $("#env");
  env.replaceChildren(...options.games.map((g) => el("option", { value: g.id, text: g.name })));
  $("#spec-hint").textContent = `"other…" takes any agent spec: ${options.agent_specs}.`;
  env.addEventListener("change", setupGame);
  $("#players").addEventListener("change", setupSeats);
  $("#your-seat").addEventListener("change", setupBots);
  $("#deals").addEventListener("change", () => { $("#deals-custom-label").hidden = $("#deals").value !== "custom"; });
  $("#setup-form").addEventListener("submit", (event) => { event.preventDefault(); startGame(); });
  setupGame();
}

function setupGame() {
  const game = currentGame();
  const players = $("#players");
  const counts = [];
  for (let n = game.players.min; n <= game.players.max; n++) counts.push(n);
  players.replaceChildren(...counts.map((n) => el("option", { value: n, text: n, selected: n === game.players.default })));
  $("#players-label").hidden = counts.length === 1;
  const rules = $("#rules");
  rules.replaceChildren();
  for (const rule of game.rules) {
    const select = el("select", { id: `rule-${rule.name}`, "data-rule": rule.name });
    if (rule.default === null) select.append(el("option", { value: "", text: "as the preset" }));
    for (const choice of rule.choices) {
      select.append(el("option", { value: JSON.stringify(choice), text: String(choice),
        selected: choice === rule.default }));
    }
    rules.append(el("label", {}, rule.name.replaceAll("_", " "), " ", select));
  }
  $("#rules-box").hidden = game.rules.length === 0 && !game.deals;
  $("#deals-box").hidden = !game.deals;
  if (game.deals) {
    const deals = $("#deals");
    deals.replaceChildren(...Object.entries(game.deals.presets).map(([name, sizes]) =>
      el("option", { value: name, text: `${name} game (${sizes.length} deals: ${outline(sizes)} cards)`,
        selected: name === game.deals.default })),
    el("option", { value: "custom", text: "hand sizes of my choice" }));
    $("#deals-custom-label").hidden = true;
  }
  setupSeats();
}

// Hand sizes by their turning points: 8 7 … 1 2 … 8 -> "8 … 1 … 8".
function outline(sizes) {
  const points = sizes.filter((size, i) => i === 0 || i === sizes.length - 1
    || (size - sizes[i - 1]) * (sizes[i + 1] - size) < 0);
  return points.join(" … ");
}

function setupSeats() {
  const n = Number($("#players").value);
  const seat = $("#your-seat");
  const old = Number(seat.value) || 0;
  seat.replaceChildren(...Array.from({ length: n }, (_, s) => el("option", { value: s, text: `seat ${s}`, selected: s === old })));
  setupBots();
}

function setupBots() {
  const game = currentGame();
  const n = Number($("#players").value);
  const mine = Number($("#your-seat").value);
  const bots = options.bots.filter((b) => b.env === null || b.env === game.id);
  const box = $("#bots");
  const previous = {};
  for (const select of box.querySelectorAll("select[data-seat]")) previous[select.dataset.seat] = select.value;
  box.replaceChildren();
  for (let s = 0; s < n; s++) {
    if (s === mine) continue;
    const select = el("select", { class: "bot", "data-seat": s, id: `bot-${s}` },
      ...bots.map((b) => el("option", { value: b.spec, text: b.label })),
      el("option", { value: "__other__", text: "other…" }));
    select.value = previous[s] && [...select.options].some((o) => o.value === previous[s]) ? previous[s] : "heuristic";
    const other = el("input", { class: "bot-spec", id: `bot-spec-${s}`, placeholder: "agent spec, e.g. a checkpoint folder",
      size: 28, hidden: select.value !== "__other__" });
    select.addEventListener("change", () => { other.hidden = select.value !== "__other__"; });
    box.append(el("div", { class: "bot-row" }, el("label", {}, `seat ${s} `, select), " ", other));
  }
}

function setupPayload() {
  const game = currentGame();
  const n = Number($("#players").value);
  const mine = Number($("#your-seat").value);
  const args = {};
  if (game.players.min !== game.players.max) args.num_players = n;
  for (const rule of game.rules) {
    const value = $(`#rule-${rule.name}`).value;
    if (value === "") continue; // as the preset
    const chosen = JSON.parse(value);
    if (!(chosen === false && rule.default === false)) args[rule.name] = chosen; // a flag left off is no argument
  }
  if (game.deals) {
    const deals = $("#deals").value;
    if (deals === "custom") {
      const sizes = $("#deals-custom").value.split(/[\s,]+/).filter(Boolean).map(Number);
      if (!sizes.length || sizes.some((x) => !Number.isInteger(x))) throw new Error("hand sizes: whole numbers, e.g. 3 or 8 7 6");
      args.deals = sizes;
    } else if (deals !== game.deals.default) {
      args.deals = deals;
    }
  }
  const agents = [];
  for (let s = 0; s < n; s++) {
    if (s === mine) { agents.push("human"); continue; }
    const value = $(`#bot-${s}`).value;
    agents.push(value === "__other__" ? $(`#bot-spec-${s}`).value.trim() : value);
  }
  const payload = { env: game.id, args, agents };
  const seed = $("#seed").value.trim();
  if (seed !== "") payload.seed = Number(seed);
  return payload;
}

async function startGame() {
  if (busy) return;
  $("#setup-error").textContent = "";
  let payload;
  try {
    payload = setupPayload();
  } catch (error) {
    $("#setup-error").textContent = error.message;
    return;
  }
  setBusy(true);
  try {
    const data = await api("POST", "/api/games", payload);
    enterGame(data);
  } catch (error) {
    $("#setup-error").textContent = error.message;
  } finally {
    setBusy(false);
  }
}

function showSetup() {
  gameId = null;
  state = null;
  if (location.hash) history.replaceState(null, "", location.pathname);
  $("#table").hidden = true;
  $("#setup").hidden = false;
  $("#new-game").hidden = true;
  $("#status").textContent = "pick a game, its rules and the bots";
}

// ------------------------------------------------------------------- table
function enterGame(data) {
  gameId = data.id;
  logSize = 0;
  $("#log").replaceChildren();
  history.replaceState(null, "", `#game=${encodeURIComponent(gameId)}`);
  $("#setup").hidden = true;
  $("#table").hidden = false;
  $("#new-game").hidden = false;
  update(data, true);
}

async function loadGame(id) {
  setBusy(true);
  try {
    gameId = id;
    const data = await api("GET", `/api/games/${encodeURIComponent(id)}?since=0`);
    enterGame(data);
  } catch (error) {
    showSetup();
    $("#setup-error").textContent = `${error.message}: start a new game`;
  } finally {
    setBusy(false);
  }
}

async function play(action) {
  if (busy || !state || !state.your_turn) return;
  setBusy(true);
  $("#move-error").textContent = "";
  try {
    const data = await api("POST", `/api/games/${encodeURIComponent(gameId)}/move`, { action, since: logSize });
    update(data, false);
  } catch (error) {
    $("#move-error").textContent = error.message;
  } finally {
    setBusy(false);
  }
}

function update(data, fresh) {
  state = data;
  const entries = data.log;
  logSize = data.log_size;
  appendLog(entries, fresh);
  showRecent(fresh ? entries.slice(-8) : entries);
  render();
  // A bot still thinking (the page was reloaded while the bots moved): ask again shortly.
  clearTimeout(refreshTimer);
  if (state.thinking !== null) refreshTimer = setTimeout(refresh, 1000);
}

async function refresh() {
  if (busy || !gameId) return;
  const id = gameId;
  try {
    const data = await api("GET", `/api/games/${encodeURIComponent(id)}?since=${logSize}`);
    if (id === gameId && !busy) update(data, false);
  } catch (error) {
    $("#move-error").textContent = error.message;
  }
}

function render() {
  const view = state.view;
  const game = table();
  const board = $("#table");
  board.dataset.game = view.game;
  board.dataset.gameId = state.id;
  board.dataset.over = state.over ? "1" : "0";
  board.dataset.yourTurn = state.your_turn ? "1" : "0";
  $("#status").textContent = `${state.name} · ${state.over ? "game over" : game.stage(view)} · you are seat ${state.seat}`;
  renderOpponents(view, game);
  $("#center").replaceChildren(...game.center(view, state));
  renderMe(view, game);
  renderSheet(view, game);
  renderSeen(view, game);
  renderResult(view);
  if (state.error) $("#move-error").textContent = state.error;
}

function renderOpponents(view, game) {
  const box = $("#opponents");
  box.replaceChildren();
  const n = view.num_players;
  for (let k = 1; k < n; k++) {
    const s = (view.seat + k) % n;
    box.append(el("div", { class: `seat${view.to_act === s ? " to-act" : ""}`, "data-seat": s },
      el("div", { class: "seat-name", text: seatLabel(s) }), ...game.opponent(view, s)));
  }
}

function renderMe(view, game) {
  $("#me").classList.toggle("to-act", state.your_turn);
  $("#me-info").replaceChildren(el("strong", { text: `You · seat ${view.seat}` }), ...game.me(view));
  $("#prompt").textContent = state.over ? "" : (state.your_turn ? state.prompt : "waiting for the bots…");

  // Cards: a legal move that plays a card makes that card (every copy of it) clickable.
  const byCard = new Map();
  for (const move of state.legal) {
    if (game.clicksCard(move)) {
      const key = `${move.zone || "hand"}:${move.card}`;
      if (!byCard.has(key)) byCard.set(key, move.text);
    }
  }
  const cards = (list, zone) => list.map((card) => game.card(card, byCard.get(`${zone}:${card}`)));
  const hand = $("#hand");
  $("#hand-title").hidden = hand.hidden = !game.card || (state.over && !(view.hand && view.hand.length));
  if (!game.card) {
    hand.replaceChildren();
  } else if (view.hand === null) {
    hand.replaceChildren(el("p", { class: "hint", text: game.hiddenHand }));
  } else if (view.hand.length === 0) {
    hand.replaceChildren(el("p", { class: "hint", text: "no cards" }));
  } else {
    hand.replaceChildren(...cards(view.hand, "hand"));
  }
  const pack = game.card ? game.pack(view) : null;
  $("#hand-title").textContent = pack ? pack.handTitle : "Your hand";
  $("#pack-box").hidden = !pack;
  $("#pack").replaceChildren(...(pack ? cards(pack.cards, "pack") : []));

  // Every legal move as a button too (those no card plays, and the card plays).
  $("#moves").replaceChildren(...state.legal.map((move) => {
    const button = game.moveButton(move);
    return el("button", { type: "button", class: `move${button.class ? ` ${button.class}` : ""}`,
      "data-action": move.text, title: move.text, text: button.text });
  }));
}

function entryNode(entry, fresh) {
  const item = el("li", { class: `entry kind-${entry.kind}${fresh ? " new" : ""}` });
  if (entry.kind === "move" && entry.seat !== undefined && entry.seat !== state.seat) {
    item.append(el("span", { class: "who", text: state.agents[entry.seat] }), " ");
  }
  item.append(...(table().entry(entry, state) || [entry.text]));
  return item;
}

function appendLog(entries, fresh) {
  const log = $("#log");
  for (const node of log.querySelectorAll(".new")) node.classList.remove("new");
  for (const entry of entries) log.append(entryNode(entry, !fresh));
  log.scrollTop = log.scrollHeight;
}

function showRecent(entries) {
  const box = $("#recent");
  const list = el("ol", { id: "recent-list" }, ...entries.map((e) => entryNode(e, false)));
  box.replaceChildren(el("h3", { text: "Since your last move" }), list);
  box.hidden = entries.length === 0;
}

function renderSheet(view, game) {
  const n = view.num_players;
  const head = el("tr", {}, el("th", { text: "" }), ...Array.from({ length: n }, (_, s) =>
    el("th", { text: s === view.seat ? `you (${s})` : `seat ${s}` })));
  const sheet = game.sheet(view, state);
  $("#sheet").replaceChildren(el("table", { class: "sheet" }, head, ...sheet.rows),
    el("p", { class: "hint", text: sheet.hint }));
}

function renderSeen(view, game) {
  const seen = game.seen(view);
  $("#seen-title").hidden = $("#seen").hidden = seen.length === 0;
  $("#seen").replaceChildren(...seen);
}

function renderResult(view) {
  const box = $("#result");
  box.hidden = !state.over;
  if (!state.over) return;
  const result = state.result;
  $("#result-title").textContent = result.truncated ? "Game over (cut short: no winner)" : "Game over";
  const rows = [el("tr", {}, el("th", { text: "seat" }), el("th", { text: "player" }), el("th", { text: "score" }), el("th", { text: "" }))];
  const order = result.scores.map((score, seat) => ({ score, seat }));
  order.sort((a, b) => (view.lower_wins ? a.score - b.score : b.score - a.score));
  for (const { seat, score } of order) {
    const wins = result.winners && result.winners.includes(seat);
    rows.push(el("tr", { class: wins ? "winner" : "", "data-seat": seat, "data-score": score },
      el("td", { text: seat }), el("td", { text: seat === state.seat ? "you" : state.agents[seat] }),
      el("td", { class: "score", text: score }), el("td", { text: wins ? "wins" : "" })));
  }
  $("#final-scores").replaceChildren(...rows);
  $("#download").href = state.record;
}

// ------------------------------------------------------------------- start
document.addEventListener("click", (event) => {
  const target = event.target.closest("[data-action]");
  if (target && !target.disabled) play(target.dataset.action);
});
$("#new-game").addEventListener("click", showSetup);
$("#again").addEventListener("click", showSetup);

async function main() {
  try {
    options = await api("GET", "/api/options");
  } catch (error) {
    $("#status").textContent = `cannot reach the server: ${error.message}`;
    return;
  }
  buildSetup();
  const match = location.hash.match(/^#game=(.+)$/);
  if (match) await loadGame(decodeURIComponent(match[1]));
  else showSetup();
  setBusy(false);
}

main();
