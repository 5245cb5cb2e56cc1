"use strict";
// @NAME@: a Five Arena bot.  It plays a random legal move; your strategy goes
// in choose().  The SDK is five.js beside this file (docs/bots.md#javascript).

const { Bot, log, run } = require("./five");

class MyBot extends Bot {
  constructor() {
    super();
    this.name = "@NAME@";
    this.version = "1";
    this.author = "";
  }

  choose(request) {
    // What your seat may see now: the envelope (game, seat, players, to_move,
    // phase, hand, hand_sizes) and the game's fields (docs/rules/<game>.md).
    const observation = request.observation;
    // The legal actions: strings in the game's action grammar, never empty.
    const legal = request.legal;
    // The time: move_ms is free for this move; bank_ms more (for the rest of
    // this game) may be borrowed before the move is a timeout.
    const { move_ms: moveMs = 1000, bank_ms: bankMs = 0 } = request.time;
    return this.strategy(observation, legal, moveMs, bankMs);
  }

  strategy(observation, legal, moveMs, bankMs) {
    // Your strategy goes here.  Logs go to stderr: log() and console.log do
    // (the SDK points stdout at stderr); the arena keeps 4 KiB of each game.
    return Math.floor(Math.random() * legal.length);
  }

  onGameEnd(message) {
    // Scores, places and the reveal of a finished game.
  }
}

run(new MyBot()).catch((error) => {
  log(error);
  process.exitCode = 1;
});
