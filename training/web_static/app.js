// deckgym web app: the setup form and the table. Plain JS, no build step.
// The server holds the game; this page shows what the server sends for the person's seat
// and posts the move texts of the buttons and cards clicked.
"use strict";

const $ = (selector) => document.querySelector(selector);
const SUIT_SYMBOLS = { C: "♣", D: "♦", H: "♥", S: "♠" };
const SUIT_NAMES = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
const RED = new Set(["D", "H"]);

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

// A playing card ("7H", "TS") or a Pairs number card (7).
function cardNode(card, action, extra = {}) {
  let node;
  if (typeof card === "number") {
    node = el(action ? "button" : "span", { class: `card number n${card}`, title: `${card}`, ...extra },
      el("span", { class: "value", text: card }));
  } else {
    const rank = card[0] === "T" ? "10" : card[0];
    const suit = card[1];
    node = el(action ? "button" : "span",
      { class: `card playing ${RED.has(suit) ? "red" : "black"}`, title: card, ...extra },
      el("span", { class: "rank", text: rank }), el("span", { class: "suit", text: SUIT_SYMBOLS[suit] }));
  }
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
  setupSeats();
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
    const other = el("input", { class: "bot-spec", id: `bot-spec-${s}`, placeholder: "agent spec, e.g. checkpoints/craits",
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
  for (const select of document.querySelectorAll("#rules select[data-rule]")) {
    if (select.value !== "") args[select.dataset.rule] = JSON.parse(select.value);
  }
  if (args.partnership === false) delete args.partnership;
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
  const table = $("#table");
  table.dataset.game = view.game;
  table.dataset.gameId = state.id;
  table.dataset.over = state.over ? "1" : "0";
  table.dataset.yourTurn = state.your_turn ? "1" : "0";
  $("#status").textContent = `${state.name} · ${stage(view)} · you are seat ${state.seat}`;
  renderOpponents(view);
  if (view.game === "craits") renderCraitsCenter(view); else renderPairsCenter(view);
  renderMe(view);
  renderSheet(view);
  renderSeen(view);
  renderResult(view);
  if (state.error) $("#move-error").textContent = state.error;
}

function stage(view) {
  if (state.over) return "game over";
  if (view.game === "craits") return `deal ${view.deal}/${view.deals} (${view.hand_size} cards)`;
  if (view.phase === "draft") return `draft, pick ${view.pick}/${view.picks}`;
  if (view.phase === "discard") return "discard";
  return `round ${view.round}/${view.rounds}`;
}

function renderOpponents(view) {
  const box = $("#opponents");
  box.replaceChildren();
  const n = view.num_players;
  for (let k = 1; k < n; k++) {
    const s = (view.seat + k) % n;
    const info = view.seats[s];
    const panel = el("div", { class: `seat${view.to_act === s ? " to-act" : ""}`, "data-seat": s },
      el("div", { class: "seat-name", text: seatLabel(s) }));
    if (view.game === "craits") {
      panel.append(el("div", { class: "seat-cards" }, backs(info.cards), el("span", { class: "count", text: ` ${info.cards}` })));
      const marks = [];
      if (info.announced) marks.push(el("span", { class: "badge warn", text: "last card!" }));
      if (info.loses_turn) marks.push(el("span", { class: "badge", text: "loses next turn" }));
      if (view.dealer === s) marks.push(el("span", { class: "badge", text: "dealer" }));
      if (view.partnership && (view.seat + 2) % 4 === s) marks.push(el("span", { class: "badge", text: "your partner" }));
      panel.append(el("div", { class: "seat-line" }, `score ${info.score}`,
        view.pressure_rule ? ` · pressure ${info.pressure}` : "", " ", ...marks));
    } else {
      panel.append(el("div", { class: "seat-cards" }, backs(info.cards), el("span", { class: "count", text: ` ${info.cards}` })));
      panel.append(takenNode(info));
      const marks = [];
      if (view.start_player === s) marks.push(el("span", { class: "badge", text: view.phase === "play" ? "leads" : "dealer" }));
      if (info.instant_win) marks.push(el("span", { class: "badge win", text: "instant win" }));
      panel.append(el("div", { class: "seat-line" }, `score ${info.score} `, ...marks));
    }
    box.append(panel);
  }
}

function takenNode(info) {
  return el("div", { class: "taken" },
    el("span", { class: "label", text: "face up " }),
    el("span", { class: "cards mini" }, ...info.face_up.map((n) => cardNode(n))),
    el("span", { class: "label", text: ` face down ${info.face_down.length}` }));
}

function renderCraitsCenter(view) {
  const center = $("#center");
  const topSuit = view.top[1];
  const arrow = view.direction === "left" ? "↻ play goes left" : "↺ play goes right";
  const drawLegal = state.legal.some((m) => m.text === "draw");
  const stock = el(drawLegal ? "button" : "div", { class: `stock${drawLegal ? " playable" : ""}`, title: "the stock" },
    backs(Math.min(view.stock, 3)), el("div", { text: `stock ${view.stock}` }));
  if (drawLegal) { stock.type = "button"; stock.dataset.action = "draw"; }
  center.replaceChildren(
    el("div", { class: "pile" }, stock),
    el("div", { class: "pile discard" }, el("div", { class: "pile-label", text: "top card" }), cardNode(view.top, null, { id: "top-card" })),
    el("div", { class: "facts" },
      el("div", { id: "suit", class: `suit-now ${RED.has(view.suit) ? "red" : "black"}` },
        `suit ${SUIT_SYMBOLS[view.suit]} ${SUIT_NAMES[view.suit]}`, view.suit !== topSuit ? " (named)" : ""),
      view.crank ? el("div", { id: "crank", class: "crank", text: `crank ${view.crank}` }) : null,
      el("div", { text: arrow }),
      el("div", { text: `deal ${view.deal}/${view.deals} · dealer seat ${view.dealer}` })));
}

function renderPairsCenter(view) {
  const center = $("#center");
  const parts = [];
  const phaseText = {
    draft: `Draft: pick ${view.pick} of ${view.picks}. Keep a number from your pack; the rest passes left.`,
    discard: "Discard: each seat puts one card out of the game face down.",
    play: `Round ${view.round} of ${view.rounds}: play a number; a pair keeps its cards face up, the highest unpaired card takes the others face down.`,
    over: "The game is over.",
  }[view.phase];
  parts.push(el("p", { class: "phase", text: phaseText }));
  if (view.phase === "play" || view.trick.length) {
    const trick = el("div", { class: "trick", id: "trick" });
    for (const p of view.trick) {
      trick.append(el("div", { class: "played" }, cardNode(p.number), el("div", { class: "who", text: seatLabel(p.seat) + (p.forced ? " (forced: 11)" : "") })));
    }
    if (!view.trick.length) trick.append(el("span", { class: "hint", text: "no card played yet this round" }));
    parts.push(el("div", {}, el("h3", { text: "This round" }), trick));
    if (view.paired.length) parts.push(el("p", { text: `paired this round (not playable): ${view.paired.join(", ")}` }));
  }
  if (view.previous.length) {
    const list = el("ul", { class: "previous" });
    for (const t of view.previous) {
      const where = t.face_up && t.taker === t.seat ? "kept face up" : `face down to seat ${t.taker}`;
      list.append(el("li", {}, `${seatLabel(t.seat)}: ${t.number}${t.forced ? " (forced)" : ""}: ${where}`));
    }
    parts.push(el("div", {}, el("h3", { text: "Last round" }), list));
  }
  center.replaceChildren(...parts);
}

function renderMe(view) {
  const info = view.seats[view.seat];
  const lines = [el("strong", { text: `You · seat ${view.seat}` }), ` · score ${info.score}`];
  if (view.game === "craits") {
    if (info.announced) lines.push(" ", el("span", { class: "badge warn", text: "last card!" }));
    if (info.loses_turn) lines.push(" ", el("span", { class: "badge", text: "you lose your next turn" }));
    if (view.dealer === view.seat) lines.push(" ", el("span", { class: "badge", text: "dealer" }));
  } else {
    lines.push(" ", takenNode(info));
    if (view.discarded !== null) lines.push(el("span", { class: "hint", text: ` you discarded ${view.discarded}` }));
  }
  $("#me").classList.toggle("to-act", state.your_turn);
  $("#me-info").replaceChildren(...lines);
  $("#prompt").textContent = state.over ? "" : (state.your_turn ? state.prompt : "waiting for the bots…");

  // Cards: a legal move that plays a card makes that card (every copy of it) clickable.
  const byCard = new Map();
  for (const move of state.legal) {
    if (move.card !== undefined && !move.unannounced) {
      const key = `${move.zone || "hand"}:${move.card}`;
      if (!byCard.has(key)) byCard.set(key, move.text);
    }
  }
  const cards = (list, zone) => list.map((card) => cardNode(card, byCard.get(`${zone}:${card}`)));
  const hand = $("#hand");
  $("#hand-title").hidden = hand.hidden = state.over && !(view.hand && view.hand.length);
  if (view.hand === null) {
    hand.replaceChildren(el("p", { class: "hint", text: "Your hand stays face down while you name the suit for the upcard." }));
  } else if (view.hand.length === 0) {
    hand.replaceChildren(el("p", { class: "hint", text: "no cards" }));
  } else {
    hand.replaceChildren(...cards(view.hand, "hand"));
  }
  const draft = view.game === "pairs_draft" && view.phase === "draft";
  $("#hand-title").textContent = draft ? "Your picks" : "Your hand";
  $("#pack-box").hidden = !draft;
  $("#pack").replaceChildren(...(draft ? cards(view.pack, "pack") : []));

  // Every legal move as a button too (draw, suits, unannounced plays, and the card plays).
  const moves = $("#moves");
  moves.replaceChildren(...state.legal.map((move) => {
    let label = move.text;
    if (move.suit) label = `${SUIT_SYMBOLS[move.suit]} ${SUIT_NAMES[move.suit]}`;
    return el("button", { type: "button", class: `move${move.suit ? (RED.has(move.suit) ? " red" : " black") : ""}`,
      "data-action": move.text, title: move.text, text: label });
  }));
}

function entryNode(entry, fresh) {
  const item = el("li", { class: `entry kind-${entry.kind}${fresh ? " new" : ""}` });
  if (entry.kind === "move" && entry.seat !== undefined && entry.seat !== state.seat) {
    item.append(el("span", { class: "who", text: state.agents[entry.seat] }), " ");
  }
  if (entry.kind === "deal") {
    // Every hand is shown to all at the end of a deal.
    item.append(entry.text.split(";")[0]);
    const rows = entry.hands.map((hand, seat) => el("tr", {},
      el("td", { text: seat === state.seat ? `seat ${seat} (you)` : `seat ${seat}` }),
      el("td", {}, hand.length ? el("span", { class: "cards mini" }, ...hand.map((c) => cardNode(c))) : "out"),
      el("td", { text: `${entry.points[seat]} point${Math.abs(entry.points[seat]) === 1 ? "" : "s"}` })));
    item.append(el("table", { class: "deal-hands" }, ...rows));
    return item;
  }
  item.append(entry.text);
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

function renderSheet(view) {
  const n = view.num_players;
  const head = el("tr", {}, el("th", { text: "" }), ...Array.from({ length: n }, (_, s) =>
    el("th", { text: s === view.seat ? `you (${s})` : `seat ${s}` })));
  const rows = [head];
  if (view.game === "craits") {
    for (const deal of state.deals) {
      rows.push(el("tr", {}, el("th", { text: `deal ${deal.deal}` }), ...deal.points.map((p) => el("td", { text: p }))));
    }
    rows.push(el("tr", { class: "total" }, el("th", { text: "total" }), ...view.scores.map((p) => el("td", { text: p }))));
    if (view.partnership) {
      const side = (s) => view.sides.find((members) => members.includes(s));
      rows.push(el("tr", { class: "total" }, el("th", { text: "side" }),
        ...view.scores.map((_, s) => el("td", { text: side(s).reduce((t, m) => t + view.scores[m], 0) }))));
    }
  } else {
    rows.push(el("tr", {}, el("th", { text: "face up" }), ...view.seats.map((i) => el("td", { text: i.face_up.join(" ") || "–" }))));
    rows.push(el("tr", {}, el("th", { text: "face down" }), ...view.seats.map((i) => el("td", { text: i.face_down.length }))));
    rows.push(el("tr", { class: "total" }, el("th", { text: "points" }), ...view.seats.map((i) => el("td", { text: i.score + (i.instant_win ? " ★" : "") }))));
  }
  $("#sheet").replaceChildren(el("table", { class: "sheet" }, ...rows),
    el("p", { class: "hint", text: view.lower_wins ? "lowest total wins" : "highest points win (10 numbers or 5 copies face up win at once)" }));
}

function renderSeen(view) {
  const box = $("#seen");
  if (view.game === "craits") {
    const order = (c) => "A23456789TJQK".indexOf(c[0]) * 4 + "CDHS".indexOf(c[1]);
    const pile = view.discard.slice().sort((a, b) => order(a) - order(b));
    box.replaceChildren(el("p", { class: "hint", text: `the discard pile since the stock was last formed (${pile.length} cards):` }),
      el("div", { class: "cards mini" }, ...pile.map((c) => cardNode(c))));
  } else {
    const head = el("tr", {}, el("th", { text: "number" }), ...Array.from({ length: 10 }, (_, i) => el("th", { text: i + 1 })));
    const played = el("tr", {}, el("th", { text: "played" }), ...view.played.map((c) => el("td", { text: c || "" })));
    const unseen = el("tr", {}, el("th", { text: "elsewhere" }), ...view.unseen.map((c) => el("td", { text: c || "" })));
    box.replaceChildren(el("table", { class: "sheet seen" }, head, played, unseen),
      el("p", { class: "hint", text: "elsewhere: copies not in your cards, your discard or play (in other hands, discards, packs or set aside)" }));
  }
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
