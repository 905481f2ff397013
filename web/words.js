// @ts-check
// Everything the page says in words: results, moves, clocks, variants.
import { SEAT_NAMES } from "./board.js";

const REASONS = {
  goal: "reached the goal",
  resign: "by resignation",
  time: "on time",
  abandon: "the opponent abandoned",
  last_standing: "last player standing",
  ply_cap: "move limit reached",
};

/** @param {any} state @param {number} seat */
export function seatName(state, seat) {
  const player = state.players?.[seat];
  return player?.name ?? `${SEAT_NAMES[seat]} seat`;
}

/** How a player chooses a square here: "tap" on a touch screen (no hover: a finger, not a
 * mouse), else "click". */
export function tapOrClick() {
  return matchMedia("(hover: none)").matches ? "tap" : "click";
}

/**
 * Why a game was won, said to the player it went against where "the opponent" would mean
 * them: "you did not come back in time" to the one who stayed away (`abandon`: claimed
 * against, or past the hard limit), not "the opponent abandoned", which read as if the
 * winner had; the winner and the spectators read who it was, "Bob did not come back in
 * time" (`abandon` has a winner in two-player games only: `absent` is the other seat's
 * player). The terminal client says the same words.
 * @param {string} reason @param {boolean} lost whether the reader is a player who lost
 * @param {string} [absent] the player who stayed away, for the others
 */
function reasonText(reason, lost, absent) {
  if (reason === "abandon" && lost) return "you did not come back in time";
  if (reason === "resign" && lost) return "you resigned"; // "by resignation" read as the winner's
  if (reason === "abandon" && absent) return `${absent} did not come back in time`;
  return REASONS[/** @type {keyof typeof REASONS} */ (reason)] ?? reason;
}

/**
 * A finished game's result in one sentence ("Bob wins — on time"; to Bob, "You win — on time").
 * @param {any} result @param {(seat: number) => string} name
 * @param {number|null} [me] the reader's seat, when a player: a loss is said to them as theirs
 */
export function resultText(result, name, me = null) {
  if (!result) return "";
  if (result.reason === "draw") return "Draw by agreement";
  if (result.reason === "aborted") return "Game aborted";
  if (result.winner === null || result.winner === undefined) return `Game over (${result.reason})`;
  const lost = me !== null && me !== result.winner;
  const absent = result.reason === "abandon" ? name(1 - result.winner) : undefined;
  // The winner reads it as theirs, as the terminal client says it ("Alice wins" to Alice read
  // as a spectator's line, an outside review).
  const who = me !== null && me === result.winner ? "You win" : `${name(result.winner)} wins`;
  return `${who} — ${reasonText(result.reason, lost, absent)}`;
}

/**
 * What became of a game that ended out of its player's sight: "Your game against Bob ended:
 * Bob won (on time)", "you won" when the winner is `me`, the player's name (the page keeps no
 * seat number: with two players of that name, the room's code and no "you").
 * @param {any} state a finished game's @param {string} me
 */
export function endedText(state, me) {
  const others = state.players.map((/** @type {any} */ player) => player.name).filter((/** @type {string} */ name) => name !== me);
  const known = others.length === state.players.length - 1;
  const game = known ? `Your game against ${listed(others)} ended` : `Your game in room ${state.room} ended`;
  const { winner, reason } = state.result;
  if (winner === null) return `${game}: ${resultText(state.result, () => "").toLowerCase()}.`;
  const who = known && state.players[winner].name === me ? "you" : seatName(state, winner);
  const absent = reason === "abandon" ? seatName(state, 1 - winner) : undefined;
  return `${game}: ${who} won${wonHow(reason, known && who !== "you", absent)}.`;
}

/** How a seat left a four-player game, as the terminal client says it too. */
const RETIRED = { resign: "resigned", time: "ran out of time", left: "was removed for staying away" };

/**
 * A seat out of a four-player game ("retire N" in the moves): "Dan resigned", or only "Dan is
 * out of the game" where the page did not see how (a replay, a page opened after it).
 * @param {string} who @param {string|undefined} [how] resign, time or left
 */
export function retireText(who, how) {
  if (how === "left" && who.toLowerCase() === "you") return `${who} were removed for staying away`;
  return `${who} ${RETIRED[/** @type {keyof typeof RETIRED} */ (how)] ?? "is out of the game"}`;
}

/**
 * How the seats that left a four-player game between two states went: "time" when its clock
 * ran out, "left" when it was away (claimed against, or past the hard limit), else "resign".
 * @param {any} old @param {any} state @returns {[number, string][]}
 */
export function retirements(old, state) {
  if (!old || old.game !== state.game || old.room !== state.room) return [];
  return state.moves.slice(old.moves.length).filter((/** @type {string} */ move) => move.startsWith("retire ")).map((/** @type {string} */ move) => {
    const seat = Number(move.slice(7));
    const how = state.clock && state.clock.remaining_ms[seat] <= 0 ? "time" : (old.players[seat]?.claim_in_ms ?? null) !== null ? "left" : "resign";
    return [seat, how];
  });
}

/** @param {string} move @param {string} who (for "retire N": seat N's player) */
export function moveText(move, who) {
  if (move.startsWith("retire ")) return retireText(who);
  if (/[hv]$/.test(move)) return `${who} placed a ${move.endsWith("h") ? "horizontal" : "vertical"} wall at ${move}`;
  return `${who} moved to ${move}`;
}

/** Clock figures: m:ss, or s.t under ten seconds. @param {number} ms */
export function clockText(ms) {
  const clamped = Math.max(0, ms);
  if (clamped < 10_000) return (Math.floor(clamped / 100) / 10).toFixed(1);
  const total = Math.ceil(clamped / 1000);
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = String(total % 60).padStart(2, "0");
  return hours ? `${hours}:${String(minutes).padStart(2, "0")}:${seconds}` : `${minutes}:${seconds}`;
}

/**
 * @param {{players: number, size: number, walls: number|null}} variant @param {any} [clock]
 * @param {boolean} [twoSaid] whether to say "2 players" (a game's title, with its two cards, need not)
 */
export function variantText(variant, clock, twoSaid = true) {
  const parts = [`${variant.size}×${variant.size}`];
  if (variant.players !== 2 || twoSaid) parts.push(`${variant.players} players`);
  if (variant.walls !== null && variant.walls !== undefined) parts.push(plural(variant.walls, "wall"));
  parts.push(clock ? `${trim(clock.base / 60)}+${trim(clock.increment)}` : "untimed");
  return parts.join(" · ");
}

/**
 * Who made each of `moves`, and in which round: the seats move in turn from seat 0, and a seat
 * that retired ("retire N", null here) is skipped from then on (its turn, if it was, passing
 * to the next). A round is a move by each seat still in: after a resignation in a four-player
 * game, three (counted four to a round, the list went out of step, an outside review). A
 * boxed-in seat that passes (PROTOCOL.md section 17) leaves no entry: the seats after such a
 * pass are counted one off, a rare four-player case, for display only.
 * @param {string[]} moves @param {number} per players
 * @returns {({seat: number, round: number}|null)[]}
 */
export function movers(moves, per) {
  const out = [];
  const active = new Set(Array.from({ length: per }, (_, seat) => seat));
  const after = (/** @type {number} */ seat) => {
    for (let step = 1; step <= per; step++) if (active.has((seat + step) % per)) return (seat + step) % per;
    return seat;
  };
  let turn = 0;
  let round = 0;
  let last = per; // the seat of the move before: a move by a seat not after it starts a round
  for (const move of moves) {
    if (move.startsWith("retire ")) {
      const seat = Number(move.slice(7));
      active.delete(seat);
      if (seat === turn) turn = after(seat);
      out.push(null);
      continue;
    }
    if (turn <= last) round += 1;
    out.push({ seat: turn, round });
    last = turn;
    turn = after(turn);
  }
  return out;
}

/**
 * Where an action stands as the move list numbers moves, a round of the players to a number
 * ("1. e2 e8", game.js `moveListItems`): `round`, the number of action `frame`'s round (1 for
 * the first; a retirement, "retire N", is no move and keeps the number of the move before it),
 * and `rounds`, the numbers `moves` take. What a caption counts, so that it agrees with the list.
 * @param {string[]} moves @param {number} per players @param {number} frame
 */
export function roundOf(moves, per, frame) {
  const made = movers(moves, per);
  const roundAt = (/** @type {number} */ end) => {
    for (let action = end - 1; action >= 0; action--) {
      const mover = made[action];
      if (mover) return mover.round;
    }
    return 0;
  };
  return { round: Math.max(1, roundAt(frame)), rounds: roundAt(moves.length) };
}

/** "1 wall", "2 walls", "0 walls". @param {number} count @param {string} word */
export function plural(count, word) {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

/**
 * How a game of the history ended, after its winner ("Bob won (on time)"): nothing when a
 * pawn reached its goal, the usual way.
 * @param {string} reason @param {boolean} [lost] whether the reader is a player who lost
 * @param {string} [absent] the loser of a two-player game ("Bob did not come back in time")
 */
export function wonHow(reason, lost = false, absent = undefined) {
  return reason === "goal" ? "" : ` (${reasonText(reason, lost, absent)})`;
}

/** @param {number} value */
const trim = (value) => String(Math.round(value * 100) / 100);

/** @param {number} unixSeconds */
export function ago(unixSeconds) {
  const seconds = Math.max(0, Date.now() / 1000 - unixSeconds);
  if (seconds < 60) return "just now";
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86400)} d ago`;
}

/**
 * A server message with its seat numbers ("wall e5h would leave seat 1 no path to row 1",
 * "it is seat 0's turn") said as the players' names, or "you" for the viewer's own seat.
 * @param {string} message @param {any} state @param {number|null} me the viewer's seat
 */
export function withNames(message, state, me) {
  if (!state) return message;
  const said = message.replace(/\b([Ss])eat (\d+)('s| has\b| is\b)?/g, (/** @type {string} */ _, /** @type {string} */ s, /** @type {string} */ n, /** @type {string|undefined} */ after) => {
    const seat = Number(n);
    if (!state.players?.[seat]) return _;
    if (seat !== me) return `${seatName(state, seat)}${after ?? ""}`;
    // "seat 1 has no walls left" said to seat 1: "you have no walls left".
    const you = s === "S" ? "You" : "you";
    if (after === "'s") return s === "S" ? "Your" : "your";
    return `${you}${after === " has" ? " have" : after === " is" ? " are" : ""}`;
  });
  return sentence(said);
}

/**
 * A server's message as a sentence: its first letter a capital ("you already have 3 rooms
 * open" opened the toast in lower case), but for a move in notation ("e5 is not one step or
 * jump away from e1", "a9h is not a wall…"), which is lower case.
 * @param {string} text
 */
export function sentence(text) {
  if (/^[a-z]\d/.test(text)) return text;
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The names of seats, joined ("Alice", "Alice and Bob", "Ann, Ben and Cat"). @param {string[]} names */
export function listed(names) {
  return names.length < 2 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
}
