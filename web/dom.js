// @ts-check
// Tiny DOM helpers. Text is only ever set with textContent: nothing a player
// typed (names, chat) can become markup.

/**
 * An element with attributes, properties and children.
 * @param {string} tag
 * @param {Record<string, any>} [props] `class`, `text`, `on*` handlers, data-*, aria-*, or properties
 * @param {...(Node|string|null|undefined|false)} children strings become text nodes
 * @returns {HTMLElement}
 */
export function h(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  apply(node, props);
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

const SVG = "http://www.w3.org/2000/svg";

/**
 * An SVG element with attributes.
 * @param {string} tag
 * @param {Record<string, any>} [attrs]
 * @returns {SVGElement}
 */
export function s(tag, attrs = {}) {
  const node = /** @type {SVGElement} */ (document.createElementNS(SVG, tag));
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "text") node.textContent = String(value);
    else if (value !== null && value !== undefined && value !== false) node.setAttribute(key, String(value));
  }
  return node;
}

/**
 * @param {HTMLElement} node
 * @param {Record<string, any>} props
 */
function apply(node, props) {
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "text") node.textContent = String(value);
    else if (key === "class") node.className = value;
    else if (key.startsWith("on")) on(node, key.slice(2), value);
    else if (key.startsWith("data-") || key.startsWith("aria-") || key === "role" || key === "for") {
      node.setAttribute(key, String(value));
    } else if (key in node) /** @type {any} */ (node)[key] = value;
    else node.setAttribute(key, String(value));
  }
}

/**
 * A handler of `node` for events of `type`, through one listener that calls whichever
 * handler the node holds: `patch` gives a node kept in place the handler of its redrawn twin.
 * @param {HTMLElement} node @param {string} type @param {(event: Event) => void} handler
 */
function on(node, type, handler) {
  const held = /** @type {any} */ (node);
  held.handlers ??= {};
  held.listening ??= new Set();
  if (!held.listening.has(type)) {
    held.listening.add(type);
    node.addEventListener(type, (event) => held.handlers[type]?.(event));
  }
  held.handlers[type] = handler;
}

/**
 * Make `nodes` the children of `parent`, keeping in place each child that equals the node
 * drawn for its place (the same tag, attributes and text: `isEqualNode`), with that node's
 * handlers. A button drawn again as it was keeps the keyboard's focus, and a click whose
 * press and release straddle the redraw still lands on it: an opponent's move redraws the
 * game's buttons, and replaced, the focused one lost the focus and a click in flight was lost.
 * @param {Element} parent @param {Node[]} nodes
 */
export function patch(parent, nodes) {
  const old = [...parent.childNodes];
  nodes.forEach((node, index) => {
    const was = old[index];
    if (!was) parent.append(node);
    else if (!was.isEqualNode(node)) was.replaceWith(node);
    else if (was instanceof Element && node instanceof Element) {
      const kept = [was, ...was.querySelectorAll("*")];
      [node, ...node.querySelectorAll("*")].forEach((drawn, at) => {
        const target = /** @type {HTMLElement} */ (kept[at]);
        /** @type {any} */ (target).handlers = {};
        for (const [type, handler] of Object.entries(/** @type {any} */ (drawn).handlers ?? {})) on(target, type, handler);
      });
    }
  });
  for (const extra of old.slice(nodes.length)) extra.remove();
}

/**
 * Replace every child of `node`.
 * @param {Element} node
 * @param {...(Node|string|null|undefined|false)} children
 */
export function fill(node, ...children) {
  node.replaceChildren(...children.filter((c) => c !== null && c !== undefined && c !== false).map(
    (c) => (typeof c === "string" ? document.createTextNode(c) : /** @type {Node} */ (c)),
  ));
}

/** @param {string} selector @param {ParentNode} [root] @returns {HTMLElement} */
export function $(selector, root = document) {
  const found = root.querySelector(selector);
  if (!found) throw new Error(`no ${selector}`);
  return /** @type {HTMLElement} */ (found);
}

/** Say something to screen readers (the page's one aria-live region). @param {string} text */
export function announce(text) {
  const region = document.getElementById("announcer");
  if (!region) return;
  // A new node each time, so the same words said twice are read twice.
  region.replaceChildren(h("p", { text }));
}
