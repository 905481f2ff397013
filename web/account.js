// @ts-check
// The log-in and register form (PROTOCOL.md section 26), shown in the lobby and, in a rated
// room, to a guest who came to take a seat.
import { h } from "./dom.js";

/** Words for an account request's refusal. */
const ACCOUNT_ERRORS = /** @type {Record<string, string>} */ ({
  bad_credentials: "Unknown name or wrong password.",
  name_unavailable: "That name is taken or not allowed: choose another.",
  rate_limited: "Too many attempts: wait a minute, then try again.",
  accounts_unavailable: "This server has no accounts: play as a guest.",
});

/**
 * The form, folded under `summary`. A login is handed to `app.logIn`, which greets again as the
 * account (and so, in a room, comes back to it and takes the seat).
 * @param {import("./connection.js").Connection} conn
 * @param {{logIn: (loggedIn: {name: string, token: string}) => void}} app
 * @param {string} summary
 */
export function loginForm(conn, app, summary) {
  const user = /** @type {HTMLInputElement} */ (h("input", { type: "text", name: "account", maxLength: 20, required: true, autocomplete: "username", spellcheck: false }));
  const password = /** @type {HTMLInputElement} */ (h("input", { type: "password", name: "password", maxLength: 128, required: true, autocomplete: "current-password" }));
  const error = h("p", { class: "form-error", role: "alert", hidden: true });
  const send = async (/** @type {"login"|"register"} */ kind) => {
    if (!form.reportValidity()) return;
    error.hidden = true;
    const reply = await conn.request({ type: kind, name: user.value.trim(), password: password.value });
    if (reply.type === "logged_in") return app.logIn({ name: reply.name, token: reply.token });
    error.textContent = reply.code === "name_unavailable" && reply.message ? nameError(reply.message) : refusalText(reply);
    error.hidden = false;
  };
  const form = /** @type {HTMLFormElement} */ (h("form", { class: "login-form", onsubmit: (/** @type {Event} */ e) => { e.preventDefault(); send("login"); } },
    h("div", { class: "row" }, field("Account name", user), field("Password", password)),
    error,
    h("div", { class: "row buttons" },
      h("button", { type: "submit", class: "primary", text: "Log in" }),
      h("button", { type: "button", class: "register", text: "Register", onclick: () => send("register") })),
    h("p", { class: "hint", text: "New here? Type a name (3–20 letters or digits) and a password (8 or more characters), then Register." })));
  return h("details", { class: "login" }, h("summary", { text: summary }), form);
}

/**
 * Changing one's password (PROTOCOL.md section 26), folded under a link beside "Log out": the
 * current one and the new one. Every other login of the account ends; this page keeps its new
 * token (`app.keepLogin`) and plays on in the same session.
 * @param {import("./connection.js").Connection} conn
 * @param {{keepLogin: (token: string) => void, notice: (text: string) => void}} app
 */
export function passwordForm(conn, app) {
  const current = /** @type {HTMLInputElement} */ (h("input", { type: "password", name: "password", maxLength: 128, required: true, autocomplete: "current-password" }));
  const fresh = /** @type {HTMLInputElement} */ (h("input", { type: "password", name: "new-password", minLength: 8, maxLength: 128, required: true, autocomplete: "new-password" }));
  const error = h("p", { class: "form-error", role: "alert", hidden: true });
  const details = h("details", { class: "password" }, h("summary", { text: "Change password" }));
  const form = /** @type {HTMLFormElement} */ (h("form", { class: "login-form", onsubmit: async (/** @type {Event} */ e) => {
    e.preventDefault();
    error.hidden = true;
    const reply = await conn.request({ type: "change_password", password: current.value, new_password: fresh.value });
    if (reply.type === "logged_in") {
      app.keepLogin(reply.token);
      form.reset();
      /** @type {HTMLDetailsElement} */ (details).open = false;
      app.notice("Password changed: your other logins have ended.");
      return;
    }
    error.textContent = reply.code === "bad_credentials" ? "The current password is wrong." : refusalText(reply);
    error.hidden = false;
  } },
    h("div", { class: "row" }, field("Current password", current), field("New password", fresh)),
    error,
    h("div", { class: "row buttons" }, h("button", { type: "submit", class: "primary", text: "Change password" }))));
  details.append(form);
  return details;
}

/** A labelled control of the account forms. @param {string} label @param {HTMLElement} control */
function field(label, control) {
  return h("label", { class: "field" }, h("span", { text: label }), control);
}

/** An account request's refusal in words. @param {any} reply the error */
function refusalText(reply) {
  return ACCOUNT_ERRORS[reply.code] ?? (reply.code === "invalid_field" ? fieldError(reply.message ?? "") : reply.message ?? "The server refused.");
}

/**
 * Why the server refused a name (`name_unavailable`), in its words made a sentence: "A name
 * has 3 to 20 characters.", "'alice' (or a name that looks like it) is taken." ("taken or not
 * allowed" said neither, an outside review).
 * @param {string} message
 */
function nameError(message) {
  const said = message.replace(/ - at `[^`]*`$/, "").trim();
  if (!said) return ACCOUNT_ERRORS.name_unavailable;
  return `${said[0].toUpperCase()}${said.slice(1)}${/[.!?]$/.test(said) ? "" : "."}`;
}

/**
 * What is wrong with a name or password the server refused (`invalid_field`), from the path
 * its message ends with (PROTOCOL.md section 3: "- at `$.password`").
 * @param {string} message
 */
function fieldError(message) {
  if (message.includes("`$.name`")) return "That name is not allowed: a name has 3–20 letters or digits.";
  if (message.includes("is the name")) return "The password must differ from the name.";
  if (message.includes("`$.password`") || message.includes("`$.new_password`")) return "That password is not allowed: a password has 8–128 characters.";
  return "Not allowed: a name has 3–20 letters or digits, a password 8–128 characters and differs from the name.";
}
