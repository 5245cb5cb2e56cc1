"use strict";
/**
 * Five Arena's JavaScript bot SDK (Node.js >= 18, @msgpack/msgpack): write a
 * function, or a subclass of Bot, and call run().
 *
 *     const { run } = require("./five");
 *     run((observation, legal) => 0, { name: "first-legal" });   // index into legal
 *
 * run() owns stdin and stdout: it reads the arena's msgpack stream as it arrives,
 * answers hello and every request at once (each reply written whole), calls the
 * hooks on match_start, game_start and game_end, and returns at match_end or at
 * the end of input.  It points process.stdout.write (and so console.log) at
 * stderr, so a stray log can never corrupt the protocol stream.
 * The protocol: docs/protocol.md; this SDK's surface: docs/bots.md#javascript.
 */

const { decodeMultiStream, encode } = require("@msgpack/msgpack");

const PROTOCOL = 1;
/** The arena keeps 200 characters of a hello's name, version and author. */
const TEXT_MAX = 200;

/** One request to act: answer with an index into `legal`. */
class Request {
  constructor(message) {
    /** The request's id (the SDK echoes it). */
    this.id = message.id;
    /** What your seat may see now (docs/rules/<game>.md). */
    this.observation = message.observation ?? {};
    /** The legal actions, strings in the game's grammar; never empty. */
    this.legal = message.legal ?? [];
    /** What happened since your previous request, as far as your seat may see. */
    this.events = message.events ?? [];
    /** {move_ms, bank_ms, clock}: move_ms is free, bank_ms more may be borrowed. */
    this.time = message.time ?? {};
  }
}

/** Subclass and override choose(); the on* hooks are optional. */
class Bot {
  constructor() {
    this.name = "bot";
    this.version = "0";
    this.author = "";
  }

  /** The index into request.legal of the action to play. */
  choose(request) {
    throw new Error(`${this.constructor.name}.choose is not written`);
  }

  /** The match_start message (game, options, players, games). */
  onMatchStart(message) {}

  /** The game_start message (seat, game_number, players). */
  onGameStart(message) {}

  /** The game_end message (scores, places, game_places, reveal, events). */
  onGameEnd(message) {}
}

/** Write a line to stderr (the arena keeps the last 4 KiB of each game). */
function log(...args) {
  console.error(...args);
}

function text(value) {
  return String(value ?? "").slice(0, TEXT_MAX);
}

function asBot(bot, { name = bot.name || "bot", version = "0", author = "" }) {
  if (bot instanceof Bot || typeof bot !== "function") return bot;
  const wrapped = new Bot();
  Object.assign(wrapped, { name, version, author });
  wrapped.choose = (request) => bot(request.observation, request.legal);
  return wrapped;
}

/** The reply to one message, or null; false for the end of the match. */
function reply(bot, message) {
  switch (message?.type) {
    case "request":
      return { type: "action", id: message.id, index: Math.trunc(bot.choose(new Request(message))) };
    case "hello":
      return { type: "hello", name: text(bot.name), version: text(bot.version),
               author: text(bot.author), protocol: PROTOCOL };
    case "match_start":
      bot.onMatchStart?.(message);
      return null;
    case "game_start":
      bot.onGameStart?.(message);
      return null;
    case "game_end":
      bot.onGameEnd?.(message);
      return null;
    case "match_end":
      return false;
    default: // unknown messages are ignored
      return null;
  }
}

/**
 * Play on stdin/stdout until the arena ends the match or closes stdin.
 * bot: a function (observation, legal) => index (options: name, version,
 * author), or a Bot.  Resolves when the match is over; the process then exits
 * with status 0 once its output is written.
 */
async function run(bot, options = {}) {
  bot = asBot(bot, options);
  const stdout = process.stdout;
  const write = stdout.write.bind(stdout);
  stdout.write = process.stderr.write.bind(process.stderr);
  for await (const message of decodeMultiStream(process.stdin)) {
    const answer = reply(bot, message);
    if (answer === false) break;
    if (answer) write(encode(answer));
  }
  process.stdin.destroy();
  process.exitCode = 0;
}

module.exports = { Bot, Request, log, run };
