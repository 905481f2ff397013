// The trivial turn-based game on Colyseus 0.16, for bench/rivals.py: the state is the list of
// moves and the seat to move; a move appends itself and flips the turn, and a move out of turn
// is refused (dropped: the clients never send one). No other rule.
//
//   node colyseus_server.js --patch rate|move --port N
//
// --patch rate: Colyseus's default, a patch of the changes every 50 ms (patchRate);
// --patch move: no patch interval, a patch broadcast right after every move.
"use strict";

const { Server, Room } = require("@colyseus/core");
const { WebSocketTransport } = require("@colyseus/ws-transport");
const { ArraySchema, Schema, defineTypes } = require("@colyseus/schema");

const options = { patch: "rate", port: 0 };
for (let at = 2; at < process.argv.length; at += 2) {
  options[process.argv[at].replace(/^--/, "")] = process.argv[at + 1];
}
const patchEveryMove = options.patch === "move";

class TurnsState extends Schema {
  constructor() {
    super();
    this.moves = new ArraySchema();
    this.turn = 0;
  }
}
defineTypes(TurnsState, { moves: ["string"], turn: "uint8" });

class TurnsRoom extends Room {
  onCreate() {
    this.maxClients = 2;
    this.state = new TurnsState();
    this.seats = [];
    if (patchEveryMove) {
      this.patchRate = null; // no interval: broadcastPatch() after each move instead
    }
    this.onMessage("move", (client, move) => {
      if (this.seats[this.state.turn] !== client.sessionId) {
        return; // out of turn: refused
      }
      this.state.moves.push(String(move));
      this.state.turn = 1 - this.state.turn;
      if (patchEveryMove) {
        this.broadcastPatch();
      }
    });
  }

  onJoin(client) {
    this.seats.push(client.sessionId);
  }
}

// No graceful shutdown: on SIGTERM (the benchmark is done with it) it would refuse new rooms
// and wait for the rooms to close; exit at once instead.
const server = new Server({ transport: new WebSocketTransport(), gracefullyShutdown: false });
process.on("SIGTERM", () => process.exit(0));
server.define("turns", TurnsRoom);
server.listen(Number(options.port), "127.0.0.1");
