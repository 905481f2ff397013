// @ts-check
// The SVG board: drawing from the viewer's side, and turning clicks, taps and
// keys into moves. It holds no rules: it offers only what the state says is
// legal (legal_pawn_moves, and the legal_walls mask, PROTOCOL.md section 9).
import { announce, s } from "./dom.js";

const P = 10; // one square plus one groove, in SVG units
const G = 2.2; // groove width: a wall's thickness
const M = 6; // margin for the coordinates

export const SEAT_NAMES = ["red", "blue", "green", "yellow"];
/** Each seat's pawn, the terminal client's `● ◆ ▲ ■` too: "the square" is the same player in both. */
export const SHAPES = ["circle", "diamond", "triangle", "square"];

/** @param {number} col */
export const letter = (col) => "abcdefghijk"[col];

/** @param {string} name e.g. "e5" @returns {[number, number]} col, row from 0 */
export function parseSquare(name) {
  return [name.charCodeAt(0) - 97, Number(name.slice(1)) - 1];
}

/** @param {string} name e.g. "e3h" @returns {{col: number, row: number, o: "h"|"v"}} */
export function parseWall(name) {
  const [col, row] = parseSquare(name.slice(0, -1));
  return { col, row, o: /** @type {"h"|"v"} */ (name.slice(-1)) };
}

/** @param {number} col @param {number} row @param {string} [o] */
export const wallName = (col, row, o = "") => `${letter(col)}${row + 1}${o}`;

/**
 * Whether the `legal_walls` mask allows a wall (PROTOCOL.md section 9).
 * @param {string} hex @param {number} size @param {number} col @param {number} row @param {"h"|"v"} o
 */
export function wallAllowed(hex, size, col, row, o) {
  const w = size - 1;
  if (!hex || col < 0 || row < 0 || col >= w || row >= w) return false;
  const slot = (o === "v" ? w * w : 0) + row * w + col;
  const digit = parseInt(hex[hex.length - 1 - (slot >> 2)], 16);
  return ((digit >> (slot & 3)) & 1) === 1;
}

/**
 * Lattice point transforms for quarter turns: the viewer's pawn starts at the bottom.
 * @param {number} turns 0..3 @param {number} n size
 * @returns {[(x: number, y: number) => [number, number], (x: number, y: number) => [number, number]]}
 */
function transforms(turns, n) {
  switch (turns) {
    case 2: return [(x, y) => [n - x, n - y], (x, y) => [n - x, n - y]];
    case 1: return [(x, y) => [n - y, x], (x, y) => [y, n - x]];
    case 3: return [(x, y) => [y, n - x], (x, y) => [n - y, x]];
    default: return [(x, y) => [x, y], (x, y) => [x, y]];
  }
}

/**
 * The view of one position.
 * @typedef {{
 *   size: number, players: number, pawns: string[], walls: string[],
 *   lastMove: string|null, lastFrom: string|null, turn: number|null,
 *   targets: string[], legalWalls: string, turns: number, interactive: boolean,
 *   premoving?: boolean, premove?: string|null, seat?: number|null, hold?: boolean, hint?: string|null,
 *   reply?: {move: string, seat: number}|null, out?: number[],
 * }} BoardView
 * `premoving`: the opponent's turn, when a click queues a move (a premove) for the viewer's
 * next turn: any square or groove, the server judges it then; `premove`: the one queued, drawn
 * translucent; `seat`: the viewer's, whose pawn it shows; `hold`: your turn with the link down,
 * a wall waiting in the wall bar stays there (it is placed once the link is back); `hint`: a
 * move suggested (the computer's hint, an analysis's better move), drawn on the board: a
 * marked square, or a wall outlined; `reply`: in a replay, the move an analysis expects after
 * a marked move (how it goes wrong), drawn as a hint is, in the replying seat's colour.
 */

/**
 * The squares next to a square that a placed wall shuts it off from (what a screen reader
 * hears with the square: geometry of the walls drawn, not a rule).
 * @param {number} col @param {number} row @param {string[]} walls @param {number} n
 */
function walledOff(col, row, walls, n) {
  const placed = new Set(walls);
  /** @param {number} c @param {number} r @param {"h"|"v"} o */
  const at = (c, r, o) => c >= 0 && r >= 0 && placed.has(wallName(c, r, o));
  const shut = [];
  if (row + 1 < n && (at(col, row, "h") || at(col - 1, row, "h"))) shut.push(wallName(col, row + 1));
  if (row > 0 && (at(col, row - 1, "h") || at(col - 1, row - 1, "h"))) shut.push(wallName(col, row - 1));
  if (col + 1 < n && (at(col, row, "v") || at(col, row - 1, "v"))) shut.push(wallName(col + 1, row));
  if (col > 0 && (at(col - 1, row, "v") || at(col - 1, row - 1, "v"))) shut.push(wallName(col - 1, row));
  return shut;
}

export class Board {
  /**
   * @param {HTMLElement} host
   * @param {{onMove: (move: string) => void, onPending: (wall: string|null) => void, onNoWall?: (wall: string) => void,
   *   onIdle?: () => void, onPremove?: (move: string) => void, onNoMove?: (square: string) => void}} handlers
   *   `onNoWall`: a groove where the state allows no wall was chosen; `onNoMove`: a square the
   *   state's legal moves do not include, on your turn; `onIdle`: the board was tapped or Enter pressed while it
   *   takes no move; `onPremove`: a square or groove chosen during the opponent's turn
   * @param {{picture?: boolean, label?: string}} [options] `picture`: a drawing only (the lobby's),
   *   hidden from the keyboard and screen readers; `label`: its accessible name, where the board
   *   is not played on (the replay's)
   */
  constructor(host, handlers, options = {}) {
    this.host = host;
    this.handlers = handlers;
    this.svg = /** @type {SVGSVGElement} */ (s("svg", options.picture ? { class: "board", role: "presentation", "aria-hidden": "true" } : {
      class: "board", role: "application", tabindex: 0,
      "aria-label": options.label ?? "Board. Arrows move the cursor, Enter plays, W switches to walls, R turns a wall.",
    }));
    host.replaceChildren(this.svg);
    /** @type {BoardView|null} */
    this.view = null;
    /** The wall under the pointer or keyboard cursor, and whether it is only pending a tap. */
    /** @type {{col: number, row: number, o: "h"|"v"}|null} */
    this.ghost = null;
    /** The wall under the mouse where it may not go, on your turn: drawn red. @type {{col: number, row: number, o: "h"|"v"}|null} */
    this.refusedHover = null;
    this.pending = false;
    this.rotated = false;
    /** The wall under the mouse pointer, in the orientation chosen, legal or not. */
    /** @type {{col: number, row: number, o: "h"|"v"}|null} */
    this.under = null;
    /** The groove spot the pointer was last on (a turn holds only there). */
    this.spot = "";
    /** Keyboard cursor in display coordinates; wall mode puts it on a groove crossing. */
    this.cursor = { x: 0, y: 0, wall: false, o: /** @type {"h"|"v"} */ ("h"), shown: false };
    this.svg.addEventListener("pointermove", (e) => this.pointerMove(e));
    this.svg.addEventListener("pointerleave", () => {
      this.under = null;
      if (this.refusedHover) {
        this.refusedHover = null;
        this.drawOverlay();
      }
      if (!this.pending) this.setGhost(null);
    });
    this.svg.addEventListener("pointerup", (e) => this.pointerUp(e));
    this.svg.addEventListener("contextmenu", (e) => { e.preventDefault(); this.rotate(); });
    this.svg.addEventListener("keydown", (e) => this.key(e));
    this.svg.addEventListener("blur", () => { this.cursor.shown = false; this.svg.classList.remove("keyed"); this.drawOverlay(); });
  }

  /** @param {BoardView} view */
  render(view) {
    const sameFrame = this.view && this.view.size === view.size && this.view.turns === view.turns && this.view.players === view.players;
    this.view = view;
    const n = view.size;
    [this.toScreen, this.toLogical] = transforms(view.turns, n);
    if (!sameFrame) this.drawFrame();
    this.drawPieces();
    if (this.ghost && !(this.pending ? this.pendingStands() : this.ghostShown(this.ghost))) this.setGhost(null);
    else this.drawOverlay();
  }

  /** Lattice point (logical) -> SVG coordinates. @param {number} x @param {number} y @returns {[number, number]} */
  point(x, y) {
    const [dx, dy] = /** @type {any} */ (this.toScreen)(x, y);
    return [dx * P, (/** @type {BoardView} */ (this.view).size - dy) * P];
  }

  drawFrame() {
    const view = /** @type {BoardView} */ (this.view);
    const n = view.size;
    const span = n * P;
    this.svg.setAttribute("viewBox", `${-M} ${-G} ${span + M + G} ${span + M + G}`);
    const frame = s("g", { class: "frame" });
    frame.append(s("rect", { class: "bed", x: -G / 2, y: -G / 2, width: span + G, height: span + G, rx: 1.2 }));
    this.drawGoals(frame);
    for (let col = 0; col < n; col++) {
      for (let row = 0; row < n; row++) {
        const [x, y] = this.squareCorner(col, row);
        frame.append(s("rect", {
          class: "square", x, y, width: P - G, height: P - G, rx: 0.8, "data-square": wallName(col, row),
        }));
      }
    }
    for (let i = 0; i < n; i++) {
      const [bottomCol, bottomRow] = this.logicalSquare(i, 0);
      const [leftCol, leftRow] = this.logicalSquare(0, i);
      const even = view.turns % 2 === 0;
      frame.append(s("text", { class: "coord", x: i * P + P / 2 - G / 2, y: span + M - 1.6, text: even ? letter(bottomCol) : String(bottomRow + 1) }));
      frame.append(s("text", { class: "coord", x: -M / 2 - 0.4, y: (n - i) * P - P / 2 + 1.2, text: even ? String(leftRow + 1) : letter(leftCol) }));
    }
    this.pieces = s("g", { class: "pieces" });
    this.overlay = s("g", { class: "overlay" });
    this.svg.replaceChildren(frame, this.pieces, this.overlay);
  }

  /** A coloured strip on each seat's goal edge, so a glance tells where everyone runs. @param {SVGElement} frame */
  drawGoals(frame) {
    const view = /** @type {BoardView} */ (this.view);
    const n = view.size;
    const edges = view.players === 2 ? [[0, n, n, n], [0, 0, n, 0]] : [[0, n, n, n], [n, 0, n, n], [0, 0, n, 0], [0, 0, 0, n]];
    edges.forEach(([x1, y1, x2, y2], seat) => {
      const [ax, ay] = this.point(x1, y1);
      const [bx, by] = this.point(x2, y2);
      frame.append(s("line", { class: `goal seat${seat}`, x1: ax, y1: ay, x2: bx, y2: by }));
    });
  }

  /** Top-left SVG corner of a logical square. @param {number} col @param {number} row @returns {[number, number]} */
  squareCorner(col, row) {
    const [ax, ay] = this.point(col, row);
    const [bx, by] = this.point(col + 1, row + 1);
    return [Math.min(ax, bx) + G / 2, Math.min(ay, by) + G / 2];
  }

  /** The logical square shown at display column i, display row j (0 at the bottom). @param {number} i @param {number} j */
  logicalSquare(i, j) {
    const [x, y] = /** @type {any} */ (this.toLogical)(i + 0.5, j + 0.5);
    return [Math.floor(x), Math.floor(y)];
  }

  drawPieces() {
    const view = /** @type {BoardView} */ (this.view);
    const g = /** @type {SVGElement} */ (this.pieces);
    const items = [];
    if (view.lastFrom) {
      const [x, y] = this.center(view.lastFrom);
      items.push(s("circle", { class: "from", cx: x, cy: y, r: 1.2 }));
    }
    if (view.lastMove && !/[hv]$/.test(view.lastMove)) {
      const [col, row] = parseSquare(view.lastMove);
      const [x, y] = this.squareCorner(col, row);
      items.push(s("rect", { class: "last", x, y, width: P - G, height: P - G, rx: 0.8 }));
    }
    for (const wall of view.walls) items.push(this.wallShape(parseWall(wall), wall === view.lastMove ? "wall last-wall" : "wall"));
    if (view.interactive) {
      for (const target of view.targets) {
        const [x, y] = this.center(target);
        items.push(s("circle", { class: "target", cx: x, cy: y, r: 1.6, "data-target": target }));
      }
    }
    view.pawns.forEach((square, seat) => items.push(this.pawn(seat, square, seat === view.turn, view.out?.includes(seat))));
    g.replaceChildren(...items);
  }

  /** @param {string} square */
  center(square) {
    const [col, row] = parseSquare(square);
    const [x, y] = this.squareCorner(col, row);
    return [x + (P - G) / 2, y + (P - G) / 2];
  }

  /** @param {number} seat @param {string} square @param {boolean} toMove
   * @param {boolean} [out] its seat left the game: the pawn stays, an obstacle, drawn faded */
  pawn(seat, square, toMove, out = false) {
    const [x, y] = this.center(square);
    const r = 3;
    const cls = `pawn seat${seat}${toMove ? " to-move" : ""}${out ? " out" : ""}`;
    const label = `${SEAT_NAMES[seat]} pawn on ${square}${out ? ", out of the game" : ""}`;
    switch (SHAPES[seat]) {
      case "square":
        return s("rect", { class: cls, x: x - r * 0.88, y: y - r * 0.88, width: r * 1.76, height: r * 1.76, rx: 0.6, "aria-label": label, "data-pawn": seat });
      case "diamond":
        return s("polygon", { class: cls, points: `${x},${y - r * 1.15} ${x + r * 1.15},${y} ${x},${y + r * 1.15} ${x - r * 1.15},${y}`, "aria-label": label, "data-pawn": seat });
      case "triangle": {
        // Point up, its weight centred on the square: as wide as the circle is, a little taller.
        const pts = [[0, -1.25], [1.2, 0.85], [-1.2, 0.85]].map(([dx, dy]) => `${(x + r * dx).toFixed(2)},${(y + r * dy).toFixed(2)}`);
        return s("polygon", { class: cls, points: pts.join(" "), "aria-label": label, "data-pawn": seat });
      }
      default:
        return s("circle", { class: cls, cx: x, cy: y, r, "aria-label": label, "data-pawn": seat });
    }
  }

  /** @param {{col: number, row: number, o: "h"|"v"}} wall @param {string} cls */
  wallShape(wall, cls) {
    const [mx, my] = this.point(wall.col + 1, wall.row + 1);
    const turns = /** @type {BoardView} */ (this.view).turns;
    const horizontal = (wall.o === "h") === (turns % 2 === 0);
    const long = 2 * P - G - 0.3;
    const thick = G - 0.25;
    const attrs = horizontal
      ? { x: mx - long / 2, y: my - thick / 2, width: long, height: thick }
      : { x: mx - thick / 2, y: my - long / 2, width: thick, height: long };
    return s("rect", { class: cls, ...attrs, rx: 0.5, "data-wall": wallName(wall.col, wall.row, wall.o) });
  }

  // -- input ----------------------------------------------------------------

  /** The logical lattice position of a pointer event. @param {PointerEvent} e @returns {[number, number]} */
  logicalAt(e) {
    const pt = this.svg.createSVGPoint();
    pt.x = e.clientX;
    pt.y = e.clientY;
    const local = pt.matrixTransform(/** @type {DOMMatrix} */ (this.svg.getScreenCTM()).inverse());
    const n = /** @type {BoardView} */ (this.view).size;
    return /** @type {any} */ (this.toLogical)(local.x / P, n - local.y / P);
  }

  /** What lies under the pointer: a square, a wall, or nothing. @param {PointerEvent} e */
  hit(e) {
    const view = this.view;
    if (!view) return null;
    const n = view.size;
    const [x, y] = this.logicalAt(e);
    if (x < 0 || y < 0 || x > n || y > n) return null;
    const offX = Math.abs(x - Math.round(x));
    const offY = Math.abs(y - Math.round(y));
    const band = (G / 2 + 0.9) / P;
    if (Math.min(offX, offY) > band) return { square: wallName(Math.floor(x), Math.floor(y)) };
    const horizontal = offY <= offX;
    const line = Math.round(horizontal ? y : x);
    const along = horizontal ? x : y;
    if (line < 1 || line > n - 1) return null;
    // The wall centred on the groove crossing nearest the pointer, whatever the state allows
    // there: never a neighbour put in its place (a click must place, or be refused for, the
    // wall under the pointer, in the orientation chosen).
    const mid = Math.min(n - 1, Math.max(1, Math.round(along)));
    /** @type {{col: number, row: number, o: "h"|"v"}} */
    const wall = horizontal ? { col: mid - 1, row: line - 1, o: "h" } : { col: line - 1, row: mid - 1, o: "v" };
    return { wall: this.turned(wall), spot: `${horizontal ? "h" : "v"}${line},${mid}` };
  }

  /** What lies under the pointer, a turn asked for (R, a second tap) kept only on the spot
   * where it was asked: the next groove starts from its own orientation. @param {PointerEvent} e */
  hitHere(e) {
    const hit = this.hit(e);
    if (!this.rotated || !hit?.spot || hit.spot === this.spot) return hit;
    this.rotated = false;
    return this.hit(e);
  }

  /** The wall with the rotation asked for applied. @param {{col: number, row: number, o: "h"|"v"}} wall */
  turned(wall) {
    return this.rotated ? { ...wall, o: /** @type {"h"|"v"} */ (wall.o === "h" ? "v" : "h") } : wall;
  }

  /** ``wall`` if it is to be drawn red under the mouse: your turn, some wall may go, not this
   * one. @param {{col: number, row: number, o: "h"|"v"}} wall */
  refusedAt(wall) {
    const view = this.view;
    return view?.interactive && /[1-9a-f]/i.test(view.legalWalls) && !this.ghostLegal(wall) ? wall : null;
  }

  /** @param {{col: number, row: number, o: "h"|"v"}} wall */
  ghostLegal(wall) {
    const view = this.view;
    return !!view && view.interactive && wallAllowed(view.legalWalls, view.size, wall.col, wall.row, wall.o);
  }

  /** Whether the pointer's wall is shown as a ghost: a legal one on your turn; during the
   * opponent's, any, to be queued (the server judges it when your turn comes).
   * @param {{col: number, row: number, o: "h"|"v"}} wall */
  ghostShown(wall) {
    return this.ghostLegal(wall) || (!!this.view?.premoving && !this.view.interactive);
  }

  /** Whether a tapped wall waits in the wall bar: one shown as a ghost, and on your turn one
   * where `legal_walls` allow none too, so that the bar says so and offers Rotate (an outside
   * review: such a tap was sent at once and refused, the other way never offered). Not when
   * no wall at all may go (none left): the tap is refused, with the server's reason.
   * @param {{col: number, row: number, o: "h"|"v"}} wall */
  pendable(wall) {
    return this.ghostShown(wall) || (!!this.view?.interactive && /[1-9a-f]/i.test(this.view.legalWalls))
      || (this.pending && !!this.view?.hold);
  }

  /** Whether a wall waiting in the wall bar may go on waiting: your turn (the link up or
   * down: it is placed once it is back), or the opponent's (to be queued). */
  pendingStands() {
    return !!this.view && (this.view.interactive || !!this.view.premoving || !!this.view.hold);
  }

  /** @param {PointerEvent} e */
  pointerMove(e) {
    if (e.pointerType !== "mouse" || this.pending) return;
    const hit = this.hitHere(e);
    if (hit?.spot) this.spot = hit.spot;
    this.under = hit?.wall ?? null;
    this.svg.classList.toggle("pointing", !!hit?.square && this.isTarget(hit.square));
    this.setGhost(hit?.wall && this.ghostShown(hit.wall) ? hit.wall : null);
    // On your turn, a groove where that wall may not go shows it red (an outside review: it
    // showed nothing until the click brought the server's reason); not when no wall may go.
    const refused = hit?.wall && !this.ghost ? this.refusedAt(hit.wall) : null;
    const name = (/** @type {{col: number, row: number, o: "h"|"v"}|null} */ w) => (w ? wallName(w.col, w.row, w.o) : "");
    if (name(refused) !== name(this.refusedHover)) {
      this.refusedHover = refused;
      this.drawOverlay();
    }
  }

  /** @param {PointerEvent} e */
  pointerUp(e) {
    if (e.button !== 0 || !this.view) return;
    const hit = e.pointerType === "mouse" ? this.hitHere(e) : this.hit(e);
    if (!hit) return;
    if (!this.view.interactive && this.view.premoving) {
      // A tap is not aimed as a pointer is (one near a square's edge lands in the groove): a
      // wall from a tap waits for the wall bar's confirmation, as on your own turn, before it
      // is queued.
      if (e.pointerType !== "mouse" && hit.wall) return this.tapWall(e, hit.wall, /** @type {string} */ (hit.spot));
      this.clearPending();
      return this.premoveAt(hit);
    }
    if (!this.view.interactive) return this.handlers.onIdle?.();
    if (hit.square) {
      if (!this.isTarget(hit.square)) return this.handlers.onNoMove?.(hit.square);
      this.clearPending();
      this.handlers.onMove(hit.square);
      return;
    }
    const wall = hit.wall;
    if (!wall) return;
    if (e.pointerType === "mouse") {
      // The wall under the pointer: the ghost shown there, or, where none may go, the server's refusal.
      if (this.ghostLegal(wall)) this.handlers.onMove(wallName(wall.col, wall.row, wall.o));
      else this.handlers.onNoWall?.(wallName(wall.col, wall.row, wall.o));
      return;
    }
    this.tapWall(e, wall, /** @type {string} */ (hit.spot));
  }

  /**
   * A tap on a groove: the first shows the wall to confirm (the wall bar); tapping it again
   * turns it. During the opponent's turn a tap on the wall queued there takes it back.
   * @param {PointerEvent} e @param {{col: number, row: number, o: "h"|"v"}} wall @param {string} spot
   */
  tapWall(e, wall, spot) {
    const queued = this.view?.premoving && !this.view.interactive && this.view.premove && /[hv]$/.test(this.view.premove) ? parseWall(this.view.premove) : null;
    if (queued && queued.col === wall.col && queued.row === wall.row) {
      this.clearPending();
      return this.handlers.onPremove?.(/** @type {string} */ (this.view?.premove));
    }
    const same = this.pending && this.ghost && this.ghost.col === wall.col && this.ghost.row === wall.row;
    if (same) this.rotate();
    else {
      const fresh = /** @type {{col: number, row: number, o: "h"|"v"}} */ (this.hitHere(e)?.wall);
      this.spot = spot;
      if (this.pendable(fresh)) {
        this.pending = true;
        this.setGhost(fresh);
      } else if (!this.pending) this.handlers.onNoWall?.(wallName(fresh.col, fresh.row, fresh.o));
    }
  }

  /** A square or groove chosen during the opponent's turn: queued as it is (a groove tapped on
   * a touch screen only once the wall bar confirms it: `confirm`); nothing is placed now, and
   * choosing it again takes it back.
   * @param {{square?: string, wall?: {col: number, row: number, o: "h"|"v"}}} hit */
  premoveAt(hit) {
    const move = hit.square ?? (hit.wall ? wallName(hit.wall.col, hit.wall.row, hit.wall.o) : null);
    if (move) this.handlers.onPremove?.(move);
  }

  /** @param {string} square */
  isTarget(square) {
    return !!this.view?.interactive && this.view.targets.includes(square);
  }

  rotate() {
    /** @param {{col: number, row: number, o: "h"|"v"}} wall */
    const flip = (wall) => ({ ...wall, o: /** @type {"h"|"v"} */ (wall.o === "h" ? "v" : "h") });
    if (this.pending && this.ghost) {
      // The wall waiting for a tap turns, whether it may stand the other way or not: the wall
      // bar says which (only a wall that may go can be placed).
      const other = flip(this.ghost);
      if (this.pendable(other)) {
        this.rotated = !this.rotated;
        this.setGhost(other);
      } else this.handlers.onNoWall?.(wallName(other.col, other.row, other.o));
    } else {
      // The pointer's wall turns where it is: a ghost only if it may go there that way.
      this.rotated = !this.rotated;
      if (this.under) {
        this.under = flip(this.under);
        const legal = this.ghostLegal(this.under);
        this.refusedHover = legal ? null : this.refusedAt(this.under);
        this.setGhost(legal ? this.under : null);
        this.drawOverlay();
      }
    }
    if (this.cursor.wall) {
      this.cursor.o = this.cursor.o === "h" ? "v" : "h";
      this.drawOverlay();
    }
  }

  /** Confirm the wall waiting for a tap (touch screens): played, or during the opponent's
   * turn queued for yours. */
  confirm() {
    if (this.ghost && this.pending && this.ghostShown(this.ghost)) {
      const name = wallName(this.ghost.col, this.ghost.row, this.ghost.o);
      this.clearPending();
      if (this.view?.interactive) this.handlers.onMove(name);
      else this.handlers.onPremove?.(name);
    }
  }

  clearPending() {
    this.pending = false;
    this.rotated = false;
    this.setGhost(null);
  }

  /** @param {{col: number, row: number, o: "h"|"v"}|null} wall */
  setGhost(wall) {
    const before = this.ghost ? wallName(this.ghost.col, this.ghost.row, this.ghost.o) : null;
    this.ghost = wall;
    const after = wall ? wallName(wall.col, wall.row, wall.o) : null;
    if (before === after) return;
    if (!wall) this.pending = false;
    this.drawOverlay();
    this.handlers.onPending(this.pending ? after : null);
  }

  drawOverlay() {
    const overlay = this.overlay;
    const view = this.view;
    if (!overlay || !view) return;
    const items = [];
    if (view.premove) items.push(this.premoveShape(view.premove));
    if (view.hint) items.push(this.hintShape(view.hint));
    if (view.reply) items.push(this.replyShape(view.reply.move, view.reply.seat));
    if (this.ghost) items.push(this.wallShape(this.ghost, !this.pending ? "ghost" : this.ghostShown(this.ghost) || view.hold ? "ghost pending" : "ghost pending refused"));
    else if (this.refusedHover && view.interactive) items.push(this.wallShape(this.refusedHover, "ghost refused"));
    if (this.cursor.shown && view.interactive) {
      const { x, y, wall, o } = this.cursor;
      if (wall) {
        const [lx, ly] = /** @type {any} */ (this.toLogical)(x, y);
        const logical = this.logicalWallAt(lx, ly, o);
        if (this.ghostLegal(logical)) items.push(this.wallShape(logical, "ghost"));
        items.push(s("circle", { class: "cursor", cx: x * P, cy: (view.size - y) * P, r: 1.8 }));
      } else {
        items.push(s("rect", { class: "cursor", x: x * P + G / 2 - 0.4, y: (view.size - y - 1) * P + G / 2 - 0.4, width: P - G + 0.8, height: P - G + 0.8, rx: 1 }));
      }
    }
    overlay.replaceChildren(...items);
  }

  /** A move suggested, drawn: its square ringed, or its wall outlined and dashed. @param {string} move */
  hintShape(move) {
    let shape;
    if (/[hv]$/.test(move)) shape = this.wallShape(parseWall(move), "hint hint-wall");
    else {
      const [col, row] = parseSquare(move);
      const [x, y] = this.squareCorner(col, row);
      shape = s("rect", { class: "hint hint-square", x: x + 0.4, y: y + 0.4, width: P - G - 0.8, height: P - G - 0.8, rx: 0.8 });
    }
    shape.removeAttribute("data-wall"); // not a wall on the board: nothing looks for it as one
    shape.setAttribute("data-hint", move);
    return shape;
  }

  /** The reply an analysis expects: a hint's shape in its seat's colour, solid (the hint's
   * dashes and colour, --better, are the better move's). @param {string} move @param {number} seat */
  replyShape(move, seat) {
    const shape = this.hintShape(move);
    shape.removeAttribute("data-hint");
    shape.setAttribute("data-reply", move);
    shape.classList.add("reply", `seat${seat}`);
    return shape;
  }

  /** The move queued for the viewer's next turn, translucent: its pawn there, or its wall.
   * @param {string} move */
  premoveShape(move) {
    const view = /** @type {BoardView} */ (this.view);
    const shape = /[hv]$/.test(move) ? this.wallShape(parseWall(move), "premove-wall") : this.pawn(view.seat ?? 0, move, false);
    shape.classList.add("premove");
    shape.setAttribute("data-premove", move);
    shape.removeAttribute("data-pawn"); // not a piece on the board: nothing looks for it as one
    shape.removeAttribute("data-wall");
    shape.setAttribute("aria-label", `premove ${move}`);
    return shape;
  }

  /** The wall through a logical lattice point, with a screen orientation. @param {number} lx @param {number} ly @param {"h"|"v"} screenO */
  logicalWallAt(lx, ly, screenO) {
    const turns = /** @type {BoardView} */ (this.view).turns;
    const o = /** @type {"h"|"v"} */ ((screenO === "h") === (turns % 2 === 0) ? "h" : "v");
    return { col: lx - 1, row: ly - 1, o };
  }

  /** @param {KeyboardEvent} e */
  key(e) {
    const view = this.view;
    if (!view) return;
    // The cursor appears once the keyboard is used; not for R turning the mouse's wall.
    const turningHovered = (e.key === "r" || e.key === "R") && (this.ghost || this.under) && !this.cursor.wall;
    if (!this.cursor.shown && e.key !== "Tab" && !turningHovered) {
      this.cursor.shown = true;
      this.svg.classList.add("keyed"); // its focus ring too (style.css)
      this.drawOverlay();
    }
    const n = view.size;
    const c = this.cursor;
    const moves = { ArrowUp: [0, 1], ArrowDown: [0, -1], ArrowLeft: [-1, 0], ArrowRight: [1, 0] };
    if (e.key in moves) {
      const [mx, my] = moves[/** @type {keyof typeof moves} */ (e.key)];
      const [lo, hi] = c.wall ? [1, n - 1] : [0, n - 1];
      c.x = Math.min(hi, Math.max(lo, c.x + mx));
      c.y = Math.min(hi, Math.max(lo, c.y + my));
      c.shown = true;
      this.drawOverlay();
      this.sayCursor();
      e.preventDefault();
      return;
    }
    if (e.key === "w" || e.key === "W") {
      c.wall = !c.wall;
      c.x = Math.min(n - 1, Math.max(c.wall ? 1 : 0, c.x));
      c.y = Math.min(n - 1, Math.max(c.wall ? 1 : 0, c.y));
      this.drawOverlay();
      this.sayCursor();
    } else if (e.key === "r" || e.key === "R") {
      this.rotate();
      if (c.wall) this.sayCursor();
    } else if (e.key === "Escape") {
      c.wall = false;
      this.clearPending();
    } else if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      if (!view.interactive && view.premoving) {
        const [lx, ly] = /** @type {any} */ (this.toLogical)(c.x, c.y);
        const [col, row] = this.logicalSquare(c.x, c.y);
        return this.premoveAt(c.wall ? { wall: this.logicalWallAt(lx, ly, c.o) } : { square: wallName(col, row) });
      }
      if (!view.interactive) return this.handlers.onIdle?.();
      if (c.wall) {
        const [lx, ly] = /** @type {any} */ (this.toLogical)(c.x, c.y);
        const wall = this.logicalWallAt(lx, ly, c.o);
        if (this.ghostLegal(wall)) this.handlers.onMove(wallName(wall.col, wall.row, wall.o));
      } else {
        const [col, row] = this.logicalSquare(c.x, c.y);
        const square = wallName(col, row);
        if (this.isTarget(square)) this.handlers.onMove(square);
        else this.handlers.onNoMove?.(square);
      }
    }
  }

  /** Tell a screen reader where the keyboard cursor is and what Enter would do there. */
  sayCursor() {
    const c = this.cursor;
    if (c.wall) {
      const [lx, ly] = /** @type {any} */ (this.toLogical)(c.x, c.y);
      const wall = this.logicalWallAt(lx, ly, c.o);
      const name = wallName(wall.col, wall.row, wall.o);
      announce(`wall ${name}${this.ghostLegal(wall) ? ", can be placed" : ""}`);
    } else {
      const [col, row] = this.logicalSquare(c.x, c.y);
      const square = wallName(col, row);
      const view = /** @type {BoardView} */ (this.view);
      const said = [square];
      const seat = view.pawns.indexOf(square);
      if (seat >= 0) said.push(`${SEAT_NAMES[seat]} pawn`);
      const shut = walledOff(col, row, view.walls, view.size);
      if (shut.length) said.push(`walled off from ${shut.join(" and ")}`);
      if (this.isTarget(square)) said.push("you can move here");
      announce(said.join(", "));
    }
  }

  /** Put the keyboard cursor on a square (the viewer's own pawn, at the start). @param {string} square */
  placeCursor(square) {
    if (!this.view) return;
    const [col, row] = parseSquare(square);
    const [dx, dy] = /** @type {any} */ (this.toScreen)(col + 0.5, row + 0.5);
    this.cursor.x = Math.floor(dx);
    this.cursor.y = Math.floor(dy);
  }
}
