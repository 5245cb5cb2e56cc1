// A person's game against the bots (arena/server/play.py): waits for the game to
// change at /api/play/ID?after=VERSION, draws the seat's view with the legal
// actions as buttons, posts the chosen one with the page's CSRF token.
(function () {
  "use strict";
  const root = document.getElementById("play");
  const id = root.dataset.game;
  const csrf = root.dataset.csrf;
  const $ = (name) => document.getElementById(name);
  let version = -1;
  let shown = null;

  function status(game) {
    if (game.status === "your-move") {
      return "Your move (" + game.seconds_left + " s left)";
    }
    if (game.status === "over") {
      return "Game over";
    }
    if (game.status === "failed") {
      return "The game could not be played to its end";
    }
    return game.status === "starting" ? "Starting the bots…" : "The bots are moving…";
  }

  function button(text, index, turn) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = text;
    b.dataset.move = String(index);
    b.addEventListener("click", () => move(turn, index));
    return b;
  }

  function draw(game) {
    shown = game;
    $("play-status").textContent = status(game);
    $("play-view").textContent = game.view.join("\n");
    const moves = $("play-moves");
    moves.replaceChildren(...game.legal.map((text, i) => button(text, i, game.turn)));
    $("play-resign").hidden = game.status !== "your-move";
    const events = $("play-events");
    events.replaceChildren(...game.events.slice().reverse().map((line) => {
      const item = document.createElement("li");
      item.textContent = line;
      return item;
    }));
    if (game.result) {
      $("play-result-box").hidden = false;
      const rows = game.players.map((name, seat) => {
        const row = document.createElement("tr");
        for (const cell of [seat, name, game.result.scores[seat], game.result.places[seat]]) {
          const td = document.createElement("td");
          td.textContent = String(cell);
          row.appendChild(td);
        }
        return row;
      });
      $("play-result").querySelector("tbody").replaceChildren(...rows);
      const faults = game.result.faults.map((f) => "seat " + f.seat + ": " + f.kind);
      $("play-replay").textContent = faults.length ? "Faults: " + faults.join("; ") + ". " : "";
    }
    if (game.replay) {
      const link = document.createElement("a");
      link.href = game.replay;
      link.id = "play-replay-link";
      link.textContent = "The replay";
      $("play-replay").appendChild(link);
    }
  }

  async function move(turn, index) {
    for (const b of document.querySelectorAll("#play-moves button, #play-resign")) {
      b.disabled = true;
    }
    const form = new FormData();
    form.append("csrf", csrf);
    form.append("turn", String(turn));
    form.append("move", String(index));
    try {
      const reply = await fetch("/play/" + id + "/move", {method: "POST", body: form,
                                                           credentials: "same-origin"});
      const body = await reply.json();
      $("play-error").textContent = reply.ok ? "" : body.error;
    } catch (error) {
      $("play-error").textContent = "the server did not answer: try again";
    }
  }

  $("play-resign").addEventListener("click", () => move(shown ? shown.turn : 0, -1));

  async function follow() {
    for (;;) {
      try {
        const reply = await fetch("/api/play/" + id + "?after=" + version,
                                  {credentials: "same-origin"});
        if (reply.status === 404) {
          $("play-status").textContent = "This game is no longer kept here.";
          return;
        }
        const game = await reply.json();
        if (reply.ok && game.version !== version) {
          version = game.version;
          draw(game);
        }
        if (game.status === "over" || game.status === "failed") {
          return;
        }
      } catch (error) {
        await new Promise((done) => setTimeout(done, 2000));
      }
    }
  }

  setInterval(() => {
    if (shown && shown.status === "your-move" && shown.seconds_left > 0) {
      shown.seconds_left -= 1;
      $("play-status").textContent = status(shown);
    }
  }, 1000);
  follow();
})();
