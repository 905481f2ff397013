// @ts-check
// The websocket to the server: hello, resume after a lost link, request ids.
// It knows the protocol's lifecycle (PROTOCOL.md sections 3 and 21), never the rules.

const VERSION = "1.0";
const TOKEN_KEY = "quoridor.resume";
const BACKOFF_MS = [250, 500, 1000, 2000, 4000];
/** The longest wait between tries after the server said it restarts (close code 1012): it is
 * back in seconds, and a player waited up to the 4 s step on top of it. */
const RESTART_MS = 2000;
/** The requests the server answers one at a time per connection, a second one in flight being
 * refused with `rate_limited` (PROTOCOL.md, "Abuse limits" of accounts): sent in turn here. */
const ONE_AT_A_TIME = new Set(["register", "login", "logout", "change_password", "leaderboard", "profile", "my_games", "fetch_game"]);

/**
 * @typedef {{type: string, id?: any, [key: string]: any}} Message
 * @typedef {"connecting"|"online"|"offline"} LinkStatus
 */

export class Connection {
  /**
   * @param {string} url
   * @param {() => string} name the player's name, read at every hello
   * @param {() => string|null} [login] the account's login token (section 26), if logged in
   */
  constructor(url, name, login = () => null) {
    this.url = url;
    this.name = name;
    this.login = login;
    /** Called when the server refuses the login token at hello (expired or revoked). */
    this.onLoginRefused = () => {};
    /** @type {WebSocket|null} */
    this.ws = null;
    /** @type {LinkStatus} */
    this.status = "connecting";
    this.session = "";
    /** Highest room event seen: the `last_event` of a resume. @type {number|null} */
    this.lastEvent = null;
    this.prefix = Math.random().toString(36).slice(2, 7) + "-";
    this.counter = 0;
    this.attempt = 0;
    /** The server closed with 1012 (restarting), and this page has not been welcomed since. */
    this.restarting = false;
    /** @type {Map<string, (message: Message) => void>} */
    this.waiting = new Map();
    /** Settles when the last one-at-a-time request is answered. @type {Promise<unknown>} */
    this.asking = Promise.resolve();
    /** @type {(message: Message) => void} */
    this.onMessage = () => {};
    /** @type {(status: LinkStatus) => void} */
    this.onStatus = () => {};
    /** Called with each `welcome` (fresh or resumed). @type {(welcome: Message) => void} */
    this.onWelcome = () => {};
    /** @type {ReturnType<typeof setTimeout>|undefined} */
    this.retry = undefined;
    this.greeted = false;
    /** The latest room state, which `moved` events apply to (PROTOCOL.md section 7a). @type {Message|null} */
    this.held = null;
    /** A `moved` did not follow the state held and a `sync` is on its way. */
    this.syncing = false;
    /** A new connection was greeted: its first `state` is the new baseline whatever its `event`
     * (a server restarted on an older backup numbers from there); within one connection an older
     * event is ignored (PROTOCOL.md section 7). */
    this.rebase = false;
    /** The state that last became the baseline that way, for the game view. @type {Message|null} */
    this.baseline = null;
    /** The room a `peek` looks into: its requests' ids, the state seen, and what settles when
     * it is done. @type {{room: string, ids: string[], state: Message|null, done: Promise<void>}|null} */
    this.looking = null;
    window.addEventListener("offline", () => this.drop());
    window.addEventListener("online", () => this.reconnectNow());
  }

  open() {
    clearTimeout(this.retry);
    this.setStatus("connecting");
    performance.mark("quoridor:connect");
    const ws = new WebSocket(this.url);
    this.ws = ws;
    this.greeted = false;
    ws.onopen = () => this.hello();
    ws.onmessage = (event) => this.receive(JSON.parse(String(event.data)));
    ws.onclose = (event) => {
      if (this.ws !== ws) return;
      this.ws = null;
      if (event.code === 1012) this.restarting = true;
      this.setStatus("offline");
      this.scheduleRetry();
    };
  }

  /** Start over as a new session (a new name): the old one is left behind. */
  restart() {
    sessionStorage.removeItem(TOKEN_KEY);
    this.lastEvent = null;
    const old = this.ws;
    this.ws = null;
    old?.close(1000, "new session");
    this.open();
  }

  /** The link is gone (the browser says it is offline): show it at once and retry. */
  drop() {
    const old = this.ws;
    if (!old) return;
    this.ws = null;
    old.close(4001, "offline");
    this.setStatus("offline");
    this.scheduleRetry();
  }

  reconnectNow() {
    if (this.ws) return;
    this.attempt = 0;
    this.open();
  }

  scheduleRetry() {
    clearTimeout(this.retry);
    if (!navigator.onLine) return; // the browser's "online" event brings us back
    const step = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)];
    const ceiling = this.restarting ? Math.min(step, RESTART_MS) : step;
    // Half fixed, half random: the pages of a restarted server do not all come back at once.
    const delay = ceiling / 2 + Math.random() * ceiling / 2;
    this.attempt += 1;
    this.retry = setTimeout(() => this.open(), delay);
  }

  hello() {
    const token = sessionStorage.getItem(TOKEN_KEY);
    /** @type {Message} */
    const hello = { type: "hello", version: VERSION, name: this.name().slice(0, 32), compact: true };
    const login = this.login();
    if (token) {
      hello.resume = token;
      hello.last_event = this.lastEvent;
    } else if (login) {
      hello.token = login; // a resumed session keeps its account, so only a fresh one says it
    }
    this.request(hello, true).then((reply) => {
      if (reply.type === "error" && reply.code === "bad_token") {
        if (token) {
          sessionStorage.removeItem(TOKEN_KEY);
          this.lastEvent = null;
        } else {
          this.onLoginRefused();
        }
        this.hello();
      } else if (reply.type === "error" && reply.code === "invalid_field") {
        this.name = () => `Guest ${Math.floor(1000 + Math.random() * 9000)}`; // a name the server refused
        this.hello();
      }
    });
  }

  /** @param {Message} received */
  receive(received) {
    if (this.peeked(received)) return;
    const message = this.follow(received);
    if (!message) return;
    if (message.type === "welcome") {
      performance.mark("quoridor:welcome");
      sessionStorage.setItem(TOKEN_KEY, message.resume_token);
      this.session = message.session;
      this.greeted = true;
      this.rebase = true;
      this.attempt = 0;
      this.restarting = false;
      this.setStatus("online");
      this.onWelcome(message);
    }
    if ((message.type === "state" || message.type === "chat_line") && message.id !== undefined) {
      if (this.lastEvent === null || message.event > this.lastEvent || message === this.baseline) this.lastEvent = message.event;
    }
    const id = message.id;
    if (typeof id === "string" && this.waiting.has(id) && this.isMine(message)) {
      const resolve = this.waiting.get(id);
      this.waiting.delete(id);
      resolve?.(message);
    }
    this.onMessage(message);
  }

  /**
   * A `moved` event becomes the state it leads to; one that does not follow the state held
   * (a missed event) is dropped, and a `sync` brings the whole state (section 7a).
   * @param {Message} message
   * @returns {Message|null}
   */
  follow(message) {
    if (message.type === "state") {
      const held = this.held;
      if (this.rebase) {
        this.rebase = false;
        this.baseline = message;
      }
      if (message === this.baseline || !held || held.room !== message.room || message.event >= held.event) {
        this.held = message;
        this.syncing = false;
      }
      return message;
    }
    if (message.type === "chat_line") {
      // A room event too: the next `moved` follows the chat line's number.
      if (this.held) this.held = applyChat(this.held, message) ?? this.held;
      return message;
    }
    if (message.type !== "moved") return message;
    const state = this.held && applyMoved(this.held, message);
    if (state) {
      this.held = state;
      return state;
    }
    if (!this.syncing && this.ws && this.ws.readyState === WebSocket.OPEN) {
      this.syncing = true;
      this.ws.send(JSON.stringify({ type: "sync", id: `${this.prefix}sync` }));
    }
    return null;
  }

  /** Ids carry this page's prefix, so another client's id is never taken for ours. @param {Message} message */
  isMine(message) {
    return typeof message.id === "string" && message.id.startsWith(this.prefix);
  }

  /**
   * Send a request; the promise gets its reply (or the error in its place).
   * @param {Message} message
   * @param {boolean} [beforeHello] allowed before the welcome
   * @returns {Promise<Message>}
   */
  request(message, beforeHello = false) {
    if (this.looking) return this.looking.done.then(() => this.request(message, beforeHello));
    if (!ONE_AT_A_TIME.has(message.type)) return this.send(message, beforeHello);
    // Behind the previous one, so that the lobby's leaderboard and a quick switch of its pool,
    // say, are both answered rather than the second refused.
    const reply = this.asking.then(() => this.send(message, beforeHello));
    this.asking = reply;
    return reply;
  }

  /** @param {Message} message @param {boolean} beforeHello @param {string} [id] @returns {Promise<Message>} */
  send(message, beforeHello, id = `${this.prefix}${++this.counter}`) {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN || (!this.greeted && !beforeHello)) {
      return Promise.resolve({ type: "error", code: "offline", message: "not connected" });
    }
    const reply = new Promise((resolve) => this.waiting.set(id, resolve));
    ws.send(JSON.stringify({ ...message, id }));
    return /** @type {Promise<Message>} */ (reply);
  }

  /**
   * A room's state, seen from the lobby without staying in the room: `watch`, then `leave` once
   * it is answered `joined`. The page's requests wait meanwhile, so that none comes between the
   * two (a `create` would be refused, and the `leave` would quit the room it made); a session
   * already in a room or a queue is refused the `watch`, and nothing is left. What the room
   * sends meanwhile is the peek's alone: the page never sees it. The state, or an error.
   * @param {string} room @returns {Promise<Message>}
   */
  async peek(room) {
    if (this.looking) return { type: "error", code: "busy", message: "already looking into a room" };
    let finish = () => {};
    /** @type {Promise<void>} */
    const done = new Promise((resolve) => { finish = resolve; });
    const look = this.looking = { room, ids: /** @type {string[]} */ ([]), state: /** @type {Message|null} */ (null), done };
    const quietly = (/** @type {Message} */ message) => {
      const id = `${this.prefix}${++this.counter}`;
      look.ids.push(id);
      return this.send(message, false, id);
    };
    try {
      const watched = await quietly({ type: "watch", room });
      if (watched.type !== "joined") return watched;
      const left = await quietly({ type: "leave" });
      return left.type === "left" && look.state ? look.state : left;
    } finally {
      this.looking = null;
      finish();
    }
  }

  /** Whether `message` is a peek's (a reply to it, or its room's): then it is the peek's only.
   * @param {Message} message */
  peeked(message) {
    const look = this.looking;
    if (!look) return false;
    const reply = look.ids.includes(message.id);
    if (!reply && message.room !== look.room) return false;
    if (message.type === "state") look.state = message;
    if (reply) {
      this.waiting.get(message.id)?.(message);
      this.waiting.delete(message.id);
    }
    return true;
  }

  /** @param {LinkStatus} status */
  setStatus(status) {
    if (status === this.status) return;
    this.status = status;
    if (status === "offline") {
      // Requests in flight will never be answered on this link.
      for (const resolve of this.waiting.values()) resolve({ type: "error", code: "offline", message: "connection lost" });
      this.waiting.clear();
    }
    this.onStatus(status);
  }
}

/**
 * The state held after chat line `chat`, the room's next event (PROTOCOL.md section 7a): the
 * same state with the chat line's number, which the next `moved` follows. Null when the chat
 * line does not follow `state`.
 * @param {Message} state
 * @param {Message} chat
 * @returns {Message|null}
 */
export function applyChat(state, chat) {
  if (chat.room !== state.room || chat.event !== state.event + 1) return null;
  return { ...state, event: chat.event };
}

/**
 * The state of event `moved.event`, from the state of the event before (PROTOCOL.md section
 * 7a): the fields a move changed, copied in. Null when `moved` does not follow `state`.
 * @param {Message} state
 * @param {Message} moved
 * @returns {Message|null}
 */
export function applyMoved(state, moved) {
  if (moved.room !== state.room || moved.event !== state.event + 1 || moved.ply !== state.ply + 1 || state.status !== "playing") {
    return null;
  }
  return {
    ...state,
    id: moved.id,
    event: moved.event,
    ply: moved.ply,
    turn: moved.turn,
    pawns: moved.pawns,
    walls: moved.walls ?? state.walls,
    walls_left: moved.walls_left,
    last_move: { seat: moved.seat, move: moved.move, ply: moved.ply - 1 },
    legal_pawn_moves: moved.legal_pawn_moves,
    legal_walls: moved.legal_walls,
    distances: moved.distances,
    spectators: moved.spectators,
    clock: moved.clock,
    draw_offers: moved.draw_offers,
    moves: [...state.moves, moved.move],
    first_move_in_ms: moved.first_move_in_ms,
    move_claim_in_ms: moved.move_claim_in_ms ?? null,
  };
}

/** The websocket URL of the server that sent this page. */
export function serverUrl() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}/`;
}
