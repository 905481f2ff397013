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
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key.startsWith("data-") || key.startsWith("aria-") || key === "role" || key === "for") {
      node.setAttribute(key, String(value));
    } else if (key in node) /** @type {any} */ (node)[key] = value;
    else node.setAttribute(key, String(value));
  }
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
