// @ts-check
// The game's sounds, made on the spot with the Web Audio API (no files to fetch): a pawn
// step, a wall, a game starting, a game won or otherwise over, and one's own clock running
// low. The header's speaker button turns them off and on (kept in localStorage). Nothing plays
// before the page has had a click, a tap or a key: browsers refuse sound until then, and an
// AudioContext made earlier only complains in the console.

const KEY = "quoridor.sound";

/** @typedef {"move"|"wall"|"start"|"win"|"end"|"low"} SoundName */

/** @type {AudioContext|null} */
let context = null;

/** Whether the player wants sounds (the default: on, as on other game sites). */
export function soundOn() {
  return localStorage.getItem(KEY) !== "off";
}

/** @param {boolean} on */
export function setSoundOn(on) {
  localStorage.setItem(KEY, on ? "on" : "off");
}

/** The audio context, made at the first sound once the page may play one; null otherwise. */
function audio() {
  if (!soundOn()) return null;
  const activation = /** @type {{hasBeenActive: boolean}|undefined} */ (/** @type {any} */ (navigator).userActivation);
  if (activation && !activation.hasBeenActive) return null;
  if (!context) {
    if (typeof AudioContext === "undefined") return null;
    context = new AudioContext();
  }
  if (context.state === "suspended") context.resume().catch(() => {});
  return context;
}

/**
 * One note: `freq` Hz from `at` seconds on, fading out over `length` seconds from `peak`.
 * @param {AudioContext} c @param {number} freq @param {number} at @param {number} length
 * @param {number} peak @param {OscillatorType} [type]
 */
function note(c, freq, at, length, peak, type = "sine") {
  const oscillator = c.createOscillator();
  const gain = c.createGain();
  oscillator.type = type;
  oscillator.frequency.value = freq;
  const start = c.currentTime + at;
  // Ramps, not steps: a tone cut on or off at once clicks.
  gain.gain.setValueAtTime(0.0001, start);
  gain.gain.exponentialRampToValueAtTime(peak, start + 0.006);
  gain.gain.exponentialRampToValueAtTime(0.0001, start + length);
  oscillator.connect(gain).connect(c.destination);
  oscillator.start(start);
  oscillator.stop(start + length + 0.02);
}

/** @type {Record<SoundName, (c: AudioContext) => void>} */
const SOUNDS = {
  // A short wooden tap for a step; a lower, fuller knock for a wall set down.
  move: (c) => note(c, 620, 0, 0.08, 0.22, "triangle"),
  wall: (c) => { note(c, 196, 0, 0.14, 0.3, "triangle"); note(c, 98, 0, 0.18, 0.22); },
  start: (c) => { note(c, 523, 0, 0.14, 0.16); note(c, 784, 0.11, 0.2, 0.16); },
  win: (c) => [523, 659, 784, 1047].forEach((freq, i) => note(c, freq, i * 0.09, 0.28, 0.14)),
  end: (c) => { note(c, 392, 0, 0.22, 0.16); note(c, 294, 0.14, 0.34, 0.16); },
  low: (c) => { note(c, 988, 0, 0.06, 0.12, "square"); note(c, 988, 0.16, 0.06, 0.12, "square"); },
};

/** Play a sound, if sounds are on and the page may play them. @param {SoundName} name */
export function play(name) {
  const c = audio();
  if (c) SOUNDS[name](c);
}

/**
 * The sound of what changed from `old` to `state`, two states of one room as a player or a
 * spectator at `me` (null for a spectator) sees them (`old` null: the page's first state, not
 * after a reconnection); null when nothing worth a sound did.
 * @param {any} old @param {any} state @param {number|null} me @returns {SoundName|null}
 */
export function soundOf(old, state, me) {
  // The page's first state of a game that starts as this player takes the last seat.
  if (!old) return me !== null && state.status === "playing" && state.ply === 0 ? "start" : null;
  if (old.room !== state.room) return null;
  if (state.status === "playing" && (old.status !== "playing" || old.game !== state.game)) return "start";
  if (old.status === "playing" && state.status === "finished") {
    return me !== null && state.result?.winner === me ? "win" : "end";
  }
  if (state.status !== "playing" || old.game !== state.game || state.moves.length <= old.moves.length) return null;
  const last = state.moves[state.moves.length - 1];
  if (last.startsWith("retire ")) return null; // a seat leaving a four-player game: not a move
  return last.endsWith("h") || last.endsWith("v") ? "wall" : "move";
}
