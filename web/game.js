// @ts-check
// The game page: board, players and clocks, actions, move list, chat.
// It renders the latest `state` and sends requests; the server decides everything.
import { Board, parseWall, SEAT_NAMES, SHAPES } from "./board.js";
import { $, announce, fill, h, patch, s } from "./dom.js";
import { loginForm } from "./account.js";
import { allowsSpectatorEval } from "./lobby.js";
import { play, soundOf } from "./sound.js";
import { clockText, listed, movers, moveText, plural, resultText, retireText, retirements, roundOf, seatName, sentence, tapOrClick, variantText, withNames } from "./words.js";

const LOW_TIME_MS = 20_000;
/** A player card's word for a seat out of the game, by how it went (words.js `retirements`). */
/** Said before an ending that walks out of a quick match's pairing (PROTOCOL.md section 4). */
const WALKOUT = "Ending a quick match's game before every player has moved makes you wait before your next quick match (15 s, longer each time).";
const OUT = /** @type {Record<string, string>} */ ({ resign: "resigned", time: "out of time", left: "removed: away" });
/** The wide layout of style.css: the side column beside the board. */
const WIDE = matchMedia("(min-width: 820px), (orientation: landscape) and (min-width: 560px)");
/** The order of play, by seat. */
const ORDINALS = ["first", "second", "third", "fourth"];
/** The thinking limit's countdown shows in its last two minutes: before, it is only noise. */
const SLOW_SHOWN_MS = 120_000;
/** Claims sent at most for one click, each refused as early (`claim`). */
const CLAIM_TRIES = 3;
/** After "Bob declined the rematch", to the player declined: what the buttons under it do. */
const AGAIN = ": “Rematch” asks again, “Leave” goes back to the lobby.";

/**
 * Where the last move's pawn stood before it: the previous state's square when this page saw
 * it, else the seat's previous step in `moves` (a reloaded page has no previous state; an
 * outside review saw the marker vanish). Null for a wall and a seat's first step after a
 * reload.
 * @param {any} state @param {string[]|null} previous the pawns one ply earlier
 */
function lastFrom(state, previous) {
  const last = state.last_move;
  if (!last || /[hv]$/.test(last.move)) return null;
  if (previous) return previous[last.seat];
  const moves = /** @type {string[]} */ (state.moves);
  const made = movers(moves, state.variant.players);
  let action = made.findLastIndex((mover) => mover !== null);
  if (action < 0 || made[action]?.seat !== last.seat) return null;
  while (--action >= 0) {
    if (made[action]?.seat === last.seat && !/[hv]$/.test(moves[action])) return moves[action];
  }
  return null;
}

/**
 * The seats out of a four-player game: in play, those no longer `active`; once it is over
 * (every seat `active` again, PROTOCOL.md section 17), those its moves say retired (the end
 * screen had dropped who had resigned, an outside review).
 * @param {any} state @returns {number[]}
 */
function outSeats(state) {
  if (state.status === "finished") {
    return state.moves.filter((/** @type {string} */ move) => move.startsWith("retire ")).map((/** @type {string} */ move) => Number(move.slice(7)));
  }
  return state.players.flatMap((/** @type {any} */ player, /** @type {number} */ seat) => player.active ? [] : [seat]);
}

/**
 * @typedef {import("./connection.js").Connection} Connection
 * @typedef {{code: string, role: "player"|"spectator", seat: number|null}} Seat
 */

/**
 * Quarter turns that draw the board from `seat`'s side, its pawn's start at the bottom.
 * @param {number} players @param {number} seat
 */
export function seatTurns(players, seat) {
  return players === 2 ? (seat === 1 ? 2 : 0) : seat;
}

/**
 * The move list's items, a round to a line ("1. e2 e8"), each move a button that shows the
 * position after it; a retirement is a line of its own ("Dan resigned"). Live games and
 * replays share it.
 * @param {string[]} moves @param {number} per players, so moves per round
 * @param {number|null} shown the frame shown (marked), if any
 * @param {(frame: number) => void} pick
 * @param {(seat: number) => string} name a seat's player
 * @param {Record<number, string>} [how] how each seat that retired went, where known
 */
export function moveListItems(moves, per, shown, pick, name, how = {}) {
  const items = [];
  /** The round being listed: its number and moves stay on one line. @type {HTMLElement|null} */
  let line = null;
  let round = 0;
  const made = movers(moves, per);
  moves.forEach((move, action) => {
    // replay_frames has a frame after every action, retirements included: index by action.
    const frame = action + 1;
    const mover = made[action];
    if (!mover) {
      const seat = Number(move.slice(7));
      items.push(h("li", { class: "retire", text: retireText(name(seat), how[seat]) }));
      line = null; // the round goes on after it, on a line of its own
      return;
    }
    if (mover.round !== round || !line) {
      line = h("li", {}, mover.round !== round ? h("span", { class: "round", text: `${mover.round}.` }) : null);
      items.push(line);
      round = mover.round;
    }
    line.append(h("button", { type: "button", class: frame === shown ? "shown" : "", text: move, "data-ply": frame, onclick: () => pick(frame) }));
  });
  return items;
}

/** A name's number mark: the server tells a room's computer seats apart by it ("Computer L3
 * (2)", PROTOCOL.md section 17a). */
const NUMBERED = /^(.*?)( \(\d+\))$/;

/**
 * A player's name on a card, cut with an ellipsis where the card is narrow, but never its
 * number mark: "Computer L… (2)" and "Computer L… (3)" stay apart on a phone.
 * @param {string} tag @param {string} name @param {Record<string, any>} [props]
 */
function nameView(tag, name, props = {}) {
  const numbered = NUMBERED.exec(name);
  if (!numbered) return h(tag, { ...props, class: "name", text: name });
  return h(tag, { ...props, class: "name numbered", title: name },
    h("span", { class: "head", text: numbered[1] }), h("span", { class: "mark", text: numbered[2] }));
}

const CHAT_KEY = "quoridor.chat.";
/** Chat lines a tab keeps per room, for a reload (the newest). */
const CHAT_KEPT = 100;

/** The chat lines this tab kept for `room`. @param {string} room @returns {any[]} */
function keptChat(room) {
  try {
    const lines = JSON.parse(sessionStorage.getItem(CHAT_KEY + room) ?? "[]");
    return Array.isArray(lines) ? lines : [];
  } catch {
    return [];
  }
}

/** Keep `line` for a reload of this tab. @param {string} room @param {any} line */
function keepChat(room, line) {
  const { seat, name, text, event } = line;
  const lines = [...keptChat(room), { seat, name, text, event }].slice(-CHAT_KEPT);
  try {
    sessionStorage.setItem(CHAT_KEY + room, JSON.stringify(lines));
  } catch {
    // storage full or refused: the line is shown, not kept
  }
}

export class GameView {
  /**
   * @param {HTMLElement} root
   * @param {Connection} conn
   * @param {Seat} seat
   * @param {{leave: (kept?: boolean) => void, notice: (text: string) => void, quiet: () => void, account: () => string|null,
   *   logIn: (loggedIn: {name: string, token: string}) => void, remake: (request: Record<string, any>) => void,
   *   placeToast: () => void}} app `placeToast`: the wall bar was shown, hidden or changed
   */
  constructor(root, conn, seat, app) {
    this.conn = conn;
    this.seat = seat;
    this.app = app;
    /** @type {any} */
    this.state = null;
    this.receivedAt = 0;
    /** The game ("room number") whose low time for this player was said with a sound. */
    this.lowTimeSaid = "";
    /** Opened by joining the room now (not by coming back to it): its first state may be
     * the start of the game, to be heard. Set by main.js. */
    this.joined = false;
    this.destroyed = false;
    /** Ply shown from the move list; null follows the game. @type {number|null} */
    this.viewing = null;
    /** @type {{key: string, frames: any[]}|null} */
    this.frames = null;
    /** Pawn squares of the state before this one, to mark where the last move came from. */
    this.previous = /** @type {any} */ (null);
    /** How the seats out of this four-player game went, where this page saw it. @type {{game: number, how: Record<number, string>}|null} */
    this.retired = null;
    /** Which ending waits for its confirmation ("resign", "abort"), false for none. @type {false|"resign"|"abort"} */
    this.confirming = false;
    /** Whether Leave, pressed during a game this page plays, waits for its confirmation. */
    this.leaving = false;
    /** Who just took a free seat, to be said once ("Bob joined: the game starts."). */
    this.arrival = "";
    /** Whether this view has shown how a move is made (once, at the player's first move). */
    this.toldHow = false;
    /** The game in which this player's draw offer was declined, until their next move: the
     * server refuses another offer before then (PROTOCOL.md section 14). @type {number|null} */
    this.declinedIn = null;
    /** The move queued during the opponent's turn (a premove), sent when the state says it is
     * this player's turn; the server judges it then. @type {{game: number, move: string, typed: boolean}|null} */
    this.premove = null;
    /** The players who left while this player's rematch request stood, in a finished game,
     * without declining it (a client older than `rematch_declined`, a terminal's quit): their
     * leaving is said as a decline. @type {{game: number, names: string[]}|null} */
    this.rematchDeclined = null;
    /** The computer's hint for this position (`suggestion`), drawn on the board until the
     * next move. @type {{game: number, ply: number, move: string}|null} */
    this.hinted = null;
    this.timer = setInterval(() => this.tick(), 100);
    this.build(root);
  }

  build(/** @type {HTMLElement} */ root) {
    const boardHost = h("div", { class: "board-host" });
    this.wallbar = h("div", { class: "wallbar", hidden: true },
      h("div", { class: "wallbar-row" },
        h("span", { class: "wallbar-text" }),
        h("button", { type: "button", class: "primary", text: "Place wall", onclick: () => this.board.confirm() }),
        h("button", { type: "button", text: "Rotate", onclick: () => this.board.rotate() }),
        h("button", { type: "button", text: "Cancel", onclick: () => this.board.clearPending() })),
      h("p", { class: "wallbar-why", hidden: true }),
    );
    /** Why the wall in the wall bar cannot be placed, in the server's words, for the position
     * it was asked in (`key`: game, ply and wall). @type {{key: string, text: string}|null} */
    this.why = null;
    this.banner = h("div", { class: "banner", role: "status" });
    /** The first-move countdown (`first_move_in_ms`): the game is aborted when it runs out. */
    this.countdown = h("p", { class: "countdown", hidden: true });
    /** What the room needs that the banner does not say: a rated room's account, an absent player. */
    this.note = h("div", { class: "room-note", hidden: true });
    /** Why the current game was aborted, when this view saw it happen. @type {{game: number, text: string}|null} */
    this.aborted = null;
    /** Who left the room's first game unplayed, the room waiting again for its game `game`. @type {{game: number, text: string}|null} */
    this.reopened = null;
    /** @type {string|null} The type of the last request `act` sent (resign, abort, draw…). */
    this.ending = null;
    /** A new game that this view saw start with the seats turned (a rematch, a match's next
     * game): the game, and the seat this viewer plays in it. @type {{game: number, seat: number|null}|null} */
    this.turned = null;
    this.playersList = h("ol", { class: "players", "aria-label": "Players" });
    this.evalBar = h("div", { class: "eval-bar", hidden: true, role: "meter", "aria-label": "Chances" });
    /** Whether this spectator follows the computer's evaluation (`live_eval`). */
    this.following = false;
    /** Whether the server said this room's players did not allow it (`cannot_evaluate`). */
    this.evalRefused = false;
    this.actions = h("div", { class: "actions" });
    this.moveList = h("ol", { class: "movelist", "aria-label": "Moves" });
    this.liveButton = h("button", { type: "button", class: "live", hidden: true, text: "Back to live ▸", onclick: () => this.showPly(null) });
    this.chatLog = h("ol", { class: "chatlog", "aria-label": "Chat" });
    this.chatInput = /** @type {HTMLInputElement} */ (h("input", { type: "text", maxLength: 300, placeholder: "Say something…", "aria-label": "Chat message", autocomplete: "off" }));
    this.chatForm = h("form", { class: "chatform", onsubmit: (/** @type {Event} */ e) => this.sendChat(e) }, this.chatInput, h("button", { type: "submit", text: "Send" }));
    this.command = /** @type {HTMLInputElement} */ (h("input", { type: "text", placeholder: "Type a move: e2, e3h", "aria-label": "Move in notation", autocomplete: "off", spellcheck: false, maxLength: 8 }));
    /** What became of the move typed: the server's refusal, or queued for your turn. */
    this.commandWhy = h("p", { class: "command-why", role: "status", hidden: true });
    this.command.addEventListener("input", () => this.sayCommand(""));
    const commandForm = this.commandForm = h("form", { class: "command", onsubmit: (/** @type {Event} */ e) => this.sendCommand(e) },
      this.command, h("button", { type: "submit", text: "Play" }), this.commandWhy);
    this.tabMoves = h("button", { type: "button", role: "tab", "aria-selected": "true", text: "Moves", onclick: () => this.tab("moves") });
    this.tabChat = h("button", { type: "button", role: "tab", "aria-selected": "false", text: "Chat", onclick: () => this.tab("chat") });
    this.movesPanel = h("div", { class: "panel moves", role: "tabpanel" }, this.liveButton, this.moveList);
    this.chatNote = h("p", { class: "chat-note", hidden: true, text: "The players' chat: spectators read it, only players write." });
    this.chatPanel = h("div", { class: "panel chat", role: "tabpanel", hidden: true }, this.chatLog, this.chatNote, this.chatForm);
    this.title = h("div", { class: "room-title" });
    this.keysHelp = keysHelp(true);
    const side = h("aside", { class: "side" },
      this.title, this.banner, this.countdown, this.note, this.evalBar, this.playersList, this.actions, commandForm, this.keysHelp,
      h("div", { class: "tabs", role: "tablist" }, this.tabMoves, this.tabChat),
      this.movesPanel, this.chatPanel,
    );
    this.root = h("div", { class: "game" }, h("div", { class: "board-area" }, boardHost, this.wallbar), side);
    root.replaceChildren(this.root);
    this.board = new Board(boardHost, {
      onMove: (move) => this.play(move),
      onPending: (wall) => this.pendingWall(wall),
      onNoWall: (wall) => this.explainWall(wall),
      onNoMove: (square) => this.explainSquare(square),
      onIdle: () => this.idleTap(),
      onPremove: (move) => this.queuePremove(move),
    });
    this.keys = (/** @type {KeyboardEvent} */ e) => this.historyKeys(e);
    document.addEventListener("keydown", this.keys);
    // The lines this tab read in the room before a reload (the server replays only what a
    // resume missed, and a reloaded page has nothing to resume from: an outside review).
    for (const line of keptChat(this.seat.code)) this.showChat(line);
  }

  destroy() {
    this.destroyed = true; // a claim waiting to go again (`claim`) stays unsent
    clearInterval(this.timer);
    document.removeEventListener("keydown", this.keys);
  }

  /** @param {"moves"|"chat"} which */
  tab(which) {
    const chat = which === "chat";
    this.chatPanel.hidden = !chat;
    this.movesPanel.hidden = chat;
    this.tabChat.setAttribute("aria-selected", String(chat));
    this.tabMoves.setAttribute("aria-selected", String(!chat));
    this.tabChat.classList.remove("unread");
    if (chat) this.chatInput.focus();
  }

  /** The seat's view turns: the viewer's own pawn starts at the bottom. */
  turns() {
    const seat = this.seat.seat;
    if (seat === null || !this.state) return 0;
    return seatTurns(this.state.variant.players, seat);
  }

  get isPlayer() {
    return this.seat.role === "player" && this.seat.seat !== null;
  }

  /** @param {Seat} seat */
  setSeat(seat) {
    this.seat = seat;
    if (this.state) this.render();
  }

  /** Whether the link to the server is up: a move made while it is down would be lost. */
  get online() {
    return this.conn.status === "online";
  }

  /** The link went down or came back: the board and the banner say what can be done. */
  onLink() {
    if (!this.state) return;
    this.render();
    this.sendPremove(); // queued while the link was down, and the turn came meanwhile
  }

  /** A tap on the board (or Enter) while it takes no move: why, in words. */
  idleTap() {
    const why = this.idleWhy();
    if (why) this.app.notice(why);
  }

  /** Why the board takes no move now, if it is said. */
  idleWhy() {
    const state = this.state;
    if (!state || state.status === "finished") return "";
    const me = this.seat.seat;
    let why = "";
    if (state.status === "waiting") why = "The game starts when every seat is taken.";
    else if (this.viewing !== null) why = "You are looking at an earlier move: go back to live to play.";
    else if (!this.isPlayer || me === null) why = "You are watching: spectators cannot move.";
    else if (!this.online) why = "Not connected: you can move once the connection is back.";
    else if (!state.players[me].active) why = "You have left this game.";
    else if (state.turn !== me && state.turn !== null) why = `It is ${seatName(state, state.turn)}'s turn.`;
    return why;
  }

  /**
   * A square your pawn cannot go to, tapped on your turn: said, with where it can go, from the
   * state's `legal_pawn_moves` (the client judges nothing: those squares are the server's). An
   * outside review's taps on such squares did nothing, with no word why.
   * @param {string} square
   */
  explainSquare(square) {
    const state = this.state;
    const me = this.seat.seat;
    if (!state || me === null) return;
    const targets = [...state.legal_pawn_moves].sort();
    if (!targets.length) return this.app.notice("Your pawn cannot move: place a wall.");
    const where = targets.length > 1 ? `the marked squares (${listed(targets)})` : `the marked square (${targets[0]})`;
    this.app.notice(square === state.pawns[me]
      ? `Your pawn is on ${square}: ${tapOrClick()} ${targets.length > 1 ? "one of " : ""}${where} to move it.`
      : `You can't move to ${square}: your pawn can go to ${where}.`);
  }

  /**
   * A groove where the state's `legal_walls` allow no wall. The client knows no rule, so it
   * sends the wall and shows the server's reason in words ("wall d3v crosses d3h"), as the
   * move box does. `legal_walls` came from the server for this very ply, so the wall is refused,
   * never placed.
   * @param {string} wall
   */
  async explainWall(wall) {
    const state = this.state;
    const me = this.seat.seat;
    if (!state || me === null || !this.canPlay()) return;
    if (!state.walls_left[me]) return this.app.notice("You have no walls left.");
    const reply = await this.conn.request({ type: "move", move: wall, ply: state.ply });
    if (reply.type === "error") this.onError(reply);
  }

  // -- messages ---------------------------------------------------------------

  /**
   * @param {any} state
   * @param {boolean} [baseline] the first state on a new connection: the truth whatever its event
   */
  onState(state, baseline = false) {
    const old = this.state;
    if (old && !baseline && state.event < old.event) return; // an older state arrived late: ignore
    if (old && state.event === old.event && state.ply === old.ply && state.status === old.status) {
      this.state = state;
      this.receivedAt = performance.now();
      this.render();
      return;
    }
    this.previous = old && old.game === state.game && old.ply === state.ply - 1 ? old.pawns : null;
    this.state = state;
    this.receivedAt = performance.now();
    this.describe(old, state);
    // A resynchronised state (a new connection's first) may skip many events: no sound for
    // it, unless it is the first after joining the room (the game may start as one joins).
    const me = this.isPlayer ? this.seat.seat : null;
    const sound = old && baseline ? null : old || this.joined ? soundOf(old, state, me) : null;
    if (sound) play(sound);
    if (this.premove && !this.premoveStands()) this.premove = null;
    this.render();
    if (this.arrival) this.app.notice(this.arrival); // not said with the tip on how to move
    this.arrival = "";
    this.sendPremove();
  }

  /** During the opponent's turn, in the live game: a click queues a move (a premove). */
  premoving() {
    const state = this.state;
    const me = this.seat.seat;
    return !!state && this.isPlayer && me !== null && state.status === "playing" && state.players[me].active
      && state.turn !== null && state.turn !== me && this.viewing === null;
  }

  /** Whether the queued move still has a turn to wait for: its game goes on with this player in it. */
  premoveStands() {
    const state = this.state;
    const me = this.seat.seat;
    return !!this.premove && this.isPlayer && me !== null && this.premove.game === state.game
      && state.status === "playing" && state.players[me].active;
  }

  /** A square or groove chosen during the opponent's turn: queued, replacing any other;
   * chosen again, taken back. `typed` in the move box: said under it, where the eyes are.
   * @param {string} move @param {boolean} [typed] */
  queuePremove(move, typed = false) {
    const state = this.state;
    if (!this.premoving()) return this.idleTap();
    if (this.premove?.move === move) return this.cancelPremove();
    // The square the pawn stands on: a second tap of a quick double tap, after the move
    // went (an outside review queued "e8" onto its own pawn). Nothing to queue.
    if (move === state.pawns[this.seat.seat] && !typed) return;
    this.premove = { game: state.game, move, typed };
    // A phone has no Esc key to mention.
    const cancel = typed ? (WIDE.matches ? "Esc cancels it" : "type it again to cancel")
      : tapOrClick() === "tap" ? "tap it again to cancel" : "click it again or press Esc to cancel";
    const text = `It is ${seatName(state, state.turn)}'s turn: ${move} is played when yours comes (${cancel}).`;
    if (typed) this.sayCommand(text, "queued");
    else this.app.notice(text);
    this.renderBoard();
  }

  cancelPremove() {
    if (!this.premove) return;
    const { move, typed } = this.premove;
    this.premove = null;
    if (typed) this.sayCommand(`Premove ${move} cancelled.`, "queued");
    else this.app.notice(`Premove ${move} cancelled.`);
    this.renderBoard();
  }

  /** Under the move box, what became of the move typed ("" hides it). A refusal keeps the
   * move in the box, selected, so that typing replaces it (an outside review saw a refused
   * move stay there with the reason in a toast far from it, and a move typed out of turn go
   * without a word by the box). @param {string} text @param {"refused"|"queued"} [kind] */
  sayCommand(text, kind = "refused") {
    this.commandWhy.textContent = text ? sentence(text) : "";
    this.commandWhy.hidden = !text;
    this.commandWhy.className = `command-why ${kind}`;
  }

  /** A move typed in the box refused: it comes back, selected, the reason under the box.
   * @param {any} reply @param {string} move */
  refuseTyped(reply, move) {
    if (reply.code === "offline") return;
    const text = withNames(reply.message, reply.state ?? this.state, this.isPlayer ? this.seat.seat : null);
    if (reply.state) this.onState(reply.state); // first: a newer position would hide the words
    if (!this.command.value) this.command.value = move;
    this.command.focus();
    this.command.select();
    this.sayCommand(text);
  }

  /** Your turn, with a move queued: it goes now. Refused (illegal now), the server's reason
   * is told and nothing else happens: your turn goes on. */
  async sendPremove() {
    const state = this.state;
    if (!this.premove || !this.canPlay() || this.premove.game !== state.game) return;
    const { move, typed } = this.premove;
    this.premove = null;
    this.renderBoard();
    const reply = await this.conn.request({ type: "move", move, ply: state.ply });
    if (reply.type !== "error" || reply.code === "offline") return;
    if (typed) return this.refuseTyped({ ...reply, message: `Premove ${move} not played. ${reply.message}` }, move);
    if (reply.state) this.onState(reply.state);
    this.app.notice(`Premove ${move} not played. ${withNames(reply.message, reply.state ?? this.state, this.seat.seat)}.`);
  }

  /** Announce what changed, in words. @param {any} old @param {any} state */
  describe(old, state) {
    const name = (/** @type {number} */ seat) => seatName(state, seat);
    // The game moved on: a refusal or a tip about the position before says nothing now.
    if (old && (old.ply !== state.ply || old.game !== state.game)) {
      this.app.quiet();
      this.sayCommand("");
    }
    if (state.last_move && (!old || old.ply !== state.ply || old.game !== state.game) && state.ply > 0) {
      announce(moveText(state.last_move.move, name(state.last_move.seat)));
    }
    if (state.status === "finished" && old?.status !== "finished") {
      this.app.quiet(); // a tip or an error from the game just over says nothing now
      if (old?.game === state.game && state.result?.reason === "aborted") {
        this.aborted = { game: state.game, text: this.abortText(old, state) };
        announce(this.aborted.text);
      } else announce(resultText(state.result, name, this.isPlayer ? this.seat.seat : null));
    }
    if (state.status === "waiting" && old?.status === "finished" && old.game === state.game - 1) {
      // A joiner left the room's first game unplayed: out of the room, which waits again
      // (PROTOCOL.md section 14). Who is gone is who held a seat now free.
      const gone = old.players.filter((/** @type {any} */ p, /** @type {number} */ seat) => p.name !== null && state.players[seat].name === null);
      const who = gone.map((/** @type {any} */ p) => p.name).join(" and ") || "The other player";
      this.reopened = { game: state.game, text: `${who} left without playing.` };
      announce(this.reopened.text);
    }
    // Someone took a free seat: said to the players already there (an outside review: the
    // room's creator saw only the tip on how to move). Shown with that tip, or alone.
    if (old && old.game === state.game && this.isPlayer) {
      const came = state.players.filter((/** @type {any} */ p, /** @type {number} */ seat) => p.name !== null && old.players[seat]?.name === null && seat !== this.seat.seat);
      if (came.length) {
        const starts = state.status === "playing" && old.status === "waiting" ? ": the game starts" : "";
        this.arrival = `${listed(came.map((/** @type {any} */ p) => p.name))} joined${starts}.`;
        announce(this.arrival);
      }
    }
    this.describeDraw(old, state);
    this.trackDecline(old, state);
    this.trackRematchDecline(old, state);
    this.describeRematchDecline(old, state);
    // A seat out of a four-player game: how it went, seen as it happened (the record says
    // only "retire N"), for the move list and the player's card.
    if (this.retired?.game !== state.game) this.retired = { game: state.game, how: /** @type {Record<number, string>} */ ({}) };
    for (const [seat, how] of retirements(old, state)) {
      this.retired.how[seat] = how;
      announce(retireText(seat === this.seat.seat && this.isPlayer ? "You" : name(seat), how));
    }
    if (state.status === "playing" && old && old.game !== state.game) {
      announce(`Game ${state.game} starts`);
      this.command.value = ""; // a move refused in the last game means nothing in this one
      // The seats turned (PROTOCOL.md sections 15 and 16): said, not left to be found out from
      // the colours (an outside review: Alice went from red circle to blue diamond in silence).
      if (old.room === state.room && state.players.some((/** @type {any} */ p, /** @type {number} */ seat) => p.name !== old.players[seat]?.name)) {
        this.turned = { game: state.game, seat: this.isPlayer ? this.seat.seat : null };
        announce(this.turnedText(state));
      }
    }
  }

  /** What the turned seats mean for this viewer: "New game, the seats turned: you now play
   * blue (diamond) and move second", or for a spectator who now opens; in a match, with the
   * score (game 2 starts as game 1 ends: its result was never on screen). @param {any} state */
  turnedText(state) {
    const seat = this.turned?.seat ?? null;
    const seatWords = (/** @type {number} */ n) => `${SEAT_NAMES[n]} (${SHAPES[n]})`;
    const said = state.match ? this.matchText(state) : "";
    const score = said ? ` ${said[0].toUpperCase()}${said.slice(1)}.` : "";
    if (seat === null) return `New game, the seats turned: ${seatName(state, 0)} now opens, as ${seatWords(0)}.${score}`;
    return `New game, the seats turned: you now play ${seatWords(seat)} and move ${ORDINALS[seat]}.${score}`;
  }

  /** A match's score by name, "you" for this player: "match after game 1: you 0, Bob 1",
   * and once over its verdict: "Bob wins the match 2–0", "match drawn 1–1". @param {any} state */
  matchText(state) {
    const match = state.match;
    const me = this.isPlayer ? this.seat.seat : null;
    const who = (/** @type {number} */ seat) => (seat === me ? "you" : seatName(state, seat));
    const points = (/** @type {number} */ n) => String(n).replace(".5", "½").replace(/^0½/, "½");
    const high = Math.max(...match.scores), low = Math.min(...match.scores);
    if (match.over && high === 0) return "match over, no game decided"; // aborted unplayed
    if (match.over && match.winner === null) return `match drawn ${points(high)}–${points(low)}`;
    if (match.over) {
      const verdict = match.winner === me ? "you win the match" : `${seatName(state, match.winner)} wins the match`;
      return `${verdict} ${points(high)}–${points(low)}`;
    }
    const played = state.status === "finished" ? match.game : match.game - 1;
    const each = match.scores.map((/** @type {number} */ n, /** @type {number} */ seat) => `${who(seat)} ${points(n)}`);
    return `match after game ${played}: ${each.join(", ")}`;
  }

  /**
   * Why a game this view saw being played was aborted. `result.by` names the seat whose own
   * request ended it (an Abort, or a Resign that aborts a rated game before the first moves);
   * null, the server ended it: the first-move countdown ran out, or every player went away.
   * @param {any} old @param {any} state
   */
  abortText(old, state) {
    const me = this.seat.seat;
    const by = state.result.by;
    if (by !== null) {
      if (this.isPlayer && by === me) {
        // Resigning (claiming, agreeing a draw) before every seat's first move aborts a rated
        // game (PROTOCOL.md, section 14): "you pressed Abort" blamed a button not pressed.
        const ways = { resign: "resigning", claim: "claiming the game", draw: "a draw" };
        const how = ways[/** @type {keyof typeof ways} */ (this.ending ?? "")];
        if (how) return `Game aborted: ${how} before the first moves aborts a rated game.`;
        return "Game aborted: you pressed Abort.";
      }
      return `Game aborted by ${seatName(state, by)} before the first moves.`;
    }
    if (state.players.every((/** @type {any} */ p) => !p.connected)) {
      return "Game aborted: every player went away."; // seen by spectators (PROTOCOL.md, section 13)
    }
    if (old.first_move_in_ms !== null && old.turn !== null) {
      return old.turn === me && this.isPlayer
        ? "Game aborted: you did not make your first move in time."
        : `Game aborted: ${seatName(state, old.turn)} did not make the first move in time.`;
    }
    return "Game aborted.";
  }

  /**
   * A draw offer gone while the game goes on at the same ply was declined (an offer lapses
   * otherwise only by its own seat's move, which changes the ply).
   * @param {any} old @param {any} state
   */
  describeDraw(old, state) {
    if (!old || old.game !== state.game || old.ply !== state.ply || state.status !== "playing") return;
    if (!old.draw_offers.length || state.draw_offers.length) return;
    const me = this.seat.seat;
    if (this.isPlayer && me !== null && old.draw_offers.includes(me)) {
      this.app.notice(state.players.length === 2 ? `${seatName(state, 1 - me)} declined your draw offer.` : "Your draw offer was declined.");
    } else announce("The draw offer was declined.");
  }

  /**
   * Whether this player may not offer a draw again yet, from what the server sent: their
   * offer vanished at the same ply by a request not their own (declined), and they have not
   * moved since. A jump of several plies (a reconnection) may hide their move: the mark goes,
   * and the server's `cannot_draw`, if it comes, sets it again.
   * @param {any} old @param {any} state
   */
  trackDecline(old, state) {
    const me = this.isPlayer ? this.seat.seat : null;
    const moved = !old || old.game !== state.game
      || (old.ply !== state.ply && (state.last_move?.seat === me || state.ply !== old.ply + 1));
    if (this.declinedIn !== null && (moved || state.game !== this.declinedIn || state.status !== "playing")) this.declinedIn = null;
    const declined = old && old.game === state.game && old.ply === state.ply && state.status === "playing"
      && me !== null && old.draw_offers.includes(me) && !state.draw_offers.length && !this.conn.isMine(state);
    if (declined) this.declinedIn = state.game;
  }

  /**
   * A player who left a finished game while this player's rematch request stood declined it,
   * though their client did not say so (a decline withdraws the request: PROTOCOL.md section
   * 15). An outside review saw only "Bob is not in the room". Gone, then back, they are only
   * away no more.
   * @param {any} old @param {any} state
   */
  trackRematchDecline(old, state) {
    const me = this.isPlayer ? this.seat.seat : null;
    if (this.rematchDeclined && this.rematchDeclined.game !== state.game) this.rematchDeclined = null;
    if (!old || me === null || old.game !== state.game || old.status !== "finished" || state.status !== "finished") return;
    if (!old.rematch.includes(me) || !state.rematch.includes(me)) return;
    const gone = state.players
      .filter((/** @type {any} */ p, /** @type {number} */ seat) => seat !== me && p.name && p.bot === null
        && old.players[seat]?.connected && !p.connected && !state.rematch.includes(seat))
      .map((/** @type {any} */ p) => p.name);
    if (!gone.length) return;
    this.rematchDeclined = { game: state.game, names: [...(this.rematchDeclined?.names ?? []), ...gone] };
    announce(`${listed(gone)} declined the rematch and left.`);
  }

  /** Of the players not in the room, those who declined the rematch: by leaving while this
   * player's request stood, or by saying so (`rematch_declined`) and then leaving.
   * @param {string[]} gone */
  declinedOf(gone) {
    const declined = this.rematchDeclined?.game === this.state.game ? [...this.rematchDeclined.names] : [];
    const seat = this.state.rematch_declined ?? null; // null too from a server without the field
    if (seat !== null && seat !== this.seat.seat) declined.push(this.state.players[seat].name);
    return gone.filter((name) => declined.includes(name));
  }

  /** A decline said when it comes (to screen readers: the line over the buttons shows it).
   * @param {any} old @param {any} state */
  describeRematchDecline(old, state) {
    const seat = state.rematch_declined ?? null;
    if (!old || old.game !== state.game || seat === null || old.rematch_declined === seat) return;
    announce(this.isPlayer && seat === this.seat.seat ? "You declined the rematch." : `${seatName(state, seat)} declined the rematch${this.isPlayer ? AGAIN : "."}`);
  }

  /** Who declined the rematch, for the line over the buttons: "You declined the rematch.",
   * "Bob declined the rematch." (a spectator reads "... and left." once they are gone; a
   * player reads that in the note under the banner). Null when nobody did. */
  declinedText() {
    const state = this.state;
    const seat = state.rematch_declined ?? null;
    if (seat === null || !this.rematchOpen()) return null;
    if (this.isPlayer && seat === this.seat.seat) return "You declined the rematch.";
    const gone = !state.players[seat].connected;
    if (gone && this.isPlayer) return null;
    // The one declined reads what they may do now, with the buttons under the line.
    if (this.isPlayer) return `${seatName(state, seat)} declined the rematch${AGAIN}`;
    return `${seatName(state, seat)} declined the rematch${gone ? " and left" : ""}.`;
  }

  /** What a player may do once the game (in a match room, the match) is over, after "The
   * game is over" (a move or a button that raced the game's end): the buttons under the
   * result. "" while their own rematch request stands, for a spectator, or while the match
   * goes on. */
  afterGame() {
    const state = this.state;
    if (!this.isPlayer || !this.rematchOpen() || state.rematch.includes(this.seat.seat)) return "";
    return " “Rematch” asks to play again, “Leave” goes back to the lobby.";
  }

  /** @param {any} line */
  onChat(line) {
    if (!this.showChat(line)) return;
    keepChat(this.seat.code, line);
    if (this.chatPanel.hidden) this.tabChat.classList.add("unread");
    // Behind the Moves tab, a line was only a dot on the Chat tab: on a wide screen it shows
    // in the toast too, over the header (on a phone the toast would move the column under
    // the board, at any moment: the dot stays the sign there, right by the tab).
    if (this.chatPanel.hidden && WIDE.matches) {
      this.app.notice(`Chat · ${line.name}: ${line.text.length > 120 ? `${line.text.slice(0, 119)}…` : line.text}`);
    } else announce(`${line.name} says: ${line.text}`);
  }

  /** Add a line to the chat log, once (a line is a room event: its number names it); false if
   * it is there already. @param {{seat: number, name: string, text: string, event: number}} line */
  showChat(line) {
    if (this.chatLog.querySelector(`li[data-event="${line.event}"]`)) return false;
    const item = h("li", { "data-event": String(line.event) },
      h("b", { class: `seat${line.seat}`, text: `${line.name}: ` }), h("span", { text: line.text }));
    this.chatLog.append(item);
    this.chatLog.scrollTop = this.chatLog.scrollHeight;
    return true;
  }

  /** @param {any} error */
  onError(error) {
    if (error.code === "offline") return;
    const text = withNames(error.message, error.state ?? this.state, this.isPlayer ? this.seat.seat : null);
    if (error.state) this.onState(error.state); // first: a newer position would hide the words
    this.app.notice(error.code === "game_over" ? `${text}.${this.afterGame()}` : text);
  }

  // -- requests ---------------------------------------------------------------

  /** @param {string} move @param {boolean} [typed] in the move box, which says a refusal */
  async play(move, typed = false) {
    const state = this.state;
    if (!state || !this.canPlay()) return;
    window.quoridorTimes = { ...(window.quoridorTimes ?? {}), input: performance.timeOrigin + performance.now() };
    const reply = await this.conn.request({ type: "move", move, ply: state.ply });
    if (reply.type === "error" && typed) this.refuseTyped(reply, move);
    else if (reply.type === "error") this.onError(reply);
  }

  myTurn() {
    const state = this.state;
    return !!state && this.isPlayer && state.status === "playing" && state.turn === this.seat.seat && this.viewing === null;
  }

  /** Your turn with the link up: the board takes a move. */
  canPlay() {
    return this.myTurn() && this.online;
  }

  /** @param {Event} e */
  async sendCommand(e) {
    e.preventDefault();
    // "/" focuses the box; pressed again in it, it is typed there: read past ("/e5" was
    // refused as no move, a newcomer's review).
    const text = this.command.value.trim().replace(/^\/+\s*/, "").toLowerCase();
    if (!text) return;
    if (!this.canPlay() && this.premoving()) {
      this.command.value = "";
      return this.queuePremove(text, true);
    }
    if (!this.canPlay()) {
      const why = this.idleWhy();
      if (why) this.refuseTyped({ type: "error", code: "not_now", message: why }, text);
      return;
    }
    this.command.value = "";
    this.sayCommand("");
    await this.play(text, true); // refused, it comes back into the box, selected
  }

  /** @param {Event} e */
  async sendChat(e) {
    e.preventDefault();
    const text = this.chatInput.value.trim();
    if (!text) return;
    this.chatInput.value = "";
    const reply = await this.conn.request({ type: "chat", text });
    if (reply.type === "error") {
      // Not sent (too fast, say): the line comes back to be sent again, unless another was
      // typed meanwhile (an outside review: the typed text was lost).
      if (!this.chatInput.value) this.chatInput.value = text;
      this.onError(reply);
    }
  }

  /** @param {Record<string, any>} message */
  async act(message) {
    this.ending = message.type; // an abort's banner says whether this page resigned
    const reply = await this.conn.request(message);
    if (reply.type === "error") this.onError(reply);
  }

  /** Claim the game. The button is enabled once the page's countdown has run out, yet the
   * claim can still be early: the server's clock leaves out the server's own stalls
   * (PROTOCOL.md section 12), and its refusal then says how long is left. The page waits that
   * out and claims again, a few times at most, rather than tell the player that nobody has
   * been away long enough about a player it shows as claimable. */
  async claim() {
    // Only the countdown the player saw run out: a refusal about a newer event (the player
    // came back and went again meanwhile) is said, not waited for.
    const seen = this.state.event;
    for (let tries = 1; ; tries++) {
      const reply = await this.conn.request({ type: "claim" });
      if (reply.type !== "error" || this.destroyed) return;
      const early = reply.code === "cannot_claim" && reply.state?.event === seen;
      const wait = early ? claimWait(reply.state, this.seat.seat) : null;
      if (wait === null || tries === CLAIM_TRIES) return this.onError(reply);
      this.onState(reply.state);
      await new Promise((resolve) => setTimeout(resolve, wait));
      if (this.destroyed || this.state.event !== seen) return; // gone, or the room moved on
    }
  }

  /** Offer a draw. Refused with `cannot_draw` (declined before this page knew, as after a
   * reload): the button waits for the next move, as after a decline seen here. */
  async offerDraw() {
    const reply = await this.conn.request({ type: "draw", action: "offer" });
    if (reply.type !== "error") return;
    const state = reply.state ?? this.state;
    if (reply.code === "cannot_draw" && state?.status === "playing") this.declinedIn = state.game;
    this.onError(reply);
    this.renderActions();
  }

  /** A hint from the computer (casual games against it): said in the notice line. */
  async hint() {
    const reply = await this.conn.request({ type: "hint" });
    if (reply.type === "suggestion") {
      // Drawn on the board too, until the next move.
      this.hinted = { game: this.state.game, ply: reply.ply, move: reply.move };
      this.renderBoard();
      this.app.notice(`Hint: the computer would play ${reply.move} (marked on the board).`);
    }
    else if (reply.type === "error") this.onError(reply);
  }

  /** As a spectator, follow the computer's evaluation or stop. */
  async follow() {
    const reply = await this.conn.request({ type: "live_eval", on: !this.following });
    if (reply.type === "live_eval_set") {
      this.following = reply.on;
      this.evalBar.hidden = !reply.on;
      this.renderActions();
    } else if (reply.type === "error" && reply.code === "cannot_evaluate") {
      this.evalRefused = true; // the room's players decide, once for the game
      this.app.notice("The players of this game have not allowed spectators to see the computer's evaluation.");
      this.renderActions();
    } else if (reply.type === "error") this.app.notice(reply.message);
  }

  /** An `evaluation` pushed to this spectator. @param {any} evaluation */
  onEvaluation(evaluation) {
    if (!this.following || !this.state || evaluation.room !== this.state.room) return;
    const names = this.state.players.map((/** @type {any} */ p) => p.name);
    const chance = Math.round(evaluation.win * 100);
    this.evalBar.hidden = false;
    this.evalBar.style.setProperty("--chance", `${chance}%`);
    this.evalBar.setAttribute("aria-valuenow", String(chance));
    // Said in words: "Alice 54% (+0.5)" left the reader to guess what the figures were (an
    // outside review). The score is the first seat's lead in steps of the race (PROTOCOL.md).
    const steps = Math.abs(evaluation.score);
    const lead = steps < 0.05 ? "level in the race" : `${names[evaluation.score > 0 ? 0 : 1]} ${steps.toFixed(1)} steps ahead`;
    this.evalBar.textContent = evaluation.win_in !== null
      ? `${names[evaluation.win_in > 0 ? 0 : 1]} wins by force · best ${evaluation.best}`
      : `${names[0]}'s chances ${chance}% · ${lead} · best ${evaluation.best}`;
    document.body.dataset.evaluated = String(evaluation.ply);
  }

  /** @param {string|null} wall */
  pendingWall(wall) {
    this.wallbar.hidden = !wall;
    if (!wall) return this.app.placeToast();
    // The bar goes over the half of the board away from the wall (and from your pawn, when
    // the wall is near it), not over what it asks about.
    const ghost = this.board.svg.querySelector(".overlay .ghost")?.getBoundingClientRect();
    const board = this.board.svg.getBoundingClientRect();
    this.wallbar.classList.toggle("top", !!ghost && ghost.top + ghost.height / 2 > board.top + board.height / 2);
    this.wallbarText(wall);
  }

  /** The wall bar's question and its answer: during the opponent's turn the wall is queued
   * for yours (a premove), and its button says so (a short word: the bar just fits a phone).
   * On your turn a wall the state's `legal_walls` rule out cannot be placed: the bar says so,
   * then why in the server's words (`explainPending`), and Rotate tries the other way.
   * @param {string} wall */
  wallbarText(wall) {
    const play = this.canPlay();
    // Your turn, the link down: the wall waits, Place greyed until the link is back (an outside
    // review saw the bar close without a word when the connection dropped).
    const held = this.myTurn() && !this.online;
    const refused = play && !this.board.ghostLegal(parseWall(wall));
    $(".wallbar-text", this.wallbar).textContent = `Wall ${wall}?`;
    const place = /** @type {HTMLButtonElement} */ ($(".wallbar .primary", this.wallbar));
    place.textContent = play || held ? "Place wall" : "Premove";
    place.disabled = refused || held;
    const why = $(".wallbar-why", this.wallbar);
    why.hidden = !refused && !held;
    if (held) why.textContent = "Not connected: you can place it once the connection is back.";
    if (refused) {
      const key = `${this.state.game}:${this.state.ply}:${wall}`;
      if (this.why?.key !== key) this.explainPending(wall, key); // sets this.why at once
      why.textContent = this.why?.text ?? "";
    }
    this.app.placeToast(); // the bar may have grown or shrunk by its line of why
  }

  /**
   * Why the wall waiting in the bar cannot be placed. The client knows no rule: it sends the
   * wall, as a click where no wall may go does (`explainWall`), and the server's refusal is
   * the reason. `legal_walls` came from the server for this very ply, so the wall is refused,
   * never placed.
   * @param {string} wall @param {string} key
   */
  async explainPending(wall, key) {
    this.why = { key, text: `Wall ${wall} cannot be placed here.` }; // until the server says why
    const reply = await this.conn.request({ type: "move", move: wall, ply: this.state.ply });
    if (reply.type !== "error" || this.why?.key !== key) return;
    if (reply.code !== "illegal_move") {
      if (reply.state) this.onState(reply.state); // the game moved on meanwhile: its bar says so
      return;
    }
    this.why.text = withNames(reply.message, reply.state ?? this.state, this.seat.seat);
    if (!this.wallbar.hidden && $(".wallbar-text", this.wallbar).textContent === `Wall ${wall}?`) this.wallbarText(wall);
  }

  // -- drawing ----------------------------------------------------------------

  /** The variant as the title says it: "2 players" left out (the two cards say it). @param {any} state */
  variantTitle(state) {
    const clock = state.clock && { base: state.clock.base_ms / 1000, increment: state.clock.increment_ms / 1000 };
    return variantText(state.variant, clock, false)
      // A match says so, and which game (an outside review: a spectator could not tell).
      + (state.match ? ` · match, game ${state.match.game} of ${state.match.games}` : "");
  }

  render() {
    const state = this.state;
    if (!state) return;
    fill(this.title, h("span", { class: "code", text: state.room }), state.rated ? h("span", { class: "rated-tag", text: "rated" }) : null,
      h("span", { class: "variant", text: this.variantTitle(state) }),
      // Who watches, as the lobby says it (the count comes with the next state or move); its
      // own span, so that a phone's narrow title cuts the variant rather than the count.
      state.spectators ? h("span", { class: "watching", text: `· ${state.spectators} watching` }) : null);
    this.root.classList.toggle("four", state.variant.players === 4);
    // The bar's share is the first seat's, named as the players are everywhere on the page.
    this.evalBar.setAttribute("aria-label", `${seatName(state, 0)}'s chances`);
    this.renderBoard();
    this.renderPlayers();
    this.renderBanner();
    this.renderNote();
    this.renderActions();
    this.renderMoves();
    this.chatForm.hidden = !this.isPlayer;
    // A spectator's keys are the move list's only.
    for (const item of this.keysHelp.querySelectorAll("[data-player]")) /** @type {HTMLElement} */ (item).hidden = !this.isPlayer;
    this.chatNote.hidden = this.isPlayer;
    // The tab's title says when it is your move, for a player looking at another tab.
    document.title = `${this.myTurn() ? "Your move · " : ""}${state.room} · Quoridor`;
    document.body.dataset.ply = String(state.ply);
    document.body.dataset.status = state.status;
    window.quoridorTimes = { ...(window.quoridorTimes ?? {}), render: performance.timeOrigin + performance.now() };
  }

  renderBoard() {
    const state = this.state;
    const frame = this.viewing !== null ? this.frames?.frames[this.viewing] : null;
    const live = !frame;
    this.board.render({
      size: state.variant.size,
      players: state.variant.players,
      pawns: frame ? frame.pawns : state.pawns,
      walls: frame ? frame.walls : state.walls,
      lastMove: frame ? frame.last_move : state.last_move?.move ?? null,
      lastFrom: live ? lastFrom(state, this.previous) : null,
      turn: frame ? (frame.winner === null ? frame.turn : null) : state.turn,
      targets: this.canPlay() ? state.legal_pawn_moves : [],
      legalWalls: this.canPlay() ? state.legal_walls : "",
      turns: this.turns(),
      interactive: this.canPlay(),
      premoving: live && this.premoving(),
      premove: live ? this.premove?.move ?? null : null,
      seat: this.seat.seat,
      hold: live && this.myTurn() && !this.online,
      hint: live && this.hinted?.game === state.game && this.hinted.ply === state.ply ? this.hinted.move : null,
      out: live ? outSeats(state) : [],
    });
    // A wall waiting in the wall bar since the opponent's turn: the turn now yours, its button
    // places it rather than queue it.
    const pending = this.board.pending ? this.board.svg.querySelector(".overlay .ghost")?.getAttribute("data-wall") : null;
    if (pending) this.wallbarText(pending);
    // Until the keyboard is used (again: the cursor hides when the board loses the focus), its
    // cursor waits on your own pawn, where it is now, rather than where the game began.
    if (this.isPlayer && live && !this.board.cursor.shown) this.board.placeCursor(state.pawns[/** @type {number} */ (this.seat.seat)]);
    this.root.classList.toggle("my-turn", this.canPlay());
  }

  renderPlayers() {
    const state = this.state;
    // Looking back at a move: the distances and walls left of that position.
    const shown = this.viewing !== null && this.frames ? this.frames.frames[this.viewing] ?? state : state;
    const out = outSeats(state);
    const items = state.players.map((/** @type {any} */ player, /** @type {number} */ seat) => {
      const toMove = state.status === "playing" && state.turn === seat;
      const you = this.isPlayer && seat === this.seat.seat;
      const classes = ["player", `seat${seat}`];
      if (toMove) classes.push("to-move");
      if (out.includes(seat)) classes.push("out");
      if (you) classes.push("you");
      const status = !player.name ? "free seat" : player.bot ? `computer, level ${player.bot}` : player.connected ? "online" : "away";
      return h("li", { class: classes.join(" "), "data-seat": seat },
        swatch(seat),
        h("span", { class: "who" },
          // In a rated room every seat is an account (or the computer): its name opens its profile.
          state.rated && player.name
            ? nameView("a", player.name, { href: `#/profile/${encodeURIComponent(player.name)}` })
            : nameView("span", player.name ?? "waiting…"),
          h("span", { class: "meta" },
            h("span", { class: `dot ${player.connected || player.bot ? "on" : "off"}`, title: status, "aria-label": status }),
            " ",
            ratingBadge(player),
            you ? "you · " : "",
            // Whole on a line of its own if need be: a phone's card with a clock split "8 to" / "go".
            h("span", { class: "to-go", text: `${shown.distances[seat] >= 0 ? shown.distances[seat] : "–"} to go` }),
            // Out of a four-player game that goes on: how, where this page saw it.
            out.includes(seat) ? ` · ${OUT[this.retired?.game === state.game ? this.retired.how[seat] : ""] ?? "out"}` : "",
            player.claim_in_ms !== null && player.active ? h("span", { class: "away", "data-claim": player.claim_in_ms }) : null,
            // The thinking limit of an untimed game (PROTOCOL.md section 13): shown near its end.
            toMove && (state.move_claim_in_ms ?? null) !== null && player.connected ? h("span", { class: "slow", "data-claim": state.move_claim_in_ms, "data-you": you ? "1" : "" }) : null,
          ),
        ),
        stock(shown.walls_left[seat], state.variant.walls),
        state.clock ? h("span", { class: "clock", "data-seat": seat }) : null,
      );
    });
    this.playersList.replaceChildren(...items);
    this.tick();
  }

  /** Clocks and away countdowns, counted down from the last state's figures. */
  tick() {
    const state = this.state;
    if (!state) return;
    const elapsed = performance.now() - this.receivedAt;
    if (state.clock) {
      for (const node of this.playersList.querySelectorAll(".clock")) {
        const seat = Number(/** @type {HTMLElement} */ (node).dataset.seat);
        const running = state.clock.running === seat;
        const ms = state.clock.remaining_ms[seat] - (running ? elapsed : 0);
        node.textContent = clockText(ms);
        node.classList.toggle("running", running);
        const low = ms < Math.min(LOW_TIME_MS, state.clock.base_ms / 4);
        node.classList.toggle("low", low);
        // One's own time running low is said once a game, by ear too (the eyes are on the board).
        const game = `${state.room} ${state.game}`;
        if (low && running && this.isPlayer && seat === this.seat.seat && this.lowTimeSaid !== game) {
          this.lowTimeSaid = game;
          play("low");
        }
      }
    }
    const first = state.status === "playing" && state.first_move_in_ms !== null && state.turn !== null;
    this.countdown.hidden = !first;
    if (first) {
      const left = Math.max(0, Math.ceil((state.first_move_in_ms - elapsed) / 1000));
      // In a later game of a match the seat that does not start loses the game (PROTOCOL.md 16).
      const lost = state.match !== null && state.match.game > 1;
      this.countdown.textContent = this.isPlayer && state.turn === this.seat.seat
        ? `You have ${left} s to make your first move, or ${lost ? "you lose the game" : "the game is aborted"}.`
        : `${seatName(state, state.turn)} has ${left} s to make the first move, or ${lost ? "loses the game" : "the game is aborted"}.`;
    }
    let claimable = false;
    // The claim button shows while someone is away, or in the thinking limit's last minutes.
    let shown = false;
    for (const node of this.playersList.querySelectorAll(".away")) {
      shown = true;
      const left = Number(/** @type {HTMLElement} */ (node).dataset.claim) - elapsed;
      node.textContent = left > 0 ? ` · away, claim in ${Math.ceil(left / 1000)} s` : " · away, can be claimed";
      if (left <= 0) claimable = true;
    }
    for (const node of this.playersList.querySelectorAll(".slow")) {
      const data = /** @type {HTMLElement} */ (node).dataset;
      const left = Number(data.claim) - elapsed;
      const you = data.you === "1";
      node.textContent = left > SLOW_SHOWN_MS ? ""
        : left > 0 ? (you ? ` · move within ${Math.ceil(left / 1000)} s, or the game may be claimed` : ` · thinking, claim in ${Math.ceil(left / 1000)} s`)
        : you ? " · move now: the game may be claimed" : " · has not moved, can be claimed";
      if (left <= SLOW_SHOWN_MS && !you) shown = true;
      if (left <= 0 && !you) claimable = true;
    }
    const claim = this.actions.querySelector(".claim");
    if (claim) {
      /** @type {HTMLButtonElement} */ (claim).disabled = !claimable;
      /** @type {HTMLButtonElement} */ (claim).hidden = !shown;
    }
  }

  /**
   * Copy the room's link. The clipboard API exists only on a secure page (https, or this
   * machine's own address): over plain http from another machine, as the README's network
   * game is served, Copy did nothing at all (an outside review). There the link is selected
   * and copied the older way, or left selected with a word on how to copy it.
   * @param {string} link
   */
  copyLink(link) {
    const copied = () => this.app.notice("Link copied");
    if (navigator.clipboard) {
      navigator.clipboard.writeText(link).then(copied, () => this.selectLink(link));
      return;
    }
    this.selectLink(link);
  }

  /** @param {string} link */
  selectLink(link) {
    const share = this.banner.querySelector("a.share");
    const selection = getSelection();
    if (share && selection) {
      const range = document.createRange();
      range.selectNodeContents(share);
      selection.removeAllRanges();
      selection.addRange(range);
    }
    let done = false;
    try {
      done = document.execCommand("copy");
    } catch {
      done = false;
    }
    const keys = navigator.platform.startsWith("Mac") ? "⌘C" : "Ctrl+C";
    this.app.notice(done ? "Link copied" : `The link is selected: press ${keys} to copy it (${link})`);
  }

  renderBanner() {
    const state = this.state;
    const name = (/** @type {number} */ seat) => seatName(state, seat);
    let text = "";
    let kind = "";
    if (state.status === "waiting") {
      const link = `${location.origin}/#/room/${state.room}`;
      // Open again after a joiner left its game unplayed (PROTOCOL.md section 14): said why.
      const again = this.reopened?.game === state.game ? `${this.reopened.text} Waiting for another player.` : "Waiting for players.";
      fill(this.banner, h("span", { text: `${again} Send this link: ` }),
        h("a", { href: link, class: "share", text: link }),
        h("button", { type: "button", class: "copy", text: "Copy", onclick: () => this.copyLink(link) }));
      this.banner.className = "banner waiting";
      return;
    }
    if (state.status === "finished") {
      text = this.aborted?.game === state.game && state.result?.reason === "aborted" ? this.aborted.text : resultText(state.result, name, this.isPlayer ? this.seat.seat : null);
      // A match's end is the match's verdict, not its last game's (an outside review: a match
      // drawn 1–1 showed "Alice wins ... (over)" in the loser's red).
      const winner = state.match?.over ? state.match.winner : state.result?.winner;
      const mine = this.isPlayer && winner === this.seat.seat;
      kind = winner === null ? "draw" : mine ? "won" : this.isPlayer ? "lost" : "over";
      if (state.match) text += ` · ${this.matchText(state)}`;
    } else if (this.viewing !== null) {
      // Whose turn it is now stays said: looking back should not hide that the clock runs.
      const me = this.isPlayer ? this.seat.seat : null;
      const live = state.turn === null ? "" : state.turn === me ? " · live: your move" : ` · live: ${name(state.turn)} to move`;
      // Numbered as the move list numbers them, a round to a number: the move shown named.
      const { round, rounds } = roundOf(state.moves, state.variant.players, this.viewing);
      const move = state.moves[this.viewing - 1] ?? "";
      const what = move.startsWith("retire ") ? retireText(name(Number(move.slice(7)))) : move;
      text = this.viewing === 0 ? `Viewing the start${live}` : `Viewing move ${round} of ${rounds} (${what})${live}`;
      kind = "history";
    } else if (this.myTurn() && !this.online) {
      text = "Your move, once the connection is back";
      kind = "offline";
    } else if (this.myTurn()) {
      text = "Your move";
      kind = "turn";
      if (!this.toldHow && state.ply < state.players.length) {
        // The player's first move in this view: how a move is made here, in a toast that
        // leaves the board its size (typing a move is the move box's placeholder).
        this.toldHow = true;
        const arrival = this.arrival ? `${this.arrival} ` : "";
        this.arrival = "";
        this.app.notice(`${arrival}${sentence(tapOrClick())} a dot to step, or the groove between two squares for a wall.`);
      }
    } else if (state.turn !== null) {
      text = `${this.isPlayer ? "" : "Watching · "}${name(state.turn)} to move`;
    }
    const me = this.isPlayer ? this.seat.seat : null;
    if (state.draw_offers.length && state.status === "playing") text += ` · draw offered by ${listed(state.draw_offers.map((/** @type {number} */ seat) => (seat === me ? "you" : name(seat))))}`;
    this.banner.className = `banner ${kind}`;
    this.banner.textContent = text;
  }

  /** The draw buttons for seat `me`: none against the computer, which never agrees (the
   * server refuses the offer). @param {number} me */
  drawButtons(me) {
    const state = this.state;
    if (state.players.some((/** @type {any} */ p) => p.active && p.bot !== null)) return [];
    if (state.draw_offers.includes(me)) {
      const others = state.players.length === 2 ? seatName(state, 1 - me) : "the others";
      const why = `Your draw offer stands until ${others} answer${state.players.length === 2 ? "s" : ""}; it lapses when you move.`;
      return [h("button", { type: "button", class: "draw", disabled: true, title: why, text: "Draw offered" })];
    }
    if (state.draw_offers.some((/** @type {number} */ seat) => seat !== me)) {
      return [
        h("button", { type: "button", class: "primary", text: "Accept draw", onclick: () => this.act({ type: "draw", action: "accept" }) }),
        h("button", { type: "button", text: "Decline", onclick: () => this.act({ type: "draw", action: "decline" }) }),
      ];
    }
    // The server refuses a second offer before the next move: the button says so, not a toast.
    if (this.declinedIn === state.game) {
      const why = "Your draw offer was declined: you can offer again after your next move.";
      return [h("button", { type: "button", class: "draw", disabled: true, title: why, text: "Offer draw" })];
    }
    return [h("button", { type: "button", class: "draw", text: "Offer draw", onclick: () => this.offerDraw() })];
  }

  /** The other players (not the computer) not connected to the room: their names. @returns {string[]} */
  absent() {
    const state = this.state;
    return state.players
      .filter((/** @type {any} */ p, /** @type {number} */ seat) => seat !== this.seat.seat && p.name && p.bot === null && !p.connected)
      .map((/** @type {any} */ p) => p.name);
  }

  /**
   * A lasting note under the banner for what a toast would say too briefly: a rated room takes
   * only players logged in (said to its creator while waiting, and to a guest who came to
   * play and watches instead, with the log-in form), and a finished game's absent players.
   */
  renderNote() {
    const state = this.state;
    const free = state.status === "waiting" && state.players.some((/** @type {any} */ p) => !p.name);
    const parts = [];
    if (state.rated && free && this.isPlayer) {
      parts.push(h("p", { text: "This room is rated: only a player logged in to an account can take the free seat. A guest who opens the link will watch instead." }),
        h("button", { type: "button", class: "casual", text: "Make a casual room instead", onclick: () => this.remakeCasual() }));
    } else if (state.rated && free && !this.app.account()) {
      parts.push(h("p", { text: "This room is rated: only players logged in to an account can take a seat, so you are watching." }),
        loginForm(this.conn, this.app, "Log in or register to take the seat"));
    } else if (state.status === "finished" && this.isPlayer && this.absent().length) {
      const declined = this.declinedOf(this.absent());
      const gone = this.absent().filter((name) => !declined.includes(name));
      const said = declined.length ? `${listed(declined)} declined the rematch and left.` : "";
      const away = gone.length ? `${listed(gone)} ${gone.length > 1 ? "are" : "is"} not in the room: a rematch can start only if they come back.` : "";
      parts.push(h("p", { text: [said, away].filter(Boolean).join(" ") }));
    } else if (this.turned?.game === state.game && state.status === "playing" && state.ply < state.players.length) {
      // Until everyone has moved once in the new game.
      const seat = this.turned.seat;
      parts.push(h("p", {}, seat === null ? null : swatch(seat), seat === null ? null : " ", this.turnedText(state)));
    } else if (this.evalNotShared()) {
      // This player allowed it, the room does not show it: only every player's consent does
      // (PROTOCOL.md section 17b). Said until everyone has moved once (an outside review
      // ticked the box, and its spectators got no evaluation, with no word why).
      parts.push(h("p", { text: "Spectators cannot follow the evaluation of this game: only when every player allows it (the lobby's box)." }));
    }
    // Drawn again only when it changes: the log-in form keeps what is typed in it.
    const key = parts.map((part) => part.textContent).join("|");
    if (key === this.noteKey) return;
    this.noteKey = key;
    this.note.replaceChildren(...parts);
    this.note.hidden = !parts.length;
  }

  /** Whether this player allowed spectators the evaluation of a game that could have it (a
   * new, untimed game between two people) and the room does not give it. */
  evalNotShared() {
    const state = this.state;
    const people = state.players.every((/** @type {any} */ p) => p.bot === null);
    return this.isPlayer && allowsSpectatorEval() && !state.spectator_eval && state.status === "playing"
      && state.clock === null && state.variant.players === 2 && people && state.ply < state.players.length;
  }

  /** Whether ending the game now walks out of a quick match's pairing: its first game, before
   * every seat still in it has moved (PROTOCOL.md section 4, `state.quick`). */
  walksOut() {
    const state = this.state;
    const seats = state.players.filter((/** @type {any} */ p) => p.active).length;
    return state.quick === true && state.game === 1 && state.ply < seats;
  }

  /** The same game in a new casual room (private: it is made for a link), this one left. */
  remakeCasual() {
    const state = this.state;
    const clock = state.clock && { base: state.clock.base_ms / 1000, increment: state.clock.increment_ms / 1000 };
    this.app.remake({ type: "create", variant: state.variant, clock, match: state.match !== null, private: true, rated: false });
  }

  renderActions() {
    const state = this.state;
    const buttons = [];
    if (this.isPlayer) {
      const me = /** @type {number} */ (this.seat.seat);
      if (state.status === "playing" && state.players[me].active) {
        const seats = state.players.filter((/** @type {any} */ p) => p.active).length;
        // Ending a quick match's first game before every first move costs a wait before the
        // next quick match (PROTOCOL.md section 4, walking out): said before, not after.
        const walkout = this.walksOut();
        const ask = (/** @type {"resign"|"abort"} */ what) => { this.confirming = what; this.renderActions(); };
        if (this.confirming) {
          const what = this.confirming === "abort" ? "abort" : "resign";
          if (walkout) buttons.push(h("p", { class: "leave-note walkout-note", role: "alert", text: WALKOUT }));
          buttons.push(h("button", { type: "button", class: "danger", text: `Really ${what}?`, onclick: () => { this.confirming = false; this.act({ type: what }); } }));
          buttons.push(h("button", { type: "button", text: "Keep playing", onclick: () => { this.confirming = false; this.renderActions(); } }));
        } else {
          buttons.push(h("button", { type: "button", text: "Resign", onclick: () => ask("resign") }));
          buttons.push(...this.drawButtons(me));
          // A match's later games cannot be aborted (PROTOCOL.md section 16): resigned or played.
          const abortable = state.ply < seats && !(state.match && state.match.game > 1);
          if (abortable) buttons.push(h("button", { type: "button", text: "Abort", onclick: () => walkout ? ask("abort") : this.act({ type: "abort" }) }));
        }
        const slow = (state.move_claim_in_ms ?? null) !== null && state.turn !== me;
        if (slow || state.players.some((/** @type {any} */ p, /** @type {number} */ seat) => seat !== me && p.active && p.claim_in_ms !== null)) {
          // As the countdown (`tick`) left it, so that an unchanged button stays in place.
          const drawn = /** @type {HTMLButtonElement|null} */ (this.actions.querySelector(".claim"));
          // With three seats or more in, a claim takes the absent out and the game goes on
          // (PROTOCOL.md section 17): "Claim win" won nothing there (an outside review).
          const text = seats > 2 ? "Remove from game" : "Claim win";
          const title = seats > 2 ? "Take the player who stayed away out of the game; it goes on without them." : "";
          buttons.push(h("button", { type: "button", class: "claim", disabled: drawn?.disabled ?? true, hidden: drawn?.hidden ?? false, text, title, onclick: () => this.claim() }));
        }
      }
      if (this.rematchOpen()) {
        const asked = state.rematch.includes(me);
        // A rematch starts only with every player there (PROTOCOL.md section 15): said when one
        // is not, unless they declined it by leaving (the note says so).
        const declined = this.declinedOf(this.absent());
        const gone = this.absent().filter((who) => !declined.includes(who));
        const text = asked
          ? gone.length ? `Rematch asked: waits for ${listed(gone)} to come back` : "Rematch asked"
          : gone.length ? `Rematch (if ${listed(gone)} comes back)` : state.rematch.length ? "Accept rematch" : "Rematch";
        buttons.push(h("button", { type: "button", class: asked || gone.length ? "" : "primary", disabled: asked, text, onclick: () => this.act({ type: "rematch" }) }));
        // Another player's request to answer: no is a button too (PROTOCOL.md section 15).
        if (!asked && state.rematch.some((/** @type {number} */ seat) => seat !== me)) {
          buttons.push(h("button", { type: "button", class: "decline-rematch", text: "Decline", onclick: () => this.act({ type: "rematch", action: "decline" }) }));
          // The answer's two buttons make a row of their own: with Analyse and "Decline and
          // leave" beside them the last one wrapped alone (an outside review).
          buttons.push(h("span", { class: "row-break", "aria-hidden": "true" }));
        }
      }
    }
    const me = this.seat.seat;
    const computer = me !== null && state.players.length === 2 && state.players[1 - me].bot !== null;
    if (this.isPlayer && computer && state.clock === null && state.status === "playing" && state.turn === me) {
      buttons.push(h("button", { type: "button", text: "Hint", onclick: () => this.hint() }));
      if (state.ply >= 2) buttons.push(h("button", { type: "button", text: "Take back", onclick: () => this.act({ type: "takeback" }) }));
    }
    // The game just ended, in the history (`result.game_id`): its replay, analysed at once
    // where the computer can (two players). The room and the seat stay: the replay's "Back
    // to the game" comes back here, a rematch still open.
    const saved = state.status === "finished" ? state.result?.game_id ?? null : null;
    if (saved !== null && state.moves.length > 0 && !this.leaving) {
      const two = state.players.length === 2;
      buttons.push(h("button", { type: "button", class: "review", text: two ? "Analyse" : "Replay",
        title: two ? "Replay this game with the computer's analysis." : "Replay this game.",
        onclick: () => this.app.go(`#/replay/${saved}${two ? "/analyse" : ""}`) }));
    }
    // Offered only where the players allowed it (`state.spectator_eval`): elsewhere the
    // button only ever said "No evaluation here".
    if (!this.isPlayer && state.spectator_eval) {
      buttons.push(this.evalRefused
        ? h("button", { type: "button", disabled: true, text: "No evaluation here" })
        : h("button", { type: "button", text: this.following ? "Hide evaluation" : "Follow evaluation", onclick: () => this.follow() }));
    }
    if (state.status !== "playing") this.confirming = false;
    // Asked whether to leave, the question and its two answers stand alone: with the other
    // buttons beside them they took a row more, too many for a phone's side column.
    const leave = this.leaveButtons();
    patch(this.actions, this.leaving ? leave : [this.rematchLine(), ...buttons, ...leave].filter((node) => node !== null));
    // The move box too gives the question its room (a phone's column scrolled, the move list
    // pushed out of sight).
    this.commandForm.hidden = !this.isPlayer || state.status !== "playing" || this.leaving;
    this.tick();
  }

  /** Whether the game (in a match room, the match) is over, so that a rematch may be asked. */
  rematchOpen() {
    const state = this.state;
    return state.status === "finished" && (!state.match || state.match.over);
  }

  /** Who asks for a rematch, over the buttons: "Alice asks for a rematch", "You asked for a
   * rematch: waiting for Bob" (an outside review: only "Accept rematch (1/2)" said it, "1/2"
   * read as a draw score). @returns {HTMLElement|null} */
  rematchLine() {
    const state = this.state;
    if (!this.rematchOpen()) return null;
    if (!state.rematch.length) {
      const declined = this.declinedText();
      return declined === null ? null : h("p", { class: "rematch-note", text: declined });
    }
    const me = this.isPlayer ? this.seat.seat : null;
    const name = (/** @type {number} */ seat) => seatName(state, seat);
    const others = state.rematch.filter((/** @type {number} */ seat) => seat !== me);
    const count = state.players.length > 2 ? ` (${state.rematch.length} of ${state.players.length})` : "";
    // One who asked and then left is said as gone: "Bob asks for a rematch" over "Bob is not
    // in the room" read as a contradiction (an outside review).
    const away = this.absent();
    const here = others.filter((/** @type {number} */ seat) => !away.includes(name(seat)));
    const left = others.filter((/** @type {number} */ seat) => away.includes(name(seat)));
    let text = [
      here.length ? `${listed(here.map(name))} ask${here.length > 1 ? "" : "s"} for a rematch${count}.` : "",
      left.length ? `${listed(left.map(name))} asked for a rematch, then left${here.length ? "" : count}.` : "",
    ].filter(Boolean).join(" ");
    if (me !== null && state.rematch.includes(me)) {
      // Waiting for the seats that have not asked, or, all asked, for those not in the room.
      // One who declined by leaving waits for nothing: the note over the buttons says so.
      const declined = this.declinedOf(this.absent());
      const waiting = state.players.map((/** @type {any} */ _p, /** @type {number} */ seat) => seat).filter((/** @type {number} */ seat) => !state.rematch.includes(seat)).map(name)
        .filter((/** @type {string} */ who) => !declined.includes(who));
      const gone = this.absent().filter((who) => !declined.includes(who));
      const still = waiting.length ? `: waiting for ${listed(waiting)}` : gone.length ? `: waiting for ${listed(gone)} to come back` : "";
      text = `${others.length ? `You and ${listed(others.map(name))}` : "You"} asked for a rematch${still}.`;
    }
    return h("p", { class: "rematch-note", text });
  }

  /** Whether this page plays a game in progress, still in it: leaving it is asked first. */
  inGame() {
    const state = this.state;
    const me = this.seat.seat;
    return !!state && this.isPlayer && me !== null && state.status === "playing" && state.players[me].active;
  }

  /** Ask whether to leave (the Leave button's question), from a navigation away. */
  askToLeave() {
    this.leaving = true;
    this.renderActions();
    this.actions.scrollIntoView({ block: "nearest" });
    /** @type {HTMLElement|null} */ (this.actions.querySelector(".stay"))?.focus();
  }

  /**
   * Leave: at once for a spectator or a game over; during a game this page plays, asked again
   * (as Resign is), saying what leaving does (PROTOCOL.md sections 12 and 13): the seat is kept
   * and the link brings the player back, but the clock runs and the others may claim the game;
   * against the computer, which never claims, the game is lost once the grace period is over.
   */
  leaveButtons() {
    const state = this.state;
    const me = this.seat.seat;
    const playing = this.inGame();
    this.leaving = this.leaving && playing;
    if (!this.leaving) {
      // Asked for a rematch, leaving says no first, so that the askers read a decline, not
      // only that the player is gone ("… is not in the room", an outside review).
      const offered = this.isPlayer && me !== null && this.rematchOpen() && state.rematch.length > 0 && !state.rematch.includes(me);
      return [h("button", { type: "button", class: "leave", text: offered ? "Decline and leave" : "Leave",
        title: offered ? "Decline the rematch and go back to the lobby." : "", onclick: async () => {
        if (offered) await this.conn.request({ type: "rematch", action: "decline" }); // refused: left all the same
        if (!playing) return this.app.leave();
        this.leaving = true;
        this.renderActions();
      } })];
    }
    // Against the computer nobody waits to claim: the server ends the game itself once the
    // grace period is over (PROTOCOL.md section 17a), as the terminal client says too.
    const computer = state.players.some((/** @type {any} */ p, /** @type {number} */ seat) => seat !== me && p.bot !== null);
    const others = state.players.length === 2 ? seatName(state, 1 - /** @type {number} */ (me)) : "the others";
    const clock = state.clock ? ", your clock keeps running" : "";
    const text = computer
      ? "Leave the game? The computer does not wait: unless you come back within about 15 s (the lobby's “Back to your game” brings you back), the game is lost."
      : `Leave the game? Your seat is kept for you (the lobby's “Back to your game” brings you back)${clock}, but after a short while away, ${others} may claim the game.`
        + (this.walksOut() ? ` ${WALKOUT}` : "");
    return [
      h("p", { class: "leave-note", role: "alert", text }),
      h("button", { type: "button", class: "danger leave-confirm", text: "Leave anyway", onclick: () => { this.leaving = false; this.app.leave(true); } }),
      h("button", { type: "button", class: "stay", text: "Stay", onclick: () => { this.leaving = false; this.renderActions(); } }),
    ];
  }

  renderMoves() {
    const state = this.state;
    // The move button that has the focus is drawn again: the new one gets it, or, stepped
    // from with ← →, the one shown (an outside review saw e3 ringed beside e3h shown).
    const active = /** @type {HTMLElement|null} */ (document.activeElement);
    const focused = active?.closest(".movelist") === this.moveList ? String(this.viewing ?? active.dataset.ply) : undefined;
    const how = this.retired?.game === state.game ? this.retired.how : {};
    const items = moveListItems(state.moves, state.variant.players, this.viewing, (frame) => this.showPly(frame), (seat) => seatName(state, seat), how);
    this.moveList.replaceChildren(...items);
    if (focused) /** @type {HTMLElement|null} */ (this.moveList.querySelector(`button[data-ply="${focused}"]`))?.focus();
    this.liveButton.hidden = this.viewing === null;
    if (this.viewing === null) this.moveList.parentElement?.scrollTo({ top: 1e6 });
  }

  /** Show the position after `ply` moves (null: the game as it is now). @param {number|null} ply */
  async showPly(ply) {
    const state = this.state;
    if (!state) return;
    if (ply === null || ply >= state.moves.length) {
      this.viewing = null;
      this.render();
      return;
    }
    // Retirements are actions too: the frame index counts them (replay_frames has one per action).
    const key = `${state.game}:${state.moves.length}`;
    if (this.frames?.key !== key) {
      const reply = await this.conn.request({ type: "replay", variant: state.variant, moves: state.moves });
      if (reply.type !== "replay_frames") return this.onError(reply);
      this.frames = { key, frames: reply.frames };
    }
    this.viewing = Math.max(0, Math.min(ply, this.frames.frames.length - 1));
    this.render();
  }

  /** ← → Home End step through the game's moves, as in the replay viewer. @param {KeyboardEvent} e */
  historyKeys(e) {
    const target = /** @type {HTMLElement} */ (e.target);
    if (e.key === "Escape" && this.premove) return this.cancelPremove();
    if (e.key === "Escape" && this.leaving) {
      // The question "Leave the game?" answered as Stay does (a review: Esc left it open).
      this.leaving = false;
      this.renderActions();
      return;
    }
    if (!this.state || target.closest("input, textarea, svg")) return;
    const now = this.viewing ?? this.state.moves.length;
    const last = this.state.moves.length;
    const next = { ArrowLeft: now - 1, ArrowRight: now + 1, Home: 0, End: last }[e.key];
    if (next === undefined) return;
    e.preventDefault();
    this.showPly(next >= last ? null : Math.max(0, next));
  }
}

/**
 * The keys, for a sighted keyboard player (the board's own were said to screen readers
 * only): a "Keys" line that opens a short list. Not on a touch screen (style.css), where it
 * would only take a phone's room. `play`: the game page's board keys too, else the replay's.
 * @param {boolean} play
 */
export function keysHelp(play) {
  const key = (/** @type {string[]} */ keys, /** @type {string} */ what, /** @type {boolean} */ player = false) =>
    h("li", player ? { "data-player": "1" } : {}, ...keys.flatMap((k, i) => [i ? " " : null, h("kbd", { text: k })]), ` ${what}`);
  const items = play
    ? [
      key(["Tab"], "to the board: arrows move its cursor, Enter plays there", true),
      key(["W"], "walls: the cursor walks the groove crossings", true),
      key(["R"], "turns the wall", true),
      key(["Esc"], "back to squares; takes back a premove", true),
      key(["/"], "the move box: type e2 or e3h", true),
      key(["←", "→", "Home", "End"], "step through the moves (off the board)"),
    ]
    : [key(["←", "→", "Home", "End"], "step through the moves")];
  return h("details", { class: "keys" }, h("summary", { text: "Keys" }), h("ul", {}, ...items));
}

/**
 * Milliseconds until `state` lets seat `me` claim (the soonest of its countdowns, PROTOCOL.md
 * section 13), or null when none is still running: a refused claim was then refused for
 * another reason than being early.
 * @param {any} state @param {number|null} me @returns {number|null}
 */
function claimWait(state, me) {
  const waits = state.players
    .filter((/** @type {any} */ p, /** @type {number} */ seat) => seat !== me && p.active && p.claim_in_ms !== null)
    .map((/** @type {any} */ p) => p.claim_in_ms);
  if ((state.move_claim_in_ms ?? null) !== null && state.turn !== me) waits.push(state.move_claim_in_ms);
  const wait = waits.length ? Math.min(...waits) : 0;
  return wait > 0 ? wait : null;
}

/**
 * A seat's rating in a rated room (`?` while provisional) and, once a rated game
 * is over, how much it moved.
 * @param {any} player
 */
function ratingBadge(player) {
  if (player.rating === null || player.rating === undefined) return null;
  const change = player.rating_change;
  return h("span", { class: "rating", title: player.provisional ? "provisional rating" : "rating" },
    `${player.rating}${player.provisional ? "?" : ""}`,
    change === null || change === undefined ? null
      : h("span", { class: `rating-change ${change > 0 ? "up" : change < 0 ? "down" : ""}`, text: ` ${change > 0 ? "+" : change < 0 ? "−" : "±"}${Math.abs(change)}` }),
    " · ");
}

/** A small pawn of the seat's colour and shape, for the players panel. @param {number} seat */
export function swatch(seat) {
  const svg = s("svg", { class: "swatch", viewBox: "0 0 10 10", "aria-hidden": "true" });
  // As on the board, and as the terminal draws them: ● ◆ ▲ ■.
  const shapes = [
    s("circle", { cx: 5, cy: 5, r: 4 }),
    s("polygon", { points: "5,0.5 9.5,5 5,9.5 0.5,5" }),
    s("polygon", { points: "5,0.8 9.4,8.6 0.6,8.6" }),
    s("rect", { x: 1.3, y: 1.3, width: 7.4, height: 7.4, rx: 1 }),
  ];
  const shape = shapes[seat];
  shape.setAttribute("class", `pawn seat${seat}`);
  svg.append(shape);
  return svg;
}

/**
 * Walls left: the number, the one a player thinks in ("7 walls": telling 7 pips from 8 took
 * counting), and beside it a stock of little walls, up to ten.
 * @param {number} left @param {number} total
 */
function stock(left, total) {
  const said = `${plural(left, "wall")} left`;
  const box = h("span", { class: "stock", title: said, "aria-label": said });
  box.append(h("span", { class: "count", text: plural(left, "wall") }));
  if (total <= 10) box.append(h("span", { class: "pips", "aria-hidden": "true" }, ...Array.from({ length: total }, (_, i) => h("i", { class: i < left ? "full" : "used" }))));
  return box;
}
