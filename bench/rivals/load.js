// The rivals' load generator for bench/rivals.py: saturated two-player games of the trivial
// turn-based game, each player on its own connection through the framework's own client
// library (colyseus.js; boardgame.io's client on socket.io), moving as soon as it sees its
// turn. With `lengths` (our scripted games' lengths), a game lasts the number of moves its
// entry says, then both players leave and the pair starts a new game, as ours do; without
// (an empty list), each pair plays one endless game.
//
//   node load.js '{"kind": "colyseus"|"boardgameio", "port": N, "games": 200, "lengths": [..]}'
//
// It prints "ready" once every pair is seated in its first game; on a line "go START END" on
// stdin (Unix times) the players start moving, and after END it prints one JSON line: the
// moves the servers applied inside [START, END) (as the first player saw them), the bytes of
// every message the players received inside it, the games finished, the errors.
"use strict";

const readline = require("node:readline");

const config = JSON.parse(process.argv[2]);
const OPEN_AT_ONCE = 32; // pairs seated at once during set-up
const measured = { moves: 0, bytes: 0, games: 0, errors: {} };
let going = false;
let windowStart = Infinity;
let windowEnd = Infinity;

function inWindow() {
  const now = Date.now() / 1000;
  return now >= windowStart && now < windowEnd;
}

function received(bytes) {
  if (inWindow()) {
    measured.bytes += bytes;
  }
}

function failed(error) {
  const name = String((error && error.message) || error).slice(0, 80);
  measured.errors[name] = (measured.errors[name] || 0) + 1;
}

// What both kinds of pair share: the game's length, the moves seen, one move sent per turn.
class Pair {
  constructor(index) {
    this.index = index;
    this.played = index; // which entry of `lengths` the next game takes
    this.busy = false; // leaving one game for the next
    this.game = 0; // which game of the pair: a late message of the one before is ignored
  }

  begin() {
    const lengths = config.lengths;
    this.length = lengths.length ? lengths[this.played++ % lengths.length] : Infinity;
    this.seen = 0;
    this.sentAt = [-1, -1];
    this.busy = false;
    this.game += 1;
  }

  // A state of game `game` with `moves` moves played and `toMove` to move, as `seat` sees it.
  onState(game, seat, moves, toMove) {
    if (game !== this.game) {
      return;
    }
    if (seat === 0 && moves > this.seen) {
      if (inWindow()) {
        measured.moves += moves - this.seen;
      }
      this.seen = moves;
    }
    if (moves >= this.length) {
      if (!this.busy) {
        this.busy = true;
        this.next().catch(failed);
      }
      return;
    }
    if (going && toMove === seat && this.sentAt[seat] !== moves) {
      this.sentAt[seat] = moves;
      this.send(seat, `m${moves}`);
    }
  }

  async next() {
    await this.leave();
    if (inWindow()) {
      measured.games += 1;
    }
    await this.seat();
    this.kick();
  }
}

class ColyseusPair extends Pair {
  async seat() {
    const { Client } = require("colyseus.js");
    this.client ||= new Client(`ws://127.0.0.1:${config.port}`);
    this.begin();
    const first = await this.client.create("turns");
    const second = await this.client.joinById(first.roomId);
    this.rooms = [first, second];
    const game = this.game;
    this.rooms.forEach((room, seat) => {
      room.connection.transport.ws.on("message", (data) => received(data.byteLength));
      room.onStateChange((state) => this.onState(game, seat, state.moves.length, state.turn));
      room.onError((code, message) => failed(`${code} ${message}`));
    });
  }

  kick() {
    const state = this.rooms[0].state;
    this.onState(this.game, 0, state.moves ? state.moves.length : 0, state.turn);
  }

  send(seat, move) {
    this.rooms[seat].send("move", move);
  }

  async leave() {
    await Promise.all(this.rooms.map((room) => room.leave()));
  }
}

class BoardgameioPair extends Pair {
  async seat() {
    const { Client } = require("boardgame.io/client");
    const { SocketIO } = require("boardgame.io/multiplayer");
    const { TrivialGame } = require("./boardgameio_game.js");
    const server = `http://127.0.0.1:${config.port}`;
    this.begin();
    const { matchID } = await post(`${server}/games/trivial/create`, { numPlayers: 2 });
    this.clients = [];
    const game = this.game;
    for (const seat of [0, 1]) {
      const joined = await post(`${server}/games/trivial/${matchID}/join`, {
        playerID: String(seat),
        playerName: `p${this.index}-${seat}`,
      });
      // One socket.io connection per player, as two browsers would have (socket.io-client
      // shares one between clients of a process otherwise), on WebSocket from the start.
      const socketOpts = { forceNew: true, transports: ["websocket"] };
      const client = Client({
        game: TrivialGame,
        multiplayer: SocketIO({ server, socketOpts }),
        matchID,
        playerID: String(seat),
        credentials: joined.playerCredentials,
        debug: false,
      });
      client.subscribe((state) => {
        if (state) {
          this.onState(game, seat, state.G.moves.length, Number(state.ctx.currentPlayer));
        }
      });
      client.start();
      const manager = client.transport.socket.io;
      manager.on("open", () =>
        manager.engine.on("packet", (packet) => {
          if (packet.type === "message") {
            received(Buffer.byteLength(packet.data) + 1); // + the engine.io packet type
          }
        }),
      );
      this.clients.push(client);
    }
  }

  kick() {
    const state = this.clients[0].getState();
    if (state) {
      this.onState(this.game, 0, state.G.moves.length, Number(state.ctx.currentPlayer));
    }
  }

  send(seat, move) {
    this.clients[seat].moves.play(move);
  }

  async leave() {
    for (const client of this.clients) {
      client.stop();
    }
  }
}

async function post(url, body) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) {
    throw new Error(`${url}: HTTP ${response.status}`);
  }
  return response.json();
}

async function seatAll(pairs) {
  const waiting = [...pairs];
  const opener = async () => {
    for (let pair = waiting.shift(); pair; pair = waiting.shift()) {
      await pair.seat();
    }
  };
  await Promise.all(Array.from({ length: OPEN_AT_ONCE }, opener));
}

async function main() {
  const Kind = { colyseus: ColyseusPair, boardgameio: BoardgameioPair }[config.kind];
  const pairs = Array.from({ length: config.games }, (_, index) => new Kind(index));
  await seatAll(pairs);
  console.log("ready");
  const lines = readline.createInterface({ input: process.stdin });
  lines.on("line", (line) => {
    const [word, start, end] = line.split(" ");
    if (word !== "go") {
      return;
    }
    windowStart = Number(start);
    windowEnd = Number(end);
    going = true;
    pairs.forEach((pair) => pair.kick());
    setTimeout(() => {
      console.log(JSON.stringify(measured));
      process.exit(0);
    }, (windowEnd - Date.now() / 1000) * 1000 + 100);
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
