// Pairs Draft on the web page: how its table is drawn (the hooks are listed in
// training/frontends/web_static/app.js; `view` is envs/pairs_draft/present.py's seat_view).
(window.deckgymGames = window.deckgymGames || {}).pairs_draft_v0 = function pairsDraftTable(page) {
  "use strict";
  const { el, backs, seatLabel } = page;

  // A number card: 7.
  function card(number, action, extra = {}) {
    return page.card(number, action, { class: `card number n${number}`, title: `${number}`, ...extra },
      el("span", { class: "value", text: number }));
  }

  function takenNode(info) {
    return el("div", { class: "taken" },
      el("span", { class: "label", text: "face up " }),
      el("span", { class: "cards mini" }, ...info.face_up.map((n) => card(n))),
      el("span", { class: "label", text: ` face down ${info.face_down.length}` }));
  }

  return {
    card,

    stage(view) {
      if (view.phase === "draft") return `draft, pick ${view.pick}/${view.picks}`;
      if (view.phase === "discard") return "discard";
      return `round ${view.round}/${view.rounds}`;
    },

    opponent(view, s) {
      const info = view.seats[s];
      const marks = [];
      if (view.start_player === s) marks.push(el("span", { class: "badge", text: view.phase === "play" ? "leads" : "dealer" }));
      if (info.instant_win) marks.push(el("span", { class: "badge win", text: "instant win" }));
      return [
        el("div", { class: "seat-cards" }, backs(info.cards), el("span", { class: "count", text: ` ${info.cards}` })),
        takenNode(info),
        el("div", { class: "seat-line" }, `score ${info.score} `, ...marks),
      ];
    },

    center(view) {
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
          trick.append(el("div", { class: "played" }, card(p.number), el("div", { class: "who", text: seatLabel(p.seat) + (p.forced ? " (forced: 11)" : "") })));
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
      return parts;
    },

    me(view) {
      const info = view.seats[view.seat];
      const lines = [` · score ${info.score}`, " ", takenNode(info)];
      if (view.discarded !== null) lines.push(el("span", { class: "hint", text: ` you discarded ${view.discarded}` }));
      return lines;
    },

    // In the draft the pack passed to you is on the table too, your picks are your hand.
    pack: (view) => (view.phase === "draft" ? { cards: view.pack, handTitle: "Your picks" } : null),

    sheet(view) {
      return {
        rows: [
          el("tr", {}, el("th", { text: "face up" }), ...view.seats.map((i) => el("td", { text: i.face_up.join(" ") || "–" }))),
          el("tr", {}, el("th", { text: "face down" }), ...view.seats.map((i) => el("td", { text: i.face_down.length }))),
          el("tr", { class: "total" }, el("th", { text: "points" }), ...view.seats.map((i) => el("td", { text: i.score + (i.instant_win ? " ★" : "") }))),
        ],
        hint: "highest points win (10 numbers or 5 copies face up win at once)",
      };
    },

    seen(view) {
      const head = el("tr", {}, el("th", { text: "number" }), ...Array.from({ length: 10 }, (_, i) => el("th", { text: i + 1 })));
      const played = el("tr", {}, el("th", { text: "played" }), ...view.played.map((c) => el("td", { text: c || "" })));
      const unseen = el("tr", {}, el("th", { text: "elsewhere" }), ...view.unseen.map((c) => el("td", { text: c || "" })));
      return [el("table", { class: "sheet seen" }, head, played, unseen),
        el("p", { class: "hint", text: "elsewhere: copies not in your cards, your discard or play (in other hands, discards, packs or set aside)" })];
    },
  };
};
