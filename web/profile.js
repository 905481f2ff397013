// @ts-check
// A player's profile (#/profile/NAME, `profile` in PROTOCOL.md section 26):
// ratings per pool, the record of finished games and the recent games.
import { h } from "./dom.js";
import { POOLS, versus } from "./lobby.js";
import { ago, variantText, wonHow } from "./words.js";

const POOL_NAMES = Object.fromEntries(POOLS);

export class ProfileView {
  /**
   * @param {HTMLElement} root @param {import("./connection.js").Connection} conn @param {string} name
   * @param {{go: (hash: string) => void}} app
   */
  constructor(root, conn, name, app) {
    this.app = app;
    this.body = h("div", { class: "profile-body" }, h("p", { class: "loading", text: "Loading…" }));
    root.replaceChildren(h("div", { class: "lobby profile" },
      h("section", { class: "card wide" },
        h("div", { class: "card-head" }, h("h1", { class: "profile-name", text: name }),
          h("button", { type: "button", class: "leave", text: "Lobby", onclick: () => app.go("#/") })),
        this.body)));
    this.load(conn, name);
  }

  destroy() {}

  /** @param {import("./connection.js").Connection} conn @param {string} name */
  async load(conn, name) {
    const reply = await conn.request({ type: "profile", name });
    if (reply.type !== "profile_info") {
      const why = reply.code === "player_not_found" ? `There is no player ${name}.` : reply.code === "accounts_unavailable" ? "This server keeps no accounts." : reply.message;
      this.body.replaceChildren(h("p", { class: "empty", text: why }));
      return;
    }
    const title = /** @type {HTMLElement} */ (this.body.parentElement?.querySelector(".profile-name"));
    title.textContent = reply.name; // the name as registered
    document.body.dataset.profile = reply.name;
    const since = reply.bot ? `The computer, level ${reply.bot}` : `Registered ${ago(reply.created)}`;
    this.body.replaceChildren(
      h("p", { class: "record" }, `${since} · ${reply.played} game${reply.played === 1 ? "" : "s"}: ${reply.won} won, ${reply.lost} lost, ${reply.drawn} drawn`),
      h("h2", { text: "Ratings" }),
      reply.ratings.length ? this.ratings(reply.ratings) : h("p", { class: "empty", text: "No rated games yet." }),
      h("h2", { text: "Recent games" }),
      reply.recent.length ? this.recent(reply.recent, reply.name) : h("p", { class: "empty", text: "No finished games yet." }),
    );
  }

  /** @param {any[]} ratings */
  ratings(ratings) {
    return h("table", { class: "list ratings" },
      h("thead", {}, h("tr", {}, h("th", { text: "Pool" }), h("th", { text: "Rating" }), h("th", { text: "Games" }), h("th", { text: "W–L–D" }))),
      h("tbody", {}, ...ratings.map((r) => h("tr", { "data-pool": r.pool },
        h("td", { text: POOL_NAMES[r.pool] ?? r.pool }),
        h("td", { class: "rating", text: `${r.rating}${r.provisional ? "?" : ""}`, title: r.provisional ? "provisional: fewer than 10 rated games" : "" }),
        h("td", { text: String(r.games) }),
        h("td", { text: `${r.wins}–${r.losses}–${r.draws}` })))));
  }

  /** @param {any[]} games @param {string} name */
  recent(games, name) {
    return h("table", { class: "list recent" },
      h("thead", {}, h("tr", {}, h("th", { text: "Players" }), h("th", { text: "Result" }), h("th", { text: "" }))),
      h("tbody", {}, ...games.map((game) => {
        const seat = game.players.findIndex((/** @type {string} */ p) => p.toLowerCase() === name.toLowerCase());
        // How it ended too ("lost (on time)"), and, in a rated game, whose seats are all
        // accounts, the others' names open their profiles (a review found neither).
        const won = game.winner === seat;
        const how = game.reason === "abandon" ? (won ? " (opponent away)" : " (away too long)")
          : game.reason === "resign" && !won ? " (resigned)" : wonHow(game.reason);
        const result = game.winner === null ? (game.reason === "draw" ? "draw" : game.reason) : `${won ? "won" : "lost"}${how}`;
        const names = versus(game.players).map((part, index) => {
          const who = game.players[index / 2];
          if (!game.pool || index % 2 || index / 2 === seat || typeof who !== "string") return part;
          return h("a", { href: `#/profile/${encodeURIComponent(who)}` }, part);
        });
        return h("tr", {},
          h("td", { class: "names" }, ...names),
          h("td", { text: `${result} · ${game.pool ? "rated" : "casual"} · ${variantText(game.variant)} · ${ago(game.finished)}` }),
          h("td", { class: "act" }, h("button", { type: "button", text: "Replay", onclick: () => this.app.go(`#/replay/${game.game}`) })));
      })));
  }
}
