// @ts-check
// The replay viewer: a finished game from the history, stepped through with
// buttons or the keyboard (← → Home End). The server plays the moves (`replay`).
import { Board } from "./board.js";
import { h } from "./dom.js";
import { swatch } from "./game.js";
import { moveText } from "./words.js";

export class ReplayView {
  /** @param {HTMLElement} root @param {import("./connection.js").Connection} conn @param {number} game @param {{go: (hash: string) => void}} app */
  constructor(root, conn, game, app) {
    this.conn = conn;
    /** @type {any[]} */
    this.frames = [];
    /** @type {string[]} */
    this.moves = [];
    this.index = 0;
    this.summary = /** @type {any} */ (null);
    const host = h("div", { class: "board-host" });
    this.caption = h("p", { class: "banner", role: "status" });
    this.list = h("ol", { class: "movelist", "aria-label": "Moves" });
    this.players = h("ol", { class: "players" });
    const button = (/** @type {string} */ text, /** @type {string} */ label, /** @type {() => void} */ act) => h("button", { type: "button", text, "aria-label": label, onclick: act });
    const controls = h("div", { class: "actions stepper" },
      button("⏮", "Start", () => this.show(0)),
      button("◀", "Previous move", () => this.show(this.index - 1)),
      button("▶", "Next move", () => this.show(this.index + 1)),
      button("⏭", "End", () => this.show(this.frames.length - 1)),
      h("button", { type: "button", class: "leave", text: "Lobby", onclick: () => app.go("#/") }));
    root.replaceChildren(h("div", { class: "game replay" },
      h("div", { class: "board-area" }, host),
      h("aside", { class: "side" }, h("div", { class: "room-title", text: `Replay of game ${game}` }), this.caption, this.players, controls, h("div", { class: "panel moves" }, this.list))));
    this.board = new Board(host, { onMove: () => {}, onPending: () => {} });
    this.keys = (/** @type {KeyboardEvent} */ e) => {
      const next = { ArrowLeft: this.index - 1, ArrowRight: this.index + 1, Home: 0, End: this.frames.length - 1 }[e.key];
      if (next === undefined || /** @type {HTMLElement} */ (e.target).closest("input")) return;
      e.preventDefault();
      this.show(next);
    };
    document.addEventListener("keydown", this.keys);
    this.load(game);
  }

  destroy() {
    document.removeEventListener("keydown", this.keys);
  }

  /** @param {number} game */
  async load(game) {
    const record = await this.conn.request({ type: "fetch_game", game });
    if (record.type !== "game_record") {
      this.caption.textContent = record.message ?? "This game cannot be found.";
      return;
    }
    this.summary = record.summary;
    this.moves = record.moves;
    const frames = await this.conn.request({ type: "replay", variant: record.summary.variant, moves: record.moves });
    if (frames.type !== "replay_frames") {
      this.caption.textContent = frames.message;
      return;
    }
    this.frames = frames.frames;
    this.players.replaceChildren(...record.summary.players.map((/** @type {string} */ name, /** @type {number} */ seat) =>
      h("li", { class: `player seat${seat}` }, swatch(seat), h("span", { class: "who" }, h("span", { class: "name", text: name })))));
    this.list.replaceChildren(...this.moves.map((move, i) => h("li", {}, h("button", { type: "button", text: move, "data-ply": i + 1, onclick: () => this.show(i + 1) }))));
    this.show(this.frames.length - 1);
  }

  /** @param {number} index */
  show(index) {
    if (!this.frames.length) return;
    this.index = Math.max(0, Math.min(this.frames.length - 1, index));
    const frame = this.frames[this.index];
    const summary = this.summary;
    this.board.render({
      size: summary.variant.size, players: summary.variant.players, pawns: frame.pawns, walls: frame.walls,
      lastMove: frame.last_move, lastFrom: null, turn: frame.winner === null ? frame.turn : null,
      targets: [], legalWalls: "", turns: 0, interactive: false,
    });
    const mover = this.index > 0 ? this.frames[this.index - 1].turn : null;
    const who = mover === null ? "" : summary.players[mover] ?? "";
    this.caption.textContent = this.index === 0 ? `Start · ${this.frames.length - 1} moves` : `${this.index}. ${moveText(frame.last_move, who)}`;
    for (const node of this.list.querySelectorAll("button")) node.classList.toggle("shown", Number(/** @type {HTMLElement} */ (node).dataset.ply) === this.index);
    this.list.querySelector(".shown")?.scrollIntoView({ block: "nearest" });
    document.body.dataset.replay = String(this.index);
  }
}
