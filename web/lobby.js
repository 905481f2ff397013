// @ts-check
// The lobby: your name or account (log in, register, log out), create a room,
// join by code, quick match (rated or casual when logged in), the open rooms
// (polled while shown), the recent games and a leaderboard per rating pool.
import { Board } from "./board.js";
import { loginForm, passwordForm } from "./account.js";
import { announce, fill, h } from "./dom.js";
import { ago, plural, variantText, wonHow } from "./words.js";

const EVAL_KEY = "quoridor.spectatorEval";
/** The New game form's last choices, offered again (a review: the board went back to 9×9
 * after every game). Privacy is chosen afresh each time. */
const CHOICES_KEY = "quoridor.choices";
const KEPT_CHOICES = ["players", "size", "walls", "clock", "ai", "seat", "match"];
/** Whether this browser's player lets spectators follow the computer's evaluation of its
 * games (sent with every create and join; off unless ticked in the lobby). */
export const allowsSpectatorEval = () => localStorage.getItem(EVAL_KEY) === "1";

/**
 * The room code in what was typed or pasted in "Join a room": a code, or a room's link
 * (`http://HOST:8765/#/room/CODE`, or `#/watch/CODE`), whose code is taken from it.
 * @param {string} text
 */
export function roomCode(text) {
  const trimmed = text.trim();
  const link = /\/(?:room|watch)\/([^/?#\s]+)/.exec(trimmed);
  if (!link) return trimmed;
  try {
    return decodeURIComponent(link[1]);
  } catch {
    return link[1];
  }
}

export const POOLS = [["9x9-untimed", "9×9 untimed"], ["9x9-bullet", "9×9 bullet"], ["9x9-blitz", "9×9 blitz"], ["9x9-rapid", "9×9 rapid"], ["small", "5×5 and 7×7"], ["11x11", "11×11"], ["4-player", "4 players"]];

const CLOCKS = [["", "Untimed"], ["60+0", "1+0 bullet"], ["180+2", "3+2 blitz"], ["300+3", "5+3 blitz"], ["600+5", "10+5 rapid"], ["900+10", "15+10 rapid"]];

/**
 * @typedef {import("./connection.js").Connection} Connection
 * @typedef {{go: (hash: string) => void, notice: (text: string) => void, rename: (name: string) => void, name: () => string,
 *   account: () => string|null, logIn: (loggedIn: {name: string, token: string}) => void, logOut: () => void, keepLogin: (token: string) => void,
 *   seated: () => boolean, keptSeat: () => string|null, checkKept: () => Promise<string>, holdsSeat: (code: string) => boolean, enter: (hash: string) => void}} App
 */

export class Lobby {
  /** @param {HTMLElement} root @param {Connection} conn @param {App} app */
  constructor(root, conn, app) {
    this.conn = conn;
    this.app = app;
    /** Whether this visit has looked into the kept seat's room (`checkKept`): once, when the
     * lobby is shown and online, not at every refresh, where the player joined their own game
     * as a spectator and left it again every 4 s (its opponent saw "1 watching" come and go). */
    this.looked = false;
    this.build(root);
    this.refresh();
    this.poll = setInterval(() => this.refresh(), 4000);
  }

  destroy() {
    clearInterval(this.poll);
    // Leaving the lobby while queued cancels the request; a match found takes the player
    // out of the lobby too, into the game, which a leave would quit.
    if (this.queued && !this.app.seated()) this.conn.request({ type: "leave" });
  }

  build(/** @type {HTMLElement} */ root) {
    const field = (/** @type {string} */ label, /** @type {HTMLElement} */ control) => h("label", { class: "field" }, h("span", { text: label }), control);
    const select = (/** @type {string} */ name, /** @type {string[][]} */ options, /** @type {string} */ chosen) =>
      h("select", { name }, ...options.map(([value, text]) => h("option", { value, text, selected: value === chosen })));
    this.nameInput = /** @type {HTMLInputElement} */ (h("input", { type: "text", name: "name", maxLength: 32, required: true, value: this.app.name(), autocomplete: "nickname" }));
    this.nameForm = h("form", { class: "name-form", onsubmit: (/** @type {Event} */ e) => { e.preventDefault(); this.app.rename(this.nameInput.value); } },
      field("Your name (guest)", this.nameInput), h("button", { type: "submit", text: "Save" }));
    this.accountBox = h("div", { class: "account" });
    const opponent = select("ai", [["", "People"], ["1", "Computer 1 (beginner)"], ["2", "Computer 2"], ["3", "Computer 3 (club)"], ["4", "Computer 4"], ["5", "Computer 5 (expert)"]], "");
    opponent.addEventListener("change", () => this.opponentFits());
    this.form = /** @type {HTMLFormElement} */ (h("form", { class: "create", onsubmit: (/** @type {Event} */ e) => { e.preventDefault(); this.create(); } },
      h("div", { class: "row" },
        field("Players", select("players", [["2", "2 players"], ["4", "4 players"]], "2")),
        field("Board", select("size", [["5", "5×5"], ["7", "7×7"], ["9", "9×9"], ["11", "11×11"]], "9")),
        field("Walls each", h("input", { type: "number", name: "walls", min: 0, max: 30, placeholder: "standard", oninput: () => this.ratedFits() })),
      ),
      h("div", { class: "row" },
        field("Clock", select("clock", CLOCKS, "")),
        field("Opponent", opponent),
        // Against the computer only (PROTOCOL.md, `create`: a room for people is its creator's).
        h("label", { class: "field seat-field", hidden: true }, h("span", { text: "You move" }),
          select("seat", [["0", "first"], ["1", "second"], ["random", "first or second, at random"]], "0")),
      ),
      h("div", { class: "row checks" },
        h("label", { class: "check private-field" }, h("input", { type: "checkbox", name: "private" }), " Private (link only)"),
        h("label", { class: "check" }, h("input", { type: "checkbox", name: "match" }), " Two-game match"),
        h("label", { class: "check rated" }, h("input", { type: "checkbox", name: "rated", checked: true }), " Rated"),
        h("label", { class: "check" }, h("input", { type: "checkbox", name: "spectator_eval", checked: allowsSpectatorEval(),
          onchange: (/** @type {Event} */ e) => localStorage.setItem(EVAL_KEY, /** @type {HTMLInputElement} */ (e.target).checked ? "1" : "0") }),
          " Spectators may follow the evaluation (if every player allows it)"),
      ),
      h("p", { class: "rated-note hint", hidden: true, text: "Only games with the standard number of walls are rated: empty “Walls each” to play rated." }),
      h("div", { class: "row buttons" },
        h("button", { type: "submit", class: "primary create-button", text: "Create room" }),
        h("button", { type: "button", class: "quick", text: "Quick match", onclick: () => this.quickMatch() }),
      ),
    ));
    this.restoreChoices();
    this.opponentFits();
    this.ratedFits();
    this.queueNote = h("p", { class: "queue", hidden: true });
    /** "Back to your game", while this browser holds a seat in a game not over, or what became
     * of that game once it ended out of this page's sight (`showKept`). */
    this.back = h("div", { class: "kept" });
    this.ended = "";
    // A room's whole link may be pasted (its code is taken from it): room for a long host name.
    this.codeInput = /** @type {HTMLInputElement} */ (h("input", { type: "text", name: "code", maxLength: 2048, placeholder: "room code or link", autocomplete: "off", spellcheck: false }));
    /** What Join or Watch lacks (an empty box), said under it. */
    this.codeError = h("p", { class: "form-error", role: "alert", hidden: true });
    this.codeInput.addEventListener("input", () => { this.codeError.hidden = true; });
    const joinForm = h("form", { class: "join", onsubmit: (/** @type {Event} */ e) => { e.preventDefault(); this.join(false); } },
      field("Join a room", this.codeInput),
      this.codeError,
      h("div", { class: "row buttons" }, h("button", { type: "submit", class: "primary", text: "Join" }), h("button", { type: "button", text: "Watch", onclick: () => this.join(true) })));
    const picture = h("div", { class: "hero-board", "aria-hidden": "true", inert: true });
    this.rooms = h("tbody");
    this.playing = h("tbody");
    this.games = h("tbody");
    const table = (/** @type {string} */ second, /** @type {HTMLElement} */ body) =>
      h("table", { class: "list" }, h("thead", {}, h("tr", {}, h("th", { text: "Players" }), h("th", { text: second }), h("th", { text: "" }))), body);
    root.replaceChildren(h("div", { class: "lobby" },
      h("section", { class: "card hero" },
        h("div", { class: "hero-top" },
          h("div", {}, h("h1", { text: "Quoridor" }), h("p", { class: "tagline", text: "Race your pawn across the board. Wall your opponents in — but never shut them out." })),
          picture),
        this.back,
        this.accountBox),
      h("section", { class: "card" }, h("h2", { text: "New game" }), this.form, this.queueNote),
      h("section", { class: "card" }, h("h2", { text: "Join" }), joinForm),
      h("section", { class: "card wide open-rooms" }, h("h2", { text: "Open rooms" }), table("Game", this.rooms)),
      h("section", { class: "card wide in-progress" }, h("h2", { text: "Games in progress" }), table("Game", this.playing)),
      this.leaderboardCard(),
      h("section", { class: "card wide" }, h("h2", { text: "Recent games" }), table("Result", this.games)),
    ));
    this.showAccount();
    this.showKept();
    // A small board in a game's middle, as a picture of what the game is.
    new Board(picture, { onMove: () => {}, onPending: () => {} }, { picture: true }).render({
      size: 5, players: 2, pawns: ["c3", "d4"], walls: ["b3h", "c3v", "d1v"], lastMove: "c3v", lastFrom: null,
      turn: 0, targets: [], legalWalls: "", turns: 0, interactive: false,
    });
  }

  /** The game this browser holds a seat in, offered back, if any, or how it ended: drawn again
   * when that changes (a session resumed at `/` learns after its welcome whether its game is
   * over, a new one when `checkKept` has looked). A game that ends while the lobby is shown is
   * still offered: "Back to your game" then shows it over, with its result. */
  showKept() {
    const kept = this.app.keptSeat();
    const shown = kept ? `room ${kept}` : this.ended;
    if ((this.back.dataset.shown ?? "") === shown) return;
    this.back.dataset.shown = shown;
    fill(this.back, kept ? h("p", { class: "kept-seat" }, `You have a seat in room ${kept}. `,
      h("button", { type: "button", class: "primary", text: "Back to your game", onclick: () => this.app.go(`#/room/${kept}`) }))
      : this.ended && h("p", { class: "kept-ended", text: this.ended }));
  }

  /** Look whether the kept seat's game is still on: it may have ended out of this page's sight. */
  async checkKept() {
    const ended = await this.app.checkKept();
    if (ended && ended !== this.ended) announce(ended);
    this.ended = ended || this.ended;
    this.showKept();
  }

  /** Who you are: a guest's name and the log-in form, or the account and Log out. */
  showAccount() {
    const name = this.app.account();
    const rated = /** @type {HTMLElement} */ (this.form.querySelector(".rated"));
    rated.hidden = !name;
    this.ratedFits();
    if (name) {
      fill(this.accountBox, h("p", { class: "logged-in" }, "Logged in as ",
        h("a", { class: "me", href: `#/profile/${encodeURIComponent(name)}`, text: name }), " "),
      h("button", { type: "button", class: "logout", text: "Log out", onclick: () => this.app.logOut() }),
      passwordForm(this.conn, this.app));
      return;
    }
    fill(this.accountBox, this.nameForm, loginForm(this.conn, this.app, "Log in or register to play rated games"));
  }

  leaderboardCard() {
    this.leaders = h("tbody");
    this.pool = /** @type {HTMLSelectElement} */ (h("select", { name: "pool", "aria-label": "Rating pool", onchange: () => this.showLeaders() },
      ...POOLS.map(([value, text]) => h("option", { value, text }))));
    this.mine = h("p", { class: "my-rating", hidden: true });
    return h("section", { class: "card wide" },
      h("div", { class: "card-head" }, h("h2", { text: "Leaderboard" }), this.pool),
      h("table", { class: "list leaderboard" }, h("thead", {}, h("tr", {}, h("th", { text: "#" }), h("th", { text: "Player" }), h("th", { text: "Rating" }), h("th", { text: "W–L–D" }))), this.leaders),
      this.mine);
  }

  /**
   * Under the leaderboard, a logged-in player's own rating in the pool shown (the leaderboard
   * lists established ratings only, and a player looked for theirs in vain: a review). The
   * profile is asked for once a lobby, as the leaderboard is: ratings move only when games end.
   * @param {string} pool
   */
  async showMine(pool) {
    const name = this.app.account();
    if (!name) return void (this.mine.hidden = true);
    if (this.myProfileOf !== name) {
      this.myProfileOf = name;
      this.myProfile = this.conn.request({ type: "profile", name });
    }
    const profile = await this.myProfile;
    if (pool !== this.pool.value || name !== this.app.account()) return;
    if (profile.type !== "profile_info") return void (this.mine.hidden = true);
    const mine = profile.ratings.find((/** @type {any} */ r) => r.pool === pool);
    const label = this.pool.selectedOptions[0]?.text ?? pool;
    this.mine.textContent = mine
      ? `Your ${label} rating: ${mine.rating}${mine.provisional ? " (provisional)" : ""} · ${plural(mine.games, "game")}: ${mine.wins} won, ${mine.losses} lost, ${mine.draws} drawn.`
      : `No ${label} rating of yours yet: play a rated game to get one.`;
    this.mine.hidden = false;
  }

  async showLeaders() {
    const pool = this.pool.value;
    this.showMine(pool);
    const reply = await this.conn.request({ type: "leaderboard", pool, limit: 10 });
    if (pool !== this.pool.value) return; // another pool was picked meanwhile: its answer draws
    if (reply.type !== "leaderboard_list") {
      const why = reply.code === "accounts_unavailable" ? "This server keeps no ratings." : reply.message;
      this.leaders.replaceChildren(h("tr", {}, h("td", { colSpan: 4, class: "empty", text: why })));
      return;
    }
    if (!reply.players.length) {
      this.leaders.replaceChildren(h("tr", {}, h("td", { colSpan: 4, class: "empty", text: "No established ratings in this pool yet (10 rated games make one)." })));
      return;
    }
    this.leaders.replaceChildren(...reply.players.map((/** @type {any} */ p) => h("tr", {},
      h("td", { text: String(p.rank) }),
      h("td", { class: "names" }, h("a", { class: "one-name", title: p.name, href: `#/profile/${encodeURIComponent(p.name)}`, text: p.name })),
      h("td", { text: String(p.rating) }),
      h("td", { text: `${p.wins}–${p.losses}–${p.draws}` }))));
  }

  /**
   * A chosen wall count makes a game casual (PROTOCOL.md, `create`: only the standard count is
   * rated): the Rated box is unticked and disabled, with the note saying why, rather than a
   * refusal at Create. Emptied again, the box comes back ticked.
   */
  ratedFits() {
    const box = /** @type {HTMLInputElement} */ (this.form.querySelector("input[name=rated]"));
    const note = /** @type {HTMLElement} */ (this.form.querySelector(".rated-note"));
    const chosen = /** @type {HTMLInputElement} */ (this.form.querySelector("input[name=walls]")).value !== "";
    if (chosen !== box.disabled) box.checked = !chosen;
    box.disabled = chosen;
    note.hidden = !chosen || !this.app.account();
  }

  /**
   * The computer picked as the opponent: the create button says it plays the computer, and
   * Quick match, which pairs only people (PROTOCOL.md, `quick_match`), cannot be pressed, rather
   * than quietly wait for a person.
   */
  opponentFits() {
    const computer = new FormData(this.form).get("ai") !== "";
    /** @type {HTMLElement} */ (this.form.querySelector(".create-button")).textContent = computer ? "Play the computer" : "Create room";
    const quick = /** @type {HTMLButtonElement} */ (this.form.querySelector("button.quick"));
    quick.disabled = computer;
    quick.title = computer ? "Quick match pairs you with people: choose People as the opponent." : "";
    /** @type {HTMLElement} */ (this.form.querySelector(".seat-field")).hidden = !computer;
    // A game against the computer is never listed: Private would change nothing (a reviewer).
    /** @type {HTMLElement} */ (this.form.querySelector(".private-field")).hidden = computer;
  }

  /** Rated by default when logged in; a guest's games are casual (the server decides). */
  rated() {
    if (!this.app.account()) return {};
    return { rated: new FormData(this.form).get("rated") === "on" };
  }

  /** The form's choices as protocol objects. */
  choices() {
    const data = new FormData(this.form);
    const walls = String(data.get("walls") ?? "");
    const variant = { players: Number(data.get("players")), size: Number(data.get("size")), walls: walls === "" ? null : Number(walls) };
    const clockText = String(data.get("clock") ?? "");
    const clock = clockText ? { base: Number(clockText.split("+")[0]), increment: Number(clockText.split("+")[1]) } : null;
    const ai = String(data.get("ai") ?? "");
    const seatText = String(data.get("seat") ?? "0");
    const seat = seatText === "random" ? Math.floor(Math.random() * 2) : Number(seatText);
    const against = ai ? { ai: { level: Number(ai) }, seat } : { ai: null };
    return { variant, clock, ...against, private: data.get("private") === "on", match: data.get("match") === "on", spectator_eval: data.get("spectator_eval") === "on" };
  }

  /** Keep the form's choices for the next visit (`restoreChoices`). */
  keepChoices() {
    /** @type {Record<string, string|boolean>} */
    const kept = {};
    for (const name of KEPT_CHOICES) {
      const input = /** @type {HTMLInputElement|HTMLSelectElement} */ (this.form.elements.namedItem(name));
      kept[name] = input instanceof HTMLInputElement && input.type === "checkbox" ? input.checked : input.value;
    }
    localStorage.setItem(CHOICES_KEY, JSON.stringify(kept));
  }

  /** The choices kept by `keepChoices`, those the form still offers. */
  restoreChoices() {
    let kept = null;
    try {
      kept = JSON.parse(localStorage.getItem(CHOICES_KEY) ?? "null");
    } catch {
      return; // written by something else: the defaults
    }
    if (!kept || typeof kept !== "object") return;
    for (const name of KEPT_CHOICES) {
      const input = this.form.elements.namedItem(name);
      const value = kept[name];
      if (!(name in kept)) continue;
      if (input instanceof HTMLInputElement && input.type === "checkbox") input.checked = value === true;
      else if (input instanceof HTMLSelectElement && [...input.options].some((option) => option.value === value)) input.value = value;
      else if (input instanceof HTMLInputElement && /^\d{0,2}$/.test(String(value))) input.value = String(value);
    }
  }

  async create() {
    this.keepChoices();
    const choice = this.choices();
    const reply = await this.conn.request({ type: "create", ...choice, ...this.rated() });
    if (reply.type === "error") this.app.notice(reply.message);
  }

  async quickMatch() {
    if (this.queued) {
      this.queued = false;
      this.queueNote.hidden = true;
      await this.conn.request({ type: "leave" });
      return;
    }
    this.keepChoices();
    const { variant, clock } = this.choices();
    const reply = await this.conn.request({ type: "quick_match", variant, clock, ...this.rated() });
    if (reply.type === "error") return this.app.notice(reply.message);
    if (reply.type === "queued") {
      this.queued = true;
      // How long it has looked, and after a while who it can meet: a guest and a logged-in
      // player (rated by default) looked for each other and never met, told nothing (a review).
      const waited = h("span", { class: "waited" });
      const since = Date.now();
      fill(this.queueNote, `Looking for ${variant.players === 4 ? "three opponents" : "an opponent"} (${reply.rated ? "rated, " : ""}${variantText(reply.variant, clock)})… `,
        waited, " ", h("button", { type: "button", text: "Cancel", onclick: () => this.quickMatch() }));
      this.queueNote.hidden = false;
      const tick = () => {
        if (!this.queued || !waited.isConnected) return clearInterval(timer);
        const seconds = Math.floor((Date.now() - since) / 1000);
        waited.textContent = seconds < 20 ? `${seconds} s` : `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}: only players who chose the same board, clock and ${reply.rated ? "rated" : "casual"} game are matched.`;
      };
      const timer = setInterval(tick, 1000);
      tick();
    }
  }

  /** @param {boolean} watch */
  join(watch) {
    const code = roomCode(this.codeInput.value);
    if (!code) {
      // Said, not a button that does nothing: what is missing, and where else to find a game.
      this.codeError.textContent = watch
        ? "Type the code or link of the room to watch, or pick one of the games in progress below."
        : "Type the code or link of the room to join, or pick one of the open rooms below.";
      this.codeError.hidden = false;
      this.codeInput.focus();
      return;
    }
    this.codeError.hidden = true;
    this.app.enter(`#/${watch ? "watch" : "room"}/${encodeURIComponent(code)}`);
  }

  async refresh() {
    this.showKept();
    if (this.conn.status !== "online") return;
    if (!this.looked) {
      this.looked = true;
      this.checkKept();
    }
    // Both asked at once; each list is drawn as soon as its answer is in.
    const rooms = this.conn.request({ type: "list_rooms" });
    const history = this.conn.request({ type: "history", limit: 12 });
    const listed = await rooms;
    if (listed.type === "rooms") this.showRooms(listed.rooms);
    performance.mark("quoridor:rooms");
    const finished = await history;
    if (finished.type === "history_list") this.showGames(finished.games);
    if (!this.leadersShown) {
      this.leadersShown = true; // once: ratings move only when games end
      this.showLeaders();
    }
  }

  /**
   * The public rooms (`list_rooms`): those waiting for players under Open rooms, to join, and
   * the games being played under Games in progress, to watch (a seat this browser holds in
   * either: Return).
   * @param {any[]} rooms
   */
  showRooms(rooms) {
    const waiting = rooms.filter((room) => room.status === "waiting");
    const playing = rooms.filter((room) => room.status === "playing");
    const show = (/** @type {HTMLElement} */ body, /** @type {any[]} */ some, /** @type {string} */ none) =>
      body.replaceChildren(...(some.length ? some.map((room) => this.roomRow(room)) : [h("tr", {}, h("td", { colSpan: 3, class: "empty", text: none }))]));
    show(this.rooms, waiting, "No open rooms. Create one, or try a quick match.");
    show(this.playing, playing, "No public game is being played. Quick matches, private rooms and games against the computer are not listed.");
  }

  /** A room's row: its players, its game, and Join, Watch or Return. @param {any} room */
  roomRow(room) {
    const free = room.status === "waiting" && room.players.includes(null);
    const mine = this.app.holdsSeat(room.room);
    const names = room.players.map((/** @type {string|null} */ name) => name ?? "—");
    return h("tr", {},
      h("td", { class: "names" }, ...versus(names)),
      h("td", { text: `${variantText(room.variant, room.clock)}${room.rated ? " · rated" : ""}${room.match ? " · match" : ""}${room.spectators ? ` · ${room.spectators} watching` : ""}` }),
      h("td", { class: "act" }, mine || free
        ? h("button", { type: "button", class: "primary", text: mine ? "Return" : "Join", onclick: () => this.app.enter(`#/room/${room.room}`) })
        : h("button", { type: "button", text: "Watch", onclick: () => this.app.enter(`#/watch/${room.room}`) })));
  }

  /** @param {any[]} games */
  showGames(games) {
    if (!games.length) {
      this.games.replaceChildren(h("tr", {}, h("td", { colSpan: 3, class: "empty", text: "No finished games yet." })));
      return;
    }
    this.games.replaceChildren(...games.map((game) => {
      // Counted as the move list numbers them, a move to a round ("1. e2 e8"): a player
      // reads 39 plies as 20 moves.
      const after = `${plural(Math.ceil(game.plies / game.variant.players), "move")} · ${ago(game.finished)}`;
      return h("tr", {},
        h("td", { class: "names" }, ...versus(game.players)),
        h("td", {}, ...resultOf(game, after)),
        h("td", { class: "act" }, h("button", { type: "button", text: "Replay", onclick: () => this.app.go(`#/replay/${game.game}`) })));
    }));
  }
}

/**
 * Names as "Ann vs Ben", each in a span of its own: a row wraps between names and words,
 * never inside a word ("Comput" / "er L2" at 360 px), and a word too long for the column
 * ends in an ellipsis, the name whole in its title (style.css, `.list .one-name`).
 * @param {string[]} names
 * @returns {(HTMLElement|string)[]}
 */
export function versus(names) {
  return names.flatMap((name, index) => [...(index ? [" vs "] : []), oneName(name)]);
}

/**
 * A finished game's result cell, "Ann won (by resignation) · 12 moves · 3 min ago": the
 * winner's name in a span of its own, as in `versus`, so a long one ends in an ellipsis rather
 * than pushing the table past its card (a 32-letter name did at 360 px).
 * @param {any} game a history_list entry @param {string} after what follows the result
 * @returns {(HTMLElement|string)[]}
 */
function resultOf(game, after) {
  if (game.winner === null) return [`${game.reason === "draw" ? "draw" : game.reason} · ${after}`];
  const absent = game.players.length === 2 ? game.players[1 - game.winner] : undefined;
  return [oneName(game.players[game.winner]), ` won${wonHow(game.reason, false, absent)} · ${after}`];
}

/** A player's name, kept on one line: cut short by an ellipsis where too wide, whole in its
 * title (style.css, `.list .one-name`). @param {string} name */
function oneName(name) {
  return h("span", { class: "one-name", title: name, text: name });
}
