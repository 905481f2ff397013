// @ts-check
// The browser client's entry point: one connection, a hash router
// (#/ lobby, #/room/CODE, #/watch/CODE, #/replay/GAME, #/profile/NAME), the
// account (section 26: the login token is kept in localStorage) and the banners.
import { Connection, serverUrl } from "./connection.js";
import { $, announce, h } from "./dom.js";
import { GameView } from "./game.js";
import { allowsSpectatorEval, Lobby } from "./lobby.js";
import { ProfileView } from "./profile.js";
import { ReplayView } from "./replay.js";
import { setSoundOn, soundOn } from "./sound.js";
import { endedText, sentence } from "./words.js";

const NAME_KEY = "quoridor.name";
const SECRET_KEY = "quoridor.secret.";
const LOGIN_KEY = "quoridor.login";
const ACCOUNT_KEY = "quoridor.account";
/** The room where this browser holds a seat in a game not over, kept so that the lobby (of a
 * new tab too) can offer it back. */
const SEAT_KEY = "quoridor.seat";

/** @typedef {{code: string, role: "player"|"spectator", seat: number|null}} Seat */

/** Whether this browser's player has chosen a name (in the lobby, or at a link) rather than
 * only carrying the one made up for them: a room's link opened first asks for one. */
let nameChosen = localStorage.getItem(NAME_KEY) !== null;

const main = $("#main");
const linkBanner = $("#link");
const toast = $("#toast");
toast.addEventListener("click", () => hideToast());
const soundToggle = $(".sound-toggle");
/** The header's speaker as the setting is: its pressed state, and what a press does. */
function showSound() {
  const on = soundOn();
  soundToggle.setAttribute("aria-pressed", String(on));
  soundToggle.title = on ? "Sounds on: press to turn them off" : "Sounds off: press to turn them on";
}
soundToggle.addEventListener("click", () => {
  setSoundOn(!soundOn());
  showSound();
  announce(soundOn() ? "Sounds on" : "Sounds off");
});
showSound();
/** The phone layout of style.css: the board spans the screen, the side column under it. */
const narrow = matchMedia("(max-width: 819px) and (orientation: portrait), (max-width: 559px)");

function savedName() {
  let name = localStorage.getItem(NAME_KEY);
  if (!name) {
    name = `Guest ${Math.floor(1000 + Math.random() * 9000)}`;
    localStorage.setItem(NAME_KEY, name);
  }
  return name;
}

/** The account's name while logged in (its token is in localStorage too), else null. */
function account() {
  return localStorage.getItem(LOGIN_KEY) ? localStorage.getItem(ACCOUNT_KEY) : null;
}

// A logged-in hello still needs a valid name: the account's own.
const conn = new Connection(serverUrl(), () => account() ?? savedName(), () => localStorage.getItem(LOGIN_KEY));
/** The room this session is in, as the server last said. @type {Seat|null} */
let seat = null;
/** Whether the last state of that room showed its game over. */
let seatFinished = false;
/** The kept seat's room whose game this page last saw still on (a state there, or `checkKept`):
 * only that one is offered back, never one merely remembered. */
let keptOn = "";

/** The room of the seat this browser holds (its secret kept) in a game still on, if any. */
function keptSeat() {
  const code = localStorage.getItem(SEAT_KEY);
  return code && code === keptOn && localStorage.getItem(SECRET_KEY + code) ? code : null;
}

/**
 * Look into the kept seat's room from the lobby, in no room: the game may have ended out of
 * this page's sight (its tab closed, the opponent won on time, claimed it or resigned). Still
 * on, it is offered back; over, it is forgotten and what became of it said ("Your game against
 * Bob ended: Bob won (on time)"), rather than a "Back to your game" to a finished game.
 * @returns {Promise<string>} what to say, if anything
 */
async function checkKept() {
  const code = localStorage.getItem(SEAT_KEY);
  if (!code || seat || !localStorage.getItem(SECRET_KEY + code)) return "";
  const seen = await conn.peek(code);
  if (seat || localStorage.getItem(SEAT_KEY) !== code) return ""; // in a room meanwhile
  if (seen.type === "state" && seen.status !== "finished") keptOn = code;
  else if (seen.type === "state") {
    forgetKept(code);
    return endedText(seen, account() ?? savedName());
  } else if (seen.code === "room_not_found") {
    forgetSeat(code);
    return `Room ${code} is closed: there is no game to go back to.`;
  }
  return "";
}

/** A game over: nothing to come back to (its seat's secret stays, for a rematch).
 * @param {string} code */
function forgetKept(code) {
  if (localStorage.getItem(SEAT_KEY) === code) localStorage.removeItem(SEAT_KEY);
}

/** @param {string} code */
function forgetSeat(code) {
  localStorage.removeItem(SECRET_KEY + code);
  if (localStorage.getItem(SEAT_KEY) === code) localStorage.removeItem(SEAT_KEY);
}
/** @type {GameView|Lobby|ReplayView|ProfileView|null} */
let view = null;
let entering = "";
/** Whether the page was opened at the lobby (`/`) and has not been greeted yet. The home page
 * is the lobby, as on a game site: a session resumed there (this tab's, after a reload or a
 * restored tab) leaves its room rather than open it, and a game still on is offered back
 * ("Back to your game"). An outside review opened `/` and landed on a finished game. */
let openedAtLobby = location.hash === "" || location.hash === "#/";

/** A short message in the toast, said to screen readers too (the toast itself is not live:
 * a node shown with its words already in is not read everywhere). `from`: "game" for what a
 * game page says, hidden when that page goes (a refusal or a tip there says nothing in the
 * lobby); else it stays its time, as "There is no room …" said on the way to the lobby.
 * @param {string} text @param {string} [from] */
function notice(text, from = "") {
  text = sentence(text);
  announce(text);
  toast.textContent = text;
  toast.dataset.from = from;
  toast.hidden = false;
  placeToast();
  clearTimeout(/** @type {any} */ (toast).timer);
  /** @type {any} */ (toast).timer = setTimeout(hideToast, 3500);
}

function hideToast() {
  toast.hidden = true;
  placeToast();
}

/**
 * Where the toast shows. At the top, over the header's empty middle (style.css), unless the
 * page has a board and the screen is narrow (the board then spans the screen just under the
 * header, and a toast of two or three lines hid its top rows): just under the board, and
 * under the wall bar if one is shown there. The side column under the board (the room's title,
 * the turn banner, the players…) moves down to make room for both (`--under`, style.css)
 * rather than be covered: an outside review found "Your move" hidden under them. The board
 * itself never moves. Placed again whenever the board, the wall bar or the toast may have
 * changed: a new view, the connection banner, a resized window, the wall bar shown or hidden.
 */
function placeToast() {
  const area = narrow.matches ? document.querySelector(".board-area") : null;
  const game = /** @type {HTMLElement|null} */ (area?.parentElement ?? null);
  if (!area || !game) {
    toast.style.top = "";
    return;
  }
  const bar = area.querySelector(".wallbar:not([hidden])");
  const top = (bar ?? area).getBoundingClientRect().bottom + 6;
  toast.style.top = `${top}px`;
  // The side column starts 8 px (the gap) under the board: it moves down by what floats there.
  const end = toast.hidden ? (bar ? top : 0) : top + toast.getBoundingClientRect().height + 6;
  game.style.setProperty("--under", `${Math.max(0, end - area.getBoundingClientRect().bottom - 8)}px`);
}
window.addEventListener("resize", placeToast);

/** @param {string} hash */
function go(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

/** @param {string} name */
function rename(name) {
  const clean = name.trim().slice(0, 32);
  // Said, not silently ignored (an outside review): a blank name, or the one already used.
  if (!clean) return notice("A name needs at least one visible character");
  if (clean === savedName()) return notice(`You are already ${clean}`);
  localStorage.setItem(NAME_KEY, clean);
  nameChosen = true;
  if (!seat) conn.restart(); // the name is the session's: a new one is needed
  notice(`You are now ${clean}`);
}

/** @param {typeof view} next */
function show(next) {
  view?.destroy();
  view = next;
  if (toast.dataset.from === "game") hideToast(); // what the game said goes with it
  else placeToast();
}

/**
 * Keep a login (`logged_in`) and greet again as the account. Only from the lobby:
 * a new session leaves any room behind.
 * @param {{name: string, token: string}} loggedIn
 */
function logIn(loggedIn) {
  localStorage.setItem(LOGIN_KEY, loggedIn.token);
  localStorage.setItem(ACCOUNT_KEY, loggedIn.name);
  conn.restart();
  notice(`Logged in as ${loggedIn.name}`);
}

/** Keep the new login token a password change brought; the session plays on. @param {string} token */
function keepLogin(token) {
  localStorage.setItem(LOGIN_KEY, token);
}

async function logOut() {
  const reply = await conn.request({ type: "logout" });
  if (reply.type !== "logged_out") return notice(reply.message ?? "Could not log out");
  forgetLogin();
  conn.restart();
  notice("Logged out");
}

function forgetLogin() {
  localStorage.removeItem(LOGIN_KEY);
  localStorage.removeItem(ACCOUNT_KEY);
}

conn.onLoginRefused = () => {
  forgetLogin();
  notice("Your login has expired or was ended elsewhere: log in again.");
  if (view instanceof Lobby) view.showAccount();
};

/** Hide the toast: what it said is over (a tip or an error from a game that has ended). */
function quiet() {
  hideToast();
}

/**
 * Leave this room and create another in its place (a rated room's creator making it casual).
 * @param {Record<string, any>} request the `create`
 */
async function remake(request) {
  if (seat) forgetSeat(seat.code);
  await conn.request({ type: "leave" });
  seat = null;
  const reply = await conn.request({ ...request, spectator_eval: allowsSpectatorEval() });
  if (reply.type === "error") {
    notice(reply.message);
    go("#/");
  }
}

const app = {
  go, notice, quiet, remake, rename, name: savedName, account, logIn, logOut, keepLogin,
  seated: () => seat !== null,
  /** The hash of the room this page is in (a replay's way back), or null. */
  roomHash: () => seat && `#/${seat.role === "player" ? "room" : "watch"}/${encodeURIComponent(seat.code)}`,
  keptSeat,
  checkKept,
  holdsSeat: (/** @type {string} */ code) => localStorage.getItem(SECRET_KEY + code) !== null,
  /** Go to a room from the lobby, where the name is shown and may be changed: it is chosen, so
   * the page joins at once (a wrong code is refused there), without the invitation's name page. */
  enter: (/** @type {string} */ hash) => {
    nameChosen = true;
    go(hash);
  },
  /** Leave the room; `kept`: a game in progress, whose seat the server keeps (PROTOCOL.md,
   * `leave`), so the lobby offers it back, as the leave question said. */
  leave: async (/** @type {boolean} */ kept = false) => {
    if (!kept) localStorage.removeItem(SEAT_KEY); // a game over or not begun: nothing to come back to
    await conn.request({ type: "leave" });
    if (!kept) localStorage.removeItem(SEAT_KEY); // set again by a state that came meanwhile
    seat = null;
    go("#/");
  },
};
/** The game page's: what it says is the game's (hidden when the page goes), and its wall bar
 * shown or hidden places the toast again. */
const gameApp = { ...app, notice: (/** @type {string} */ text) => notice(text, "game"), placeToast };

function route() {
  const [, kind = "", arg = "", then = ""] = location.hash.split("/");
  const code = decodeURIComponent(arg);
  if ((kind === "room" || kind === "watch") && code) return enterRoom(code, kind === "watch");
  if (kind === "replay" && arg) {
    // The room, if any, is kept: a finished game's "Analyse" comes here and back.
    document.title = "Replay · Quoridor";
    document.body.dataset.view = "replay";
    awayFrom = conn.held; // what the room's next states are told against (`toldAway`)
    return show(new ReplayView(main, conn, Number(arg), app, then === "analyse"));
  }
  if (kind === "profile" && code) {
    document.title = `${code} · Quoridor`;
    document.body.dataset.view = "profile";
    return show(new ProfileView(main, conn, code, app));
  }
  if (seat && view instanceof GameView && view.seat.code === seat.code && view.inGame()) {
    // Back (a swipe on a phone) during one's game: the page stays and asks, as its Leave
    // button does (leaving on purpose gives the others a claim sooner). A "Leave anyway"
    // comes back here without a seat. (The header's link asks before it navigates.)
    history.pushState(null, "", `#/room/${encodeURIComponent(seat.code)}`);
    view.askToLeave();
    return;
  }
  if (seat) {
    // Away from a game still on, the seat stays the player's (the lobby offers it back). A
    // resumed session's state comes after its welcome: what it says is known once left.
    const left = seat;
    conn.request({ type: "leave" }).then(() => {
      if (seat !== left) return;
      seat = null;
      if (seatFinished) forgetKept(left.code);
      if (view instanceof Lobby) view.showKept();
    });
  }
  document.title = "Quoridor";
  if (view instanceof Lobby) {
    view.showAccount(); // a welcome may bring a login or a logout
    view.refresh();
  }
  else show(new Lobby(main, conn, app));
  document.body.dataset.view = "lobby";
}

/**
 * Take a seat: with the secret kept for this room, else the first free seat,
 * else watch. (`#/watch/CODE` only watches.)
 * @param {string} code @param {boolean} watchOnly
 * @param {boolean} [named] no name to ask for first (a rated room, which a guest only watches)
 */
async function enterRoom(code, watchOnly, named = false) {
  if (seat?.code === code) return openGame();
  if (conn.status !== "online" || entering === code) return; // the welcome will bring us back
  if (!watchOnly && !named && !nameChosen && !account() && !localStorage.getItem(SECRET_KEY + code)) return askName(code);
  entering = code;
  try {
    if (seat) {
      await conn.request({ type: "leave" });
      seat = null;
    }
    const secret = localStorage.getItem(SECRET_KEY + code);
    let reply = null;
    if (secret && !watchOnly) {
      reply = await conn.request({ type: "join", room: code, secret, spectator_eval: allowsSpectatorEval() });
      if (reply.type === "error" && ["bad_secret", "room_not_found"].includes(reply.code)) forgetSeat(code);
    }
    if (!watchOnly && (!reply || reply.type === "error") && reply?.code !== "room_not_found") reply = await conn.request({ type: "join", room: code, spectator_eval: allowsSpectatorEval() });
    if (reply?.type === "error" && reply.code === "account_required") notice("This room is rated: log in to take a seat. You are watching.");
    // Said, not left to be guessed from the board: Join only made you a watcher.
    if (reply?.type === "error" && ["room_full", "seat_taken"].includes(reply.code)) notice(`Every seat in room ${code} is taken: you are watching the game.`);
    if (reply?.type === "error" && ["room_full", "seat_taken", "game_over", "account_required"].includes(reply.code)) reply = null;
    if (!reply) reply = await conn.request({ type: "watch", room: code });
    if (reply.type === "error") {
      notice(reply.code === "room_not_found" ? `There is no room ${code}.` : reply.message);
      go("#/");
    }
  } finally {
    entering = "";
  }
}

/**
 * A link opened before any name was chosen: "Join as [Guest 6533]", to keep or change, before
 * the seat is taken (the name is the session's, so a new one greets again, then comes back).
 * @param {string} code
 */
async function askName(code) {
  show(null);
  document.title = `${code} · Quoridor`;
  document.body.dataset.view = "join";
  main.replaceChildren();
  // A game in progress has no seat to offer: say so, rather than invite to a Join that only
  // watches. Only a public room is listed; a private one is looked into (`watch`, then
  // `leave`: its players are not told), as is one the list does not know.
  const still = () => location.hash === `#/room/${encodeURIComponent(code)}` || location.hash === `#/room/${code}`;
  if (seat?.role === "spectator") {
    // Watching another room (a link's "Only watch"): the look into this one would be refused
    // while there, so that room is left first, as joining this one would leave it.
    await conn.request({ type: "leave" });
    seat = null;
    if (!still()) return;
  }
  const listed = await conn.request({ type: "list_rooms" });
  if (!still()) return; // gone elsewhere meanwhile
  let room = listed.type === "rooms" ? listed.rooms.find((/** @type {any} */ r) => r.room === code) : undefined;
  if (!room) {
    const look = await conn.peek(code);
    if (!still()) return;
    if (look.type === "error" && look.code === "room_not_found") {
      notice(`There is no room ${code}.`);
      return go("#/");
    }
    if (look.type === "state") room = { status: look.status, players: look.players.map((/** @type {any} */ p) => p.name), rated: look.rated };
  }
  if (room && !(room.status === "waiting" && room.players.includes(null))) return offerWatch(code, room.status === "finished");
  // A rated room takes only accounts: a guest's name would be asked for nothing (an outside
  // review chose one, then learnt it could only watch). The room's page says why, with the
  // log-in form that takes the seat.
  if (room?.rated) return enterRoom(code, false, true);
  const input = /** @type {HTMLInputElement} */ (h("input", { type: "text", name: "name", maxLength: 32, required: true, value: savedName(), autocomplete: "nickname" }));
  const submit = (/** @type {Event} */ e) => {
    e.preventDefault();
    const clean = input.value.trim().slice(0, 32);
    if (!clean) return;
    nameChosen = true;
    if (clean === savedName()) return enterRoom(code, false);
    localStorage.setItem(NAME_KEY, clean);
    conn.restart(); // its welcome routes back here, to join under the new name
  };
  main.replaceChildren(h("form", { class: "card join-as", onsubmit: submit },
    h("h1", { text: "Join the game" }),
    h("p", { text: `You are invited to room ${code}. Choose the name the other players will see.` }),
    h("label", { class: "field" }, h("span", { text: "Your name" }), input),
    h("div", { class: "row buttons" },
      h("button", { type: "submit", class: "primary", text: "Join" }),
      h("a", { href: `#/watch/${encodeURIComponent(code)}`, text: "Only watch" }))));
  input.focus();
  input.select();
}

/** A link to a room whose seats are all taken: the game can be watched, or, `over`, seen as
 * it ended. @param {string} code @param {boolean} over */
function offerWatch(code, over) {
  main.replaceChildren(h("div", { class: "card join-as watch-only" },
    h("h1", { text: over ? "This game is over" : "This game is in progress" }),
    h("p", { text: over ? `The game in room ${code} has ended: you can see how.` : `Every seat in room ${code} is taken: you can watch the game.` }),
    h("div", { class: "row buttons" },
      h("button", { type: "button", class: "primary", text: over ? "See how it ended" : "Watch it", onclick: () => go(`#/watch/${encodeURIComponent(code)}`) }),
      h("a", { href: "#/", text: "Back to the lobby" }))));
}

function openGame() {
  if (!seat) return;
  if (view instanceof GameView && view.seat.code === seat.code) view.setSeat(seat);
  else {
    const game = new GameView(main, conn, seat, gameApp);
    show(game);
    // Back from a replay, the room is as the connection last saw it: drawn at once, not at
    // the next event (which, the game over, may never come).
    if (conn.held?.room === seat.code) game.onState(conn.held);
    // The lobby's control that had the focus went with the lobby: the board takes it, so a
    // keyboard player goes on from there (the board's cursor shows only once a key is used,
    // and its focus ring too: drawn at once, it framed a phone's board in orange for good).
    if (!document.activeElement || document.activeElement === document.body) game.board.svg.focus(/** @type {FocusOptions} */ ({ preventScroll: true, focusVisible: false }));
  }
  document.title = `${seat.code} · Quoridor`;
  document.body.dataset.view = "game";
  document.body.dataset.role = seat.role;
  document.body.dataset.seat = seat.seat === null ? "" : String(seat.seat);
}

conn.onWelcome = (welcome) => {
  const atLobby = openedAtLobby && (location.hash === "" || location.hash === "#/");
  openedAtLobby = false;
  if (welcome.room) {
    seat = { code: welcome.room, role: welcome.seat === null ? "spectator" : "player", seat: welcome.seat };
    if (atLobby) return route(); // left there, a game still on offered back
    if (location.hash !== `#/room/${welcome.room}`) location.hash = `#/room/${welcome.room}`;
    openGame();
    return;
  }
  // The session did not survive (a new tab, a restarted server, a spectator): start afresh.
  const wasIn = seat;
  seat = null;
  conn.lastEvent = null;
  if (wasIn && !location.hash.includes(wasIn.code)) location.hash = `#/room/${wasIn.code}`;
  route();
};

conn.onMessage = (message) => {
  switch (message.type) {
    case "joined": {
      if (message.secret) localStorage.setItem(SECRET_KEY + message.room, message.secret);
      if (message.role === "player") localStorage.setItem(SEAT_KEY, message.room);
      const fresh = seat?.code !== message.room;
      if (fresh) {
        conn.lastEvent = null;
        seatFinished = false;
      }
      seat = { code: message.room, role: message.role, seat: message.seat };
      if (location.hash !== `#/room/${message.room}` && !location.hash.startsWith(`#/watch/${message.room}`)) {
        // From the lobby (a room created, a quick match) the room is a page of its own, so
        // that Back goes to the lobby (and, during the game, asks first); otherwise it takes
        // the place of the address that led to it.
        const fromLobby = location.hash === "" || location.hash === "#/";
        history[fromLobby ? "pushState" : "replaceState"](null, "", `#/room/${message.room}`);
      }
      openGame();
      if (fresh && view instanceof GameView && !view.state) view.joined = true;
      if (fresh) announce(message.role === "player" ? `You joined room ${message.room}` : `You are watching room ${message.room}`);
      break;
    }
    case "left":
      if (message.id === null) {
        // The server took this window out of its room (PROTOCOL.md section 5, `left`).
        notice(message.reason === "closed"
          ? "The server is full and closed this finished game's room to make space for new games. The game is kept in the history."
          : message.reason === "walked_out"
            ? "You left that game before playing it: the room waits for another player, and does not seat you again."
            : "Your seat was taken back from another window.");
        seat = null;
        go("#/");
      }
      break;
    case "state":
      if (seat?.code === message.room) {
        seatFinished = message.status === "finished";
        // The lobby offers back a game not over only (a rematch's new game is one again).
        if (seat.role === "player" && seatFinished) forgetKept(seat.code);
        else if (seat.role === "player") localStorage.setItem(SEAT_KEY, keptOn = seat.code);
      }
      if (view instanceof GameView && seat?.code === message.room) view.onState(message, message === conn.baseline);
      else if (view instanceof ReplayView && seat?.code === message.room) toldAway(message);
      break;
    case "chat_line":
      if (view instanceof GameView && seat?.code === message.room) view.onChat(message);
      break;
    case "evaluation":
      if (view instanceof GameView && seat?.code === message.room) view.onEvaluation(message);
      break;
    case "error":
      if (message.state && view instanceof GameView) view.onState(message.state);
      break;
  }
};

/** The room's last state seen while its page is not shown (a replay from it). */
let awayFrom = /** @type {any} */ (null);

/**
 * What the room asks of this player while a replay is shown: a rematch (a review missed one
 * asked while they looked at the analysis). The page is a step away ("Back to the game").
 * @param {any} state
 */
function toldAway(state) {
  const before = awayFrom?.room === state.room && awayFrom.game === state.game ? awayFrom : null;
  awayFrom = state;
  const me = seat?.role === "player" ? seat.seat : null;
  const asking = state.rematch.filter((/** @type {number} */ who) => who !== me && !before?.rematch.includes(who));
  if (!before || !asking.length || me === null) return;
  const names = asking.map((/** @type {number} */ who) => state.players[who]?.name ?? `seat ${who}`);
  notice(`${names.join(" and ")} ${names.length > 1 ? "ask" : "asks"} for a rematch: Back to the game to answer.`);
}

conn.onStatus = (status) => {
  document.body.dataset.link = status;
  linkBanner.hidden = status !== "offline";
  placeToast();
  if (status === "offline") announce("Connection lost. Reconnecting…");
  if (status === "online" && view) announce("Connected");
  if (view instanceof GameView) view.onLink();
};

window.addEventListener("hashchange", route);
// A log-in or log-out in another tab: the lobby follows at once (it went on saying "Logged in
// as alice" after her log-out elsewhere, an outside review). A game page keeps its session
// (starting a new one would leave the seat): it follows once back in the lobby.
window.addEventListener("storage", (e) => {
  if (e.key !== LOGIN_KEY || !(view instanceof Lobby)) return;
  conn.restart();
  notice(e.newValue ? `Logged in as ${account()} in another tab` : "Logged out in another tab");
  view.showAccount();
});
// The header's link during one's game asks before it navigates: asked after (as Back is), the
// history kept two more entries, the lobby's and the room's again.
/** @type {HTMLElement} */ (document.querySelector("header .brand")).addEventListener("click", (e) => {
  if (!(seat && view instanceof GameView && view.seat.code === seat.code && view.inGame())) return;
  e.preventDefault();
  view.askToLeave();
});
// Leaving the page itself during one's game (Back to the site before, closing the tab, a
// reload) is asked by the browser, in its own words: the seat would be kept, but the others may
// claim the game a minute later (a review came to the room from another site, pressed Back
// and was gone without a word). The hash routes above ask in the page.
window.addEventListener("beforeunload", (e) => {
  if (view instanceof GameView && view.inGame()) e.preventDefault();
});
document.addEventListener("keydown", (e) => {
  if (e.key === "/" && !/** @type {HTMLElement} */ (e.target).closest("input, textarea")) {
    const command = document.querySelector(".command input");
    if (command) {
      e.preventDefault();
      /** @type {HTMLInputElement} */ (command).focus();
    }
  }
});
conn.open();
// The lobby is drawn at once; its lists fill in when the server has said welcome.
if (location.hash === "" || location.hash === "#/") route();
else main.append(h("p", { class: "loading", text: "Connecting…" }));
