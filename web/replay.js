// @ts-check
// The replay viewer: a finished game from the history, stepped through with
// buttons or the keyboard (← → Home End). The server plays the moves (`replay`).
// "Analyse" asks the server for the computer analysis (`analyse`): a graph of
// seat 0's chances, an evaluation bar for the position shown, and each move's
// mark (?! inaccuracy, ? mistake, ?? blunder) with the better move and how the move
// played goes wrong: the line the engine expects after it, its first move on the board.
import { Board } from "./board.js";
import { h } from "./dom.js";
import { keysHelp, moveListItems, seatTurns, swatch } from "./game.js";
import { moveText, plural, resultText, roundOf, sentence, tapOrClick } from "./words.js";

/** A move's mark as written after it, and in words. */
const MARKS = /** @type {Record<string, string>} */ ({ inaccuracy: "?!", mistake: "?", blunder: "??" });

export class ReplayView {
  /**
   * @param {HTMLElement} root @param {import("./connection.js").Connection} conn @param {number} game
   * @param {{go: (hash: string) => void, roomHash: () => string|null, name: () => string, account: () => string|null}} app
   * @param {boolean} analyseNow ask for the analysis once the game is shown (a finished game's "Analyse")
   */
  constructor(root, conn, game, app, analyseNow = false) {
    this.conn = conn;
    /** @type {any[]} */
    this.frames = [];
    /** @type {string[]} */
    this.moves = [];
    this.index = 0;
    this.summary = /** @type {any} */ (null);
    this.analysis = /** @type {any} */ (null);
    this.game = game;
    /** Who looks: their own game is drawn from their side, as they played it. */
    this.viewer = app.account() ?? app.name();
    /** Quarter turns of the board (`Board`'s `turns`), set once the game is known. */
    this.turns = 0;
    this.bar = h("div", { class: "eval-bar", hidden: true, role: "meter", "aria-label": "Seat 0's chances" });
    this.graph = h("div", { class: "eval-graph", hidden: true });
    /** What the graph and the marks mean (an outside review found no legend). */
    this.legend = h("p", { class: "graph-legend", hidden: true });
    /** The shown move's mark in words, with the better move: a tap away, not a hover. */
    this.markWhy = h("p", { class: "mark-why", role: "status", hidden: true });
    const host = h("div", { class: "board-host" });
    this.caption = h("p", { class: "banner", role: "status" });
    this.list = h("ol", { class: "movelist", "aria-label": "Moves" });
    this.players = h("ol", { class: "players" });
    const button = (/** @type {string} */ text, /** @type {string} */ label, /** @type {() => void} */ act) => h("button", { type: "button", class: "step", text, "aria-label": label, onclick: act });
    /** Pressed once: disabled while the computer works, gone once its analysis is shown. */
    this.analyseButton = /** @type {HTMLButtonElement} */ (h("button", { type: "button", text: "Analyse", onclick: () => this.analyse() }));
    const back = app.roomHash();
    const controls = h("div", { class: "actions stepper" },
      // Latin-1 arrows: every system font has them (media-control glyphs are often missing).
      button("«", "Start", () => this.show(0)),
      button("‹", "Previous move", () => this.show(this.index - 1)),
      button("›", "Next move", () => this.show(this.index + 1)),
      button("»", "End", () => this.show(this.frames.length - 1)),
      this.analyseButton,
      // From a finished game's page, whose room is kept: back there (the lobby is one more step).
      back ? h("button", { type: "button", class: "leave", text: "Back to the game", onclick: () => app.go(back) })
        : h("button", { type: "button", class: "leave", text: "Lobby", onclick: () => app.go("#/") }));
    this.title = h("div", { class: "room-title", text: `Replay of game ${game}` });
    root.replaceChildren(h("div", { class: "game replay" },
      h("div", { class: "board-area" }, host),
      h("aside", { class: "side" }, this.title, this.caption, this.bar, this.markWhy, this.players, controls, this.graph, this.legend,
        h("div", { class: "panel moves" }, this.list), keysHelp(false))));
    this.board = new Board(host, { onMove: () => {}, onPending: () => {} }, {
      label: "Replay board. Left and right arrows step through the moves, Home and End go to the start and the end.",
    });
    this.keys = (/** @type {KeyboardEvent} */ e) => {
      const next = { ArrowLeft: this.index - 1, ArrowRight: this.index + 1, Home: 0, End: this.frames.length - 1 }[e.key];
      if (next === undefined || /** @type {HTMLElement} */ (e.target).closest("input")) return;
      e.preventDefault();
      this.show(next);
    };
    document.addEventListener("keydown", this.keys);
    this.load(game).then((shown) => { if (shown && analyseNow) this.analyse(); });
  }

  destroy() {
    document.removeEventListener("keydown", this.keys);
  }

  /** Fetch the game and its positions; whether it is shown. @param {number} game */
  async load(game) {
    const record = await this.conn.request({ type: "fetch_game", game });
    if (record.type !== "game_record") {
      this.caption.textContent = record.message ?? "This game cannot be found.";
      return false;
    }
    this.summary = record.summary;
    this.moves = record.moves;
    // What game it is, as a game page says it (it said only "Replay of game 4", a review):
    // the variant, rated or not, and when it ended.
    const ended = new Date(record.summary.finished * 1000).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
    const { size, players } = record.summary.variant; // (the summary has no clock: not "untimed")
    this.title.textContent = `Game ${game} · ${size}×${size}${players === 4 ? " · 4 players" : ""}${record.summary.pool ? " · rated" : ""} · ${ended}`;
    const mine = record.summary.players.indexOf(this.viewer);
    this.turns = mine < 0 ? 0 : seatTurns(record.summary.variant.players, mine);
    this.bar.setAttribute("aria-label", `${record.summary.players[0]}'s chances`);
    const frames = await this.conn.request({ type: "replay", variant: record.summary.variant, moves: record.moves });
    if (frames.type !== "replay_frames") {
      this.caption.textContent = frames.message;
      return false;
    }
    this.frames = frames.frames;
    this.players.replaceChildren(...record.summary.players.map((/** @type {string} */ name, /** @type {number} */ seat) =>
      h("li", { class: `player seat${seat}` }, swatch(seat), h("span", { class: "who" }, h("span", { class: "name", text: name })))));
    this.list.replaceChildren(...moveListItems(this.moves, record.summary.variant.players, null, (frame) => this.show(frame), (seat) => record.summary.players[seat] ?? `seat ${seat}`));
    this.show(this.frames.length - 1);
    return true;
  }

  /** Scroll the move list, and only it, to the move shown: `scrollIntoView` scrolled a phone's
   * side column too, taking the caption ("Move 4 of 4 …") out of sight. */
  revealShown() {
    const shown = this.list.querySelector(".shown");
    const panel = this.list.parentElement;
    if (!shown || !panel) return;
    const item = shown.getBoundingClientRect();
    const box = panel.getBoundingClientRect();
    if (item.top < box.top) panel.scrollTop -= box.top - item.top;
    else if (item.bottom > box.bottom) panel.scrollTop += item.bottom - box.bottom;
  }

  /** Bring the shown move's reason into view: on a phone the side column scrolls, and a
   * marked move tapped far down the list had its reason at the column's top, out of sight
   * (an outside review). */
  revealWhy() {
    const side = this.markWhy.parentElement;
    if (!side) return;
    const why = this.markWhy.getBoundingClientRect();
    const box = side.getBoundingClientRect();
    if (why.top < box.top) side.scrollTop -= box.top - why.top;
    else if (why.bottom > box.bottom) side.scrollTop += why.bottom - box.bottom;
  }

  async analyse() {
    this.caption.textContent = "The computer is analysing the game…";
    this.analyseButton.disabled = true;
    const reply = await this.conn.request({ type: "analyse", game: this.game });
    this.analyseButton.disabled = false;
    if (reply.type !== "analysis") {
      this.caption.textContent = reply.message ?? "This game cannot be analysed.";
      return;
    }
    this.analyseButton.hidden = true;
    this.analysis = reply;
    // Each player's count of marked moves, on their card (a review missed lichess's summary).
    for (const seat of reply.seats) {
      const who = this.players.children[seat.seat]?.querySelector(".who");
      const inaccuracies = `${seat.inaccuracies} ${seat.inaccuracies === 1 ? "inaccuracy" : "inaccuracies"}`;
      const marks = [inaccuracies, plural(seat.mistakes, "mistake"), plural(seat.blunders, "blunder")];
      who?.append(h("span", { class: "meta stats", text: marks.join(" · ") }));
    }
    for (const node of this.list.querySelectorAll("button")) {
      const move = reply.moves[Number(/** @type {HTMLElement} */ (node).dataset.ply) - 1];
      if (!move?.mark) continue;
      node.textContent = `${move.move}${MARKS[move.mark]}`;
      node.classList.add(move.mark);
      node.title = `${move.mark}: better ${move.best}`;
    }
    const chances = [0, ...reply.moves.map((/** @type {any} */ _m, /** @type {number} */ i) => i + 1)].map((i) => this.chance(i));
    const width = Math.max(1, chances.length - 1);
    const points = chances.map((p, i) => `${(i / width) * 100},${(1 - p) * 40}`).join(" ");
    const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.setAttribute("viewBox", "0 0 100 40");
    svg.setAttribute("preserveAspectRatio", "none");
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", `${this.summary.players[0]}'s chances after each move`);
    svg.innerHTML = `<line x1="0" y1="20" x2="100" y2="20" class="mid"/><polyline points="${points}"/>`;
    // Each marked move a tick on the line, in its mark's colour; a tap on the graph shows the
    // move there (its mark, if any, said under the bar).
    reply.moves.forEach((/** @type {any} */ move, /** @type {number} */ i) => {
      if (!move.mark) return;
      const tick = document.createElementNS("http://www.w3.org/2000/svg", "line");
      const x = ((i + 1) / width) * 100;
      for (const [name, value] of Object.entries({ x1: x, x2: x, y1: 0, y2: 40, class: `tick ${move.mark}`, "data-ply": i + 1 })) tick.setAttribute(name, String(value));
      svg.append(tick);
    });
    svg.addEventListener("click", (e) => {
      const box = svg.getBoundingClientRect();
      this.show(Math.round(((e.clientX - box.left) / box.width) * width));
    });
    this.graph.replaceChildren(svg);
    this.graph.hidden = false;
    const [first, second] = this.summary.players;
    this.legend.replaceChildren(
      h("span", {}, `The line: ${first}'s chances after each move, top: ${first} wins${second ? `, bottom: ${second}` : ""} (${tapOrClick()} it to go there). `),
      h("span", { class: "marks" }, h("b", { class: "inaccuracy", text: "?!" }), " inaccuracy · ", h("b", { class: "mistake", text: "?" }), " mistake · ",
        h("b", { class: "blunder", text: "??" }), ` blunder: ${tapOrClick()} one for why.`));
    this.legend.hidden = false;
    this.bar.hidden = false;
    document.body.dataset.analysed = String(reply.game);
    this.show(this.index);
  }

  /** Seat 0's win probability at frame ``index`` of the analysed game. @param {number} index */
  chance(index) {
    const moves = this.analysis.moves;
    if (index === 0) return moves.length ? (moves[0].seat === 0 ? moves[0].win_before : 1 - moves[0].win_before) : 0.5;
    const move = moves[index - 1];
    return move.seat === 0 ? move.win_after : 1 - move.win_after;
  }

  /** How a marked move goes wrong, in players' words: "After b3, best play goes: c2 (Bob,
   * drawn in Bob's colour), b1h (Alice)." The first move is the one on the board.
   * @param {any} move */
  lineText(move) {
    const name = (/** @type {number} */ seat) => this.summary.players[seat] ?? `seat ${seat}`;
    const replies = move.pv_after.map((/** @type {string} */ reply, /** @type {number} */ i) => {
      const seat = (move.seat + 1 + i) % 2;
      return i === 0 ? `${reply} (${name(seat)}, drawn in ${name(seat)}'s colour)` : `${reply} (${name(seat)})`;
    });
    return `After ${move.move}, best play goes: ${replies.join(", ")}.`;
  }

  /** @param {number} index */
  show(index) {
    if (!this.frames.length) return;
    this.index = Math.max(0, Math.min(this.frames.length - 1, index));
    const frame = this.frames[this.index];
    const summary = this.summary;
    const marked = this.analysis?.moves[this.index - 1]?.mark ? this.analysis.moves[this.index - 1] : null;
    this.board.render({
      size: summary.variant.size, players: summary.variant.players, pawns: frame.pawns, walls: frame.walls,
      lastMove: frame.last_move, lastFrom: null, turn: frame.winner === null ? frame.turn : null,
      targets: [], legalWalls: "", turns: this.turns, interactive: false,
      // A marked move's better one, drawn where it would have gone, and the reply it met.
      hint: marked ? marked.best : null,
      reply: marked?.pv_after?.length ? { move: marked.pv_after[0], seat: 1 - marked.seat } : null,
    });
    const last = frame.last_move ?? "";
    // A retirement's seat is in it ("retire 3"), whoever's turn it was.
    const mover = last.startsWith("retire ") ? Number(last.slice(7)) : this.index > 0 ? this.frames[this.index - 1].turn : null;
    const who = mover === null ? "" : summary.players[mover] ?? "";
    // Numbered as the move list numbers them, a round to a number, as a live game's "Viewing
    // move 3 of 12 (e3h)" and the lobby's Recent games: they counted each player's move.
    const { round, rounds } = roundOf(this.moves, summary.variant.players, this.index);
    let caption = this.index === 0 ? `Start · ${plural(rounds, "move")}` : `Move ${round} of ${rounds}: ${moveText(frame.last_move, who)}`;
    if (this.index === this.frames.length - 1) {
      caption += ` · ${resultText({ winner: summary.winner, reason: summary.reason }, (seat) => summary.players[seat])}`;
    }
    this.caption.textContent = caption;
    for (const node of this.list.querySelectorAll("button")) node.classList.toggle("shown", Number(/** @type {HTMLElement} */ (node).dataset.ply) === this.index);
    this.revealShown();
    document.body.dataset.replay = String(this.index);
    if (this.analysis) {
      const p = this.chance(this.index);
      const move = this.index > 0 ? this.analysis.moves[this.index - 1] : null;
      this.bar.style.setProperty("--chance", `${Math.round(p * 100)}%`);
      this.bar.setAttribute("aria-valuenow", String(Math.round(p * 100)));
      this.bar.textContent = `${summary.players[0]}'s chances ${Math.round(p * 100)}%` + (move?.mark ? ` · ${move.move} ${move.mark}, better ${move.best}` : "");
      // The mark's reason in words, for a tap as for a pointer (the list's title is a hover's).
      this.markWhy.hidden = !move?.mark;
      this.markWhy.className = `mark-why ${move?.mark ?? ""}`;
      if (move?.mark) {
        const pct = (/** @type {number} */ x) => `${Math.round(x * 100)}%`;
        this.markWhy.replaceChildren(
          sentence(`${move.move}${MARKS[move.mark]} was ${move.mark === "inaccuracy" ? "an" : "a"} ${move.mark}: ${summary.players[move.seat]}'s chances ${pct(move.win_before)} before it, ${pct(move.win_after)} after. Better: ${move.best}, marked on the board.`),
          ...(move.pv_after?.length ? [" ", h("span", { class: "mark-line", text: this.lineText(move) })] : []));
        this.revealWhy();
      }
    }
  }
}
