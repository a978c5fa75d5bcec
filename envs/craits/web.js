// Craits on the web page: how its table is drawn (the hooks are listed in
// training/frontends/web_static/app.js; `view` is envs/craits/present.py's seat_view).
(window.deckgymGames = window.deckgymGames || {}).craits_v0 = function craitsTable(page) {
  "use strict";
  const { el, backs } = page;
  const SUIT_SYMBOLS = { C: "♣", D: "♦", H: "♥", S: "♠" };
  const SUIT_NAMES = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
  const RED = new Set(["D", "H"]);

  // A playing card: "7H", "TS".
  function card(text, action, extra = {}) {
    const rank = text[0] === "T" ? "10" : text[0];
    const suit = text[1];
    return page.card(text, action, { class: `card playing ${RED.has(suit) ? "red" : "black"}`, title: text, ...extra },
      el("span", { class: "rank", text: rank }), el("span", { class: "suit", text: SUIT_SYMBOLS[suit] }));
  }

  return {
    card,
    clicksCard: (move) => move.card !== undefined && !move.unannounced, // the unannounced play: a button only
    hiddenHand: "Your hand stays face down while you name the suit for the upcard.",

    stage: (view) => `deal ${view.deal}/${view.deals} (${view.hand_size} cards)`,

    opponent(view, s) {
      const info = view.seats[s];
      const marks = [];
      if (info.announced) marks.push(el("span", { class: "badge warn", text: "last card!" }));
      if (info.loses_turn) marks.push(el("span", { class: "badge", text: "loses next turn" }));
      if (view.dealer === s) marks.push(el("span", { class: "badge", text: "dealer" }));
      if (view.partnership && (view.seat + 2) % 4 === s) marks.push(el("span", { class: "badge", text: "your partner" }));
      return [
        el("div", { class: "seat-cards" }, backs(info.cards), el("span", { class: "count", text: ` ${info.cards}` })),
        el("div", { class: "seat-line" }, `score ${info.score}`,
          view.pressure_rule ? ` · pressure ${info.pressure}` : "", " ", ...marks),
      ];
    },

    center(view, state) {
      const topSuit = view.top[1];
      const arrow = view.direction === "left" ? "↻ play goes left" : "↺ play goes right";
      const drawLegal = state.legal.some((m) => m.text === "draw");
      const stock = el(drawLegal ? "button" : "div", { class: `stock${drawLegal ? " playable" : ""}`, title: "the stock" },
        backs(Math.min(view.stock, 3)), el("div", { text: `stock ${view.stock}` }));
      if (drawLegal) { stock.type = "button"; stock.dataset.action = "draw"; }
      return [
        el("div", { class: "pile" }, stock),
        el("div", { class: "pile discard" }, el("div", { class: "pile-label", text: "top card" }), card(view.top, null, { id: "top-card" })),
        el("div", { class: "facts" },
          el("div", { id: "suit", class: `suit-now ${RED.has(view.suit) ? "red" : "black"}` },
            `suit ${SUIT_SYMBOLS[view.suit]} ${SUIT_NAMES[view.suit]}`, view.suit !== topSuit ? " (named)" : ""),
          view.crank ? el("div", { id: "crank", class: "crank", text: `crank ${view.crank}` }) : null,
          el("div", { text: arrow }),
          el("div", { text: `deal ${view.deal}/${view.deals} · dealer seat ${view.dealer}` })),
      ];
    },

    me(view) {
      const info = view.seats[view.seat];
      const lines = [` · score ${info.score}`];
      if (info.announced) lines.push(" ", el("span", { class: "badge warn", text: "last card!" }));
      if (info.loses_turn) lines.push(" ", el("span", { class: "badge", text: "you lose your next turn" }));
      if (view.dealer === view.seat) lines.push(" ", el("span", { class: "badge", text: "dealer" }));
      return lines;
    },

    pack: () => null,

    moveButton(move) {
      if (!move.suit) return { text: move.text, class: "" };
      return { text: `${SUIT_SYMBOLS[move.suit]} ${SUIT_NAMES[move.suit]}`, class: RED.has(move.suit) ? "red" : "black" };
    },

    // The end of a deal: every hand is shown to all then.
    entry(entry, state) {
      if (entry.kind !== "deal") return null;
      const rows = entry.hands.map((hand, seat) => el("tr", {},
        el("td", { text: seat === state.seat ? `seat ${seat} (you)` : `seat ${seat}` }),
        el("td", {}, hand.length ? el("span", { class: "cards mini" }, ...hand.map((c) => card(c))) : "out"),
        el("td", { text: `${entry.points[seat]} point${Math.abs(entry.points[seat]) === 1 ? "" : "s"}` })));
      return [entry.text.split(";")[0], el("table", { class: "deal-hands" }, ...rows)];
    },

    sheet(view, state) {
      const rows = [];
      for (const deal of state.deals) {
        rows.push(el("tr", {}, el("th", { text: `deal ${deal.deal}` }), ...deal.points.map((p) => el("td", { text: p }))));
      }
      rows.push(el("tr", { class: "total" }, el("th", { text: "total" }), ...view.scores.map((p) => el("td", { text: p }))));
      if (view.partnership) {
        const side = (s) => view.sides.find((members) => members.includes(s));
        rows.push(el("tr", { class: "total" }, el("th", { text: "side" }),
          ...view.scores.map((_, s) => el("td", { text: side(s).reduce((t, m) => t + view.scores[m], 0) }))));
      }
      return { rows, hint: "lowest total wins" };
    },

    seen(view) {
      const order = (c) => "A23456789TJQK".indexOf(c[0]) * 4 + "CDHS".indexOf(c[1]);
      const pile = view.discard.slice().sort((a, b) => order(a) - order(b));
      return [el("p", { class: "hint", text: `the discard pile since the stock was last formed (${pile.length} cards):` }),
        el("div", { class: "cards mini" }, ...pile.map((c) => card(c)))];
    },
  };
};
