// The trivial turn-based game for boardgame.io 0.50, shared by its server and its clients
// (bench/rivals.py): G is the list of moves; a move appends itself, and the turn passes after
// each move. boardgame.io itself refuses a move out of turn (not the current player).
"use strict";

const TrivialGame = {
  name: "trivial",
  setup: () => ({ moves: [] }),
  turn: { minMoves: 1, maxMoves: 1 },
  moves: {
    // client: false runs the move on the server only, as the other rivals do: the player sees
    // its move once the server has pushed it back, not at once from its own reducer.
    play: {
      move: ({ G }, move) => {
        G.moves.push(String(move));
      },
      client: false,
    },
  },
};

module.exports = { TrivialGame };
