// boardgame.io 0.50's Server (Koa: its lobby API, and socket.io for the games) serving the
// trivial game of boardgameio_game.js, its matches in its default in-memory storage, for
// bench/rivals.py.
//
//   node boardgameio_server.js --port N
"use strict";

const { Server } = require("boardgame.io/server");
const { TrivialGame } = require("./boardgameio_game.js");

const port = Number(process.argv[process.argv.indexOf("--port") + 1]);
const server = Server({ games: [TrivialGame] });
server.run(port); // on every interface: its run() takes no host
