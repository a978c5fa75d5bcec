#!/usr/bin/env node
// A game of Craits between this script and a deckgym bot, through the bot protocol
// (docs/bot-protocol.md). The script is the table and plays seat 1 (at random); the bot,
// `python -m training.serve_bot AGENT`, plays seat 0. The script tells the bot what seat 0
// sees (`update`), asks for its move (`act`) and checks every reply; the server checks every
// event against the rules, so any error reply ends the game with status 1.
//
//   node examples/node/play_craits.js [AGENT] [SEED]      (PYTHON names the interpreter)
//
// The table is two players under rules that keep it short: no reshuffle (an empty stock
// costs pressure points), a 9's own suit stands, two short deals.
'use strict';
const { spawn } = require('child_process');
const path = require('path');
const readline = require('readline');

const RULES = { num_players: 2, empty_stock: 'pressure', nine: 'own_suit', deals: [6, 4] };
const POINTS = { A: 1, 2: 20, 3: 0, 4: 15, 5: 30, 6: 30, 7: 20, 8: 50, 9: 30, T: 25, J: 10, Q: 10, K: 10 };
const BOT = 0;

// ---- the bot: one JSON request a line, one reply a line
const bot = spawn(process.env.PYTHON || 'python3', ['-m', 'training.frontends.serve_bot', process.argv[2] || 'heuristic'],
  { cwd: path.join(__dirname, '..', '..'), stdio: ['pipe', 'pipe', 'inherit'] });
const waiting = [];
readline.createInterface({ input: bot.stdout }).on('line', line => waiting.shift()(JSON.parse(line)));
bot.on('exit', () => { if (waiting.length) fail('the bot exited'); });
function fail(message) { console.error(message); process.exit(1); }
function ask(request) {
  bot.stdin.write(JSON.stringify(request) + '\n');
  return new Promise(resolve => waiting.push(reply => {
    if (reply.type === 'error') fail(`the bot refused ${JSON.stringify(request)}:\n  ${reply.error}`);
    resolve(reply);
  }));
}

// ---- a seeded generator (mulberry32) for the deck and seat 1's moves
let seed = Number(process.argv[3] || 1);
function random() {
  seed = (seed + 0x6D2B79F5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

// ---- the table (RULES.md section 1, for two players under RULES)
const hands = [[], []], totals = [0, 0], pressures = [0, 0];
let stock, top, suit, crank, turn, phase, stalled, out, dealPressure;
const news = []; // what seat 0 has seen since it last moved

function draw(seat, count) {
  for (let i = 0; i < count; i++) {
    if (stock.length) hands[seat].push(stock.pop());
    else dealPressure[seat] += 5 * 2 ** pressures[seat]++; // pressure: 5, 10, 20, ... points
  }
}
function legal(seat) {
  if (phase === 'suit') return ['C', 'D', 'H', 'S'].map(s => 'suit ' + s);
  const fits = c => (crank ? 'A2'.includes(c[0]) : c[1] === suit || c[0] === top[0] || '89'.includes(c[0]));
  const plays = hands[seat].filter(fits).map(c => 'play ' + c);
  return plays.length ? plays : ['draw'];
}
function play(seat, card, upcard) {
  const rank = card[0], other = 1 - seat;
  if (!upcard) hands[seat].splice(hands[seat].indexOf(card), 1);
  const last = !upcard && !hands[seat].length;
  out = out || last;
  [top, suit, phase, turn] = [card, card[1], 'play', other];
  if (crank || rank === '2') crank += rank === '2' ? 2 : 1; // a 2 starts a crank, an A or a 2 adds to it
  else if (rank === '4' || (rank === '6' && !last)) turn = seat; // with two players a 4 skips the other
  else if (rank === '5' || rank === '7') draw(other, 1);
  else if (rank === '8' && !last) [phase, turn] = ['suit', seat];
}
function move(seat, text) { // returns how the deal ended, if it did
  const before = hands[BOT].slice();
  if (text === 'draw') {
    stalled = stock.length ? 0 : stalled + 1;
    draw(seat, crank || 1);
    [crank, phase, turn] = [0, 'play', 1 - seat];
  } else if (text.startsWith('suit')) [suit, phase, turn] = [text[5], 'play', 1 - seat];
  else { stalled = 0; play(seat, text.slice(5), false); }
  const drew = hands[BOT].filter(c => !before.includes(c));
  news.push(drew.length ? { event: 'move', seat, move: text, drew } : { event: 'move', seat, move: text });
  return stalled >= 2 ? 'stalemate' : !crank && out ? 'out' : null;
}
function handPoints(hand) { // each 3 cancels the highest other card; only 3s: -50 each
  const threes = hand.filter(c => c[0] === '3').length;
  const values = hand.filter(c => c[0] !== '3').map(c => POINTS[c[0]]).sort((a, b) => b - a);
  return values.length ? values.slice(threes).reduce((a, b) => a + b, 0) : -50 * threes;
}

async function playDeal(d) {
  const size = RULES.deals[d], dealer = d % 2, deck = [];
  for (const r of 'A23456789TJQK') for (const s of 'CDHS') deck.push(r + s);
  for (let i = deck.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [deck[i], deck[j]] = [deck[j], deck[i]];
  }
  [hands[0], hands[1], stock] = [deck.slice(0, size), deck.slice(size, 2 * size), deck.slice(2 * size + 1)];
  [crank, stalled, out, dealPressure] = [0, 0, false, [0, 0]];
  play(dealer, deck[2 * size], true); // the upcard counts as the dealer's play
  news.push({ event: 'deal', deal: d + 1, dealer, hand: hands[BOT].slice(), upcard: deck[2 * size] });
  console.log(`deal ${d + 1}: upcard ${deck[2 * size]}, seat 0 (bot) ${hands[0].length} cards, seat 1 ${hands[1]}`);
  for (;;) {
    const seat = turn, moves = legal(seat);
    let text;
    if (seat === BOT) {
      await ask({ type: 'update', events: news.splice(0) });
      text = (await ask({ type: 'act', legal: moves })).action;
      if (!moves.includes(text)) fail(`the bot chose ${text}, not one of ${moves}`);
    } else text = moves[Math.floor(random() * moves.length)];
    console.log(`  seat ${seat}: ${text}`);
    const reason = move(seat, text);
    if (reason) {
      const points = hands.map((h, s) => handPoints(h) + dealPressure[s]);
      points.forEach((p, s) => { totals[s] += p; });
      news.push({ event: 'deal_end', reason, hands: hands.map(h => h.slice()), points });
      console.log(`deal ${d + 1} over (${reason}): points ${points}, totals ${totals}`);
      return;
    }
  }
}

(async () => {
  const ready = await ask({ type: 'start', protocol: 1, game: 'craits_v0', rules: RULES, seat: BOT, players: 2 });
  console.log(`bot '${ready.agent}' in seat ${BOT}; this script in seat 1`);
  for (let d = 0; d < RULES.deals.length; d++) await playDeal(d);
  const status = await ask({ type: 'update', events: news.splice(0) });
  if (status.expect !== 'over' || status.totals.join() !== totals.join()) {
    fail(`the bot's totals ${status.totals} (${status.expect}) differ from the table's ${totals}`);
  }
  await ask({ type: 'stop' });
  bot.stdin.end();
  const winner = totals[0] === totals[1] ? 'a tie' : `seat ${totals[0] < totals[1] ? 0 : 1} wins`;
  console.log(`game over: ${winner} (totals ${totals}; lower is better)`);
})();
