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

/** A finished game's result in one sentence. @param {any} result @param {(seat: number) => string} name */
export function resultText(result, name) {
  if (!result) return "";
  if (result.reason === "draw") return "Draw by agreement";
  if (result.reason === "aborted") return "Game aborted";
  if (result.winner === null || result.winner === undefined) return `Game over (${result.reason})`;
  return `${name(result.winner)} wins — ${REASONS[/** @type {keyof typeof REASONS} */ (result.reason)] ?? result.reason}`;
}

/** @param {string} move @param {string} who */
export function moveText(move, who) {
  if (move.startsWith("retire ")) return `${who} left the game`;
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

/** @param {{players: number, size: number, walls: number|null}} variant @param {any} [clock] */
export function variantText(variant, clock) {
  const parts = [`${variant.size}×${variant.size}`, `${variant.players} players`];
  if (variant.walls !== null && variant.walls !== undefined) parts.push(`${variant.walls} walls`);
  parts.push(clock ? `${trim(clock.base / 60)}+${trim(clock.increment)}` : "untimed");
  return parts.join(" · ");
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
  const said = message.replace(/\b([Ss])eat (\d+)('s)?/g, (/** @type {string} */ _, /** @type {string} */ s, /** @type {string} */ n, /** @type {string|undefined} */ owner) => {
    const seat = Number(n);
    if (!state.players?.[seat]) return _;
    if (seat === me) return owner ? (s === "S" ? "Your" : "your") : (s === "S" ? "You" : "you");
    return `${seatName(state, seat)}${owner ?? ""}`;
  });
  // A message may open with a move in notation ("e5 is not one step or jump away from e1",
  // "a9h is not a wall…"): notation is lower case, so it stays so.
  if (/^[a-z]\d/.test(said)) return said;
  return said.charAt(0).toUpperCase() + said.slice(1);
}

/** The names of seats, joined ("Alice", "Alice and Bob", "Ann, Ben and Cat"). @param {string[]} names */
export function listed(names) {
  return names.length < 2 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
}
