/* Five Arena replay viewer, shared by every replay page (plain ES2017, no libraries).
 *
 * A page embeds the spectator's view of its game in <script id="replay-data">,
 * and its bots and where each seat's view is in <script id="replay-page"> (JSON,
 * data the page never runs), one entry a seat, null for a seat not offered:
 *  - "seat_files" (the static report): a script calling replaySeat(), loaded by a
 *    <script> element, which works from file:// (a fetch of a file does not);
 *  - "seat_urls" (the server): JSON {"seat": N, "view": ...}, fetched with the
 *    viewer's cookie; the server answers only a seat's owner, and never a script.
 * A seat's view may come with the seat's per-move stderr, [[step, move, text], ...]
 * (arena/store/move_logs.py; "move" counts the seat's own decisions, which is how
 * a move finds its position here), shown beside the position it belongs to:
 * the server's JSON "logs", a report's seat file's second argument (--logs).
 * A seat's view is loaded only when that seat is chosen.  Both views are
 * deflated JSON in base64, built by
 * arena/store/replays.py (see "compact encoding" there): per position the
 * decisions shown, the changed observation fields and the events as text lines.
 */
"use strict";
(function () {
  const FRENCH = /^(?:[A2-9TJQK][cdhs]|X)$/;
  const RUMMY = /^[br][sABCJKL]$/;
  const SUITS = {c: "♣", d: "♦", h: "♥", s: "♠"};
  // Drawn by the viewer itself (seat boxes, whose turn), not listed as facts.
  const ENVELOPE = ["game", "seat", "players", "to_move", "hand", "hand_sizes"];
  const MAX_BACKS = 13;
  const PLAY_MS = 700;  // a step's time at 1x
  const SPEEDS = [0.25, 0.5, 1, 2, 4, 8];

  const root = document.getElementById("viewer");
  const source = document.getElementById("replay-data");
  const views = {};  // "spectator" or a seat number -> {seat, positions, layout}
  const ui = {};
  let page = null;
  let view = null;
  let index = 0;
  let timer = null;
  let speed = 1;

  // -- decoding --------------------------------------------------------------------------
  async function inflate(text) {
    const bytes = Uint8Array.from(atob(text.trim()), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
    return JSON.parse(await new Response(stream).text());
  }

  function field(entry, i, empty) {
    return i < entry.length ? entry[i] : empty;
  }

  function apply(state, delta) {
    const out = Object.assign({}, state);
    for (let i = 0; i < delta.length; i += 2) {
      const code = delta[i];
      if (code < 0) {
        const name = page.keys[-code - 1];
        out[name] = (Array.isArray(out[name]) ? out[name] : []).concat(delta[i + 1]);
      } else {
        out[page.keys[code]] = delta[i + 1];
      }
    }
    return out;
  }

  function spectatorView() {
    let state = {};
    const positions = page.steps.map((step, p) => {
      state = apply(state, field(step, 1, []));
      return {moves: field(step, 0, []), log: field(step, 2, []), state: state, page: p};
    });
    return {seat: null, positions: positions};
  }

  function seatView(data) {
    const spectator = views.spectator.positions;
    let state = {};
    let done = -1;
    const positions = data.steps.map((step) => {
      const p = field(step, 0, 0);
      const aligned = p > done;  // starts the page's position p (else: the seat's own hidden step)
      for (let q = done + 1; q <= p; q++) state = apply(state, field(page.steps[q], 1, []));
      done = p;
      state = apply(state, field(step, 2, []));
      const moves = field(step, 1, 0);
      return {
        moves: Array.isArray(moves) ? moves : spectator[p].moves,
        log: (aligned ? spectator[p].log : []).concat(field(step, 3, [])),
        state: state,
        page: p,
      };
    });
    return {seat: data.seat, positions: positions};
  }

  // -- drawing ---------------------------------------------------------------------------
  function el(tag, className, ...children) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    for (const child of children) {
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }

  function isCard(value) {
    return typeof value === "string" && (FRENCH.test(value) || RUMMY.test(value));
  }

  function holdsCard(value) {
    if (isCard(value)) return true;
    if (Array.isArray(value)) return value.some(holdsCard);
    if (value && typeof value === "object") return Object.values(value).some(holdsCard);
    return false;
  }

  function card(name) {
    const node = el("span", "card");
    node.dataset.card = name;
    node.title = name;
    if (name === "X") {
      node.classList.add("joker");
      node.textContent = "Jkr";
    } else if (FRENCH.test(name)) {
      node.classList.add("dh".includes(name[1]) ? "red" : "black");
      node.textContent = (name[0] === "T" ? "10" : name[0]) + SUITS[name[1]];
    } else {
      node.classList.add(name[0] === "r" ? "red" : "black");
      node.textContent = name[1];
    }
    return node;
  }

  function backs(count) {
    const node = el("span", "backs");
    for (let i = 0; i < Math.min(count, MAX_BACKS); i++) node.append(el("span", "card back"));
    node.append(el("span", "count", count + (count === 1 ? " card" : " cards")));
    return node;
  }

  function render(value) {
    if (value === null || value === undefined || (Array.isArray(value) && !value.length)) {
      return el("span", "none", "—");
    }
    if (isCard(value)) return card(value);
    if (Array.isArray(value)) {
      if (value.every(isCard)) return el("span", "cards", ...value.map(card));
      const list = el("span", "list");
      value.forEach((item, i) => list.append(...(i ? [el("span", "sep", " · ")] : []), render(item)));
      return list;
    }
    if (typeof value === "object") {
      return el("span", "object", ...Object.keys(value).map((key) =>
        el("span", "pair", el("span", "key", key), " ", render(value[key]))));
    }
    if (typeof value === "boolean") return el("span", value ? "yes" : "no", value ? "yes" : "no");
    return document.createTextNode(String(value));
  }

  function words(text) {  // a decision or event line, its cards drawn
    const node = el("span", "words");
    text.split(" ").forEach((word, i) => {
      if (i) node.append(" ");
      node.append(isCard(word) ? card(word) : word);
    });
    return node;
  }

  function label(key) {  // a field's human label (the game module's), else its name
    return (page.labels && page.labels[key]) || key.replace(/_/g, " ");
  }

  function seatName(seat) {
    return el("span", "who", el("span", "seatno", seat), " ", page.bots[seat] || "?");
  }

  function moveLine(move) {
    const line = el("div", "move", seatName(move[0]), ": ",
                    move[1] === null ? el("em", "hidden", "decided (hidden)") : words(move[1]));
    if (move[2]) {
      line.classList.add("by-arena");
      line.append(" ", el("small", "arena-default", "(arena default)"));
      line.lastChild.title = "played by the arena for the faulted bot";
    }
    return line;
  }

  function layout(v) {  // which fields go where, fixed for a whole view
    const own = new Set();
    const cards = new Set();
    for (const position of v.positions) {
      const spectator = views.spectator.positions[position.page].state;
      for (const key of Object.keys(position.state)) {
        if (v.seat !== null && !(key in spectator)) own.add(key);
        else if (holdsCard(position.state[key])) cards.add(key);
      }
    }
    const skip = new Set(ENVELOPE.concat(page.seat_fields));
    return {own: Array.from(own).filter((key) => !skip.has(key)),
            cards: Array.from(cards).filter((key) => !skip.has(key))};
  }

  function seatBox(seat, position) {
    const state = position.state;
    const box = el("div", "seat");
    box.dataset.seat = seat;
    if ((state.to_move || []).includes(seat)) box.classList.add("to-move");
    if (view.seat === seat) box.classList.add("viewer");
    if (position.moves.some((move) => move[0] === seat)) box.classList.add("moved");
    const head = el("div", "seat-head", seatName(seat));
    if (state.dealer === seat) head.append(" ", el("span", "badge", "dealer"));
    if (box.classList.contains("to-move")) head.append(" ", el("span", "badge turn", "to move"));
    box.append(head);
    const held = (state.hand_sizes || [])[seat];
    if (view.seat === seat && Array.isArray(state.hand)) {
      box.append(el("div", "hand", ...(state.hand.length ? state.hand.map(card) : ["no cards"])));
    } else if (held !== undefined) {
      box.append(el("div", "hand hidden-hand", backs(held)));
    }
    const facts = el("dl", "seat-facts");
    const keys = page.seat_fields.filter((key) => Array.isArray(state[key]));
    for (const key of keys) facts.append(el("dt", "", label(key)), el("dd", "", render(state[key][seat])));
    if (view.seat === seat) {
      for (const key of view.layout.own) facts.append(el("dt", "own", label(key)), el("dd", "own", render(state[key])));
    }
    if (facts.childNodes.length) box.append(facts);
    return box;
  }

  function draw() {
    const position = view.positions[index];
    const state = position.state;
    const last = view.positions.length - 1;
    ui.slider.value = index;
    ui.label.textContent = "Step " + index + " of " + last;
    root.dataset.step = index;
    root.dataset.viewer = view.seat === null ? "spectator" : view.seat;
    ui.moves.replaceChildren(...(position.moves.length ? position.moves.map(moveLine)
      : [el("div", "move none", index ? "—" : "Start of the game")]));
    const seats = page.bots.map((_, seat) => seatBox(seat, position));
    const middle = el("div", "middle");
    for (const key of view.layout.cards) {
      if (key in state) middle.append(el("div", "pile", el("div", "pile-name", label(key)), render(state[key])));
    }
    ui.table.replaceChildren(el("div", "seats", ...seats), middle);
    const facts = el("dl", "facts state-facts");
    const skip = new Set(ENVELOPE.concat(page.seat_fields, view.layout.own, view.layout.cards));
    for (const key of Object.keys(state)) {
      if (!skip.has(key)) facts.append(el("dt", "", label(key)), el("dd", "", render(state[key])));
    }
    if (index === last && page.reveal && Object.keys(page.reveal).length) {
      facts.append(el("dt", "reveal", "reveal"), el("dd", "reveal", render(page.reveal)));
    }
    ui.facts.replaceChildren(facts);
    ui.log.replaceChildren(...position.log.map((line) => el("li", "", words(line))));
    ui.logBox.hidden = !position.log.length;
    ui.stderr.textContent = position.stderr || "";
    ui.stderrBox.hidden = !position.stderr;
    markCurrent();
  }

  function markCurrent() {
    const current = ui.list.querySelector(".current");
    if (current) current.classList.remove("current");
    const item = ui.list.children[index - 1];
    if (!item) return;
    item.classList.add("current");
    const top = item.offsetTop - ui.list.offsetTop;  // scroll the list only, never the page
    if (top < ui.list.scrollTop || top > ui.list.scrollTop + ui.list.clientHeight - item.offsetHeight) {
      ui.list.scrollTop = top - ui.list.clientHeight / 2;
    }
  }

  function listMoves() {
    ui.list.replaceChildren(...view.positions.slice(1).map((position, i) => {
      const parts = [];  // the cards drawn as on the table
      position.moves.forEach((move, m) => parts.push(...(m ? ["; "] : []), move[0] + ": ",
        move[1] === null ? "(hidden)" : words(move[1]), ...(move[2] ? [" (arena default)"] : [])));
      const item = el("li", position.moves.some((move) => move[2]) ? "by-arena" : "",
        ...(parts.length ? parts : ["—"]));
      item.addEventListener("click", () => go(i + 1));
      return item;
    }));
  }

  // -- moving ----------------------------------------------------------------------------
  function go(target) {
    index = Math.max(0, Math.min(view.positions.length - 1, target));
    draw();
    if (index === view.positions.length - 1) stop();
  }

  function stop() {
    if (timer !== null) clearInterval(timer);
    timer = null;
    ui.play.textContent = "▶ Play";
  }

  function play() {
    if (timer !== null) return stop();
    if (index === view.positions.length - 1) go(0);
    timer = setInterval(() => go(index + 1), PLAY_MS / speed);
    ui.play.textContent = "❚❚ Pause";
  }

  function setSpeed(value) {  // a running replay goes on at the new speed
    speed = value;
    root.dataset.speed = value;
    if (timer !== null) {
      clearInterval(timer);
      timer = setInterval(() => go(index + 1), PLAY_MS / speed);
    }
  }

  function show(next) {  // switch views, keeping to the same point of the game
    const at = view ? view.positions[index].page : 0;
    ui.notice.hidden = true;
    view = next;
    if (!view.layout) view.layout = layout(view);
    ui.slider.max = view.positions.length - 1;
    listMoves();
    const found = view.positions.findIndex((position) => position.page >= at);
    go(found < 0 ? view.positions.length - 1 : found);
  }

  function choose(value) {
    stop();
    if (value === "spectator") return show(views.spectator);
    const seat = Number(value);
    if (views[seat]) return show(views[seat]);
    if (page.seat_urls) return fetchSeat(seat);
    const script = document.createElement("script");
    script.src = page.seat_files[seat];
    script.onerror = () => notice("Seat " + seat + "'s view is not published with this report.");
    document.head.append(script);  // the file calls replaySeat(), which shows it
  }

  function fetchSeat(seat) {
    fetch(page.seat_urls[seat], {credentials: "same-origin"}).then((reply) => {
      if (!reply.ok) throw new Error("the server answered " + reply.status);
      return reply.json();
    }).then((body) => seatArrived(body.view, body.logs))
      .catch((error) => notice("Seat " + seat + "'s view could not be fetched: " + error.message));
  }

  function attachLogs(v, logs) {  // the k-th position where the seat decides gets move k's
    const byMove = new Map((logs || []).map((entry) => [entry[1], entry[2]]));
    let move = 0;
    for (const position of v.positions) {
      if (!position.moves.some((m) => m[0] === v.seat)) continue;
      if (byMove.has(move)) position.stderr = byMove.get(move);
      move += 1;
    }
    return v;
  }

  function seatArrived(text, logs) {  // a seat's packed view: shown if its seat is still chosen
    inflate(text).then((data) => {
      views[data.seat] = attachLogs(seatView(data), logs);
      if (ui.select.value === String(data.seat)) show(views[data.seat]);
    }).catch((error) => notice("This seat's view could not be read: " + error));
  }

  function notice(text) {
    ui.notice.textContent = text;
    ui.notice.hidden = false;
  }

  function button(text, title, action) {
    const node = el("button", "", text);
    node.type = "button";
    node.title = title;
    node.addEventListener("click", action);
    return node;
  }

  function build() {
    ui.slider = el("input", "slider");
    ui.slider.type = "range";
    ui.slider.min = 0;
    ui.slider.setAttribute("aria-label", "Step");
    ui.slider.addEventListener("input", () => go(Number(ui.slider.value)));
    ui.label = el("span", "step-label");
    ui.label.setAttribute("aria-live", "polite");
    ui.play = button("▶ Play", "Play the game step by step", play);
    ui.speed = el("select", "speed-select", ...SPEEDS.map((value) =>
      new Option(value + "×", String(value), value === 1, value === 1)));
    ui.speed.setAttribute("aria-label", "Speed");
    ui.speed.title = "Steps per " + PLAY_MS / 1000 + " s when playing";
    ui.speed.addEventListener("change", () => setSpeed(Number(ui.speed.value)));
    root.dataset.speed = speed;
    ui.select = el("select", "viewer-select", new Option("Spectator", "spectator"));
    ui.select.setAttribute("aria-label", "Whose view");
    (page.seat_urls || page.seat_files || []).forEach((where, seat) => {
      if (where) ui.select.append(new Option("Seat " + seat + " · " + page.bots[seat], String(seat)));
    });
    ui.select.addEventListener("change", () => choose(ui.select.value));
    ui.notice = el("p", "notice");
    ui.notice.hidden = true;
    ui.moves = el("div", "moves");
    ui.moves.setAttribute("aria-live", "polite");
    ui.table = el("div", "table");
    ui.facts = el("div", "state");
    ui.log = el("ul", "log");
    ui.logBox = el("div", "log-box", el("div", "pile-name", "events"), ui.log);
    ui.stderr = el("pre", "stderr move-stderr");
    ui.stderrBox = el("div", "log-box stderr-box", el("div", "pile-name", "stderr of this move"),
                      ui.stderr);
    ui.list = el("ol", "move-list");
    const controls = el("div", "controls",
      button("«", "First step (Home)", () => go(0)),
      button("‹", "Previous step (←)", () => go(index - 1)),
      button("›", "Next step (→)", () => go(index + 1)),
      button("»", "Last step (End)", () => go(view.positions.length - 1)),
      ui.play, el("label", "speed-choice", "Speed: ", ui.speed), ui.slider, ui.label,
      el("label", "viewer-choice", "View: ", ui.select));
    const main = el("div", "stage", ui.moves, ui.table, ui.logBox, ui.stderrBox, ui.facts);
    root.replaceChildren(controls, ui.notice, el("div", "board", main, ui.list));
    root.hidden = false;
    document.addEventListener("keydown", (event) => {
      const tag = event.target.tagName;
      if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || event.altKey || event.ctrlKey || event.metaKey) return;
      const moves = {ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: view.positions.length - 1};
      if (event.key in moves) {
        event.preventDefault();
        go(moves[event.key]);
      }
    });
  }

  async function start() {
    if (!root || !source) return;
    if (typeof DecompressionStream === "undefined") {
      root.hidden = false;
      root.textContent = "This browser cannot show the replay (it lacks DecompressionStream).";
      return;
    }
    page = await inflate(source.textContent);
    const facts = document.getElementById("replay-page");
    Object.assign(page, facts ? JSON.parse(facts.textContent) : {bots: [], seat_files: []});
    if (!page.seat_urls) window.replaySeat = seatArrived;  // what a report's seat file calls
    views.spectator = spectatorView();
    build();
    show(views.spectator);
  }

  start().catch((error) => {
    root.hidden = false;
    root.textContent = "The replay could not be read: " + error;
  });
})();
