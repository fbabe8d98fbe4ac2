// The table: a night of 血战到底 kept round by round (/api/v1/tables). Every phone at the table joins with the
// table's code and writes the same rounds; each write names the round's version it was made on, and a write on
// an older one comes back 409 with the table as it is now, shown at once. Plain script, no build step.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const page = () => window.smjPage; // app.js: call, element, context, hand, conditions, preset
  const KINDS = { direct: "直杠 direct (刮风)", added: "面下杠 added (刮风)", concealed: "暗杠 concealed (下雨)" };
  // ``target``: the event a correction form is open on, {round, index}; null for the next event
  // ``dealerFor``: the finished round whose next dealer the dealer box was last set to
  // ``opened``: the number of a past round the player corrected, kept open
  const table = { id: null, code: null, data: null, form: null, target: null, poll: null, dealerFor: null, opened: null };

  const el = (tag, className, text) => page().element(tag, className, text);
  // the form and its messages move beside an event being corrected (out of the document while its round's
  // list is redrawn): held here, not looked up by id
  const nodes = {};
  const formNode = () => nodes.form || (nodes.form = $("table-form"));
  const statusNode = () => nodes.status || (nodes.status = $("table-status"));
  const current = () => (table.data && table.data.rounds.length ? table.data.rounds[table.data.rounds.length - 1] : null);
  const inPlay = () => current() && !current().finished;
  const headers = () => ({ "Content-Type": "application/json", "X-Table-Code": table.code || "" });

  function status(text, isError = false) {
    statusNode().textContent = text;
    statusNode().classList.toggle("error", isError);
  }

  function remember() {
    try {
      if (table.id) localStorage.setItem("smj-table", JSON.stringify({ id: table.id, code: table.code }));
      else localStorage.removeItem("smj-table");
    } catch (error) {
      // private browsing: the table lasts this page only
    }
  }

  async function write(path, method, body) {
    try {
      table.data = await page().call(`/tables/${table.id}${path}`, { method, headers: headers(), body: JSON.stringify(body || {}) });
      status("");
      closeForm();
      render();
      return true;
    } catch (error) {
      if (error.code === "stale_write" && error.details && error.details[0]) {
        table.data = error.details[0].table;
        render();
        status("有人先记了 Another phone wrote this round first: here it is now. Enter yours again if it still applies.", true);
      } else {
        const where = error.details && error.details[0] && error.details[0].event !== undefined ? ` (event ${error.details[0].event + 1})` : "";
        status(`出错 ${page().zh(error.code)}${error.message}${where}`, true);
        if (error.status === 409) await reload(); // another phone moved the table on: show it as it is
      }
      return false;
    }
  }

  async function create() {
    const players = [...document.querySelectorAll('#table-new input[name="seat"]')].map((input) => input.value.trim());
    const base = Number($("table-base").value) || 1;
    try {
      const made = await page().call("/tables", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ players, preset: page().preset(), base }),
      });
      table.id = made.id;
      table.code = made.code;
      table.data = made;
      remember();
      render();
      status(`桌号 Table code ${made.code}: the other phones join with it.`);
    } catch (error) {
      status(`出错 ${page().zh(error.code)}${error.message}`, true);
    }
  }

  async function join() {
    const code = $("table-code").value.trim().toUpperCase();
    if (!code) return;
    try {
      table.data = await page().call("/tables/join", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ code }),
      });
      table.id = table.data.id;
      table.code = code;
      remember();
      render();
      status("");
    } catch (error) {
      status(`出错 ${page().zh(error.code)}${error.message}`, true);
    }
  }

  async function refresh() {
    if (!table.id || document.hidden || table.form) return; // never under a form being filled in
    await reload();
  }

  async function reload() {
    try {
      const fresh = await page().call(`/tables/${table.id}`);
      if (JSON.stringify(fresh) !== JSON.stringify(table.data)) {
        table.data = fresh;
        render();
      }
    } catch (error) {
      if (error.status === 404) leave();
    }
  }

  function leave() {
    table.id = table.code = table.data = null;
    remember();
    closeForm();
    render();
  }

  // ---- what the round holds

  const name = (seat) => table.data.players[seat];
  const seatOf = (player) => (typeof player === "number" ? player : table.data.players.indexOf(player));

  // who has won in ``round`` before its event ``upto`` (the whole round when not given)
  function winnersSoFar(round = current(), upto = undefined) {
    const won = new Set();
    for (const event of ((round && round.events) || []).slice(0, upto)) {
      if (event.type !== "win") continue;
      for (const winner of event.winners || [event]) won.add(seatOf(winner.player));
    }
    return won;
  }

  // a win's flag as the players say it (杠上炮), not as the API spells it (gang_shang_pao)
  function flagName(key) {
    const condition = page().conditions().find((c) => c.key === key);
    return condition ? condition.name_zh : key;
  }

  function describe(event) {
    if (event.type === "kong") {
      const from = event.kind === "direct" && event.discarder !== undefined ? `, ${name(seatOf(event.discarder))} 放杠 discarded it` : "";
      return `${name(seatOf(event.player))} ${KINDS[event.kind] || event.kind} ${event.tile}${from}`;
    }
    if (event.type === "win") {
      const winners = (event.winners || [event]).map((w) => `${name(seatOf(w.player))}${w.fan !== undefined ? ` ${w.fan} 番` : " 手牌 by hand"}`);
      const how = event.self_drawn ? "自摸 self-drawn" : `点炮 on ${name(seatOf(event.discarder))}'s discard`;
      const flags = page().winFlags().filter((flag) => event[flag]).map(flagName).join(" ");
      return `胡 ${winners.join(" + ")} ${how} ${flags}`.trim();
    }
    if (event.type === "end") return event.reason === "wall_exhausted" ? "流局 the wall ran out" : "三家胡 three have won";
    return event.type;
  }

  // ---- drawing

  function render() {
    const playing = Boolean(table.data);
    $("table-setup").hidden = playing;
    $("table-play").hidden = !playing;
    $("table-bar").hidden = !playing;
    if (!playing) return;
    const data = table.data;
    $("table-info").textContent = `桌号 code ${table.code || "?"} · ${data.preset} · 底 base ${data.base}`;
    // the night at the top of the page, one line, without pushing the photo off the first screen
    const night = data.players.map((player, seat) => `${player} ${data.totals[seat] > 0 ? "+" : ""}${data.totals[seat]}`).join(" · ");
    $("table-bar-link").textContent = `牌桌 ${table.code || ""} · ${night}`;
    const seats = $("table-seats");
    seats.replaceChildren();
    data.players.forEach((player, seat) => {
      const box = el("div");
      const total = data.totals[seat];
      const amount = el("strong", total > 0 ? "plus" : total < 0 ? "minus" : "", `${total > 0 ? "+" : ""}${total}`);
      amount.dataset.testid = `total-${seat}`;
      box.append(el("span", "", player), amount);
      seats.append(box);
    });
    const round = current();
    const next = round && round.finished ? round.ledger.next_dealer : null;
    const nextText = next !== null && next !== undefined ? ` · 下一局庄家 next dealer ${name(next)}` : "";
    $("table-round").textContent = round
      ? `第 ${round.number} 局 Round ${round.number}: ${round.finished ? "结束 over" : "进行中 in play"} · ${round.events.length} ${round.events.length === 1 ? "event" : "events"}${nextText}`
      : "还没开局 No round yet.";
    $("round-new").hidden = Boolean(inPlay());
    $("round-banker-label").hidden = Boolean(inPlay());
    $("round-voids").hidden = Boolean(inPlay());
    const voids = $("round-void-seats");
    if (voids.children.length !== 4) {
      voids.replaceChildren();
      data.players.forEach((player, seat) => {
        const label = el("label", "", `${player} `);
        const select = el("select");
        select.dataset.seat = String(seat);
        for (const [value, text] of [["", "—"], ["m", "万 m"], ["p", "筒 p"], ["s", "条 s"]]) {
          select.append(Object.assign(el("option", "", text), { value }));
        }
        label.append(select);
        voids.append(label);
      });
    }
    const dealer = $("round-banker");
    if (dealer.options.length !== 5) {
      dealer.replaceChildren(Object.assign(el("option", "", "—"), { value: "" }));
      data.players.forEach((player, seat) => dealer.append(Object.assign(el("option", "", player), { value: String(seat) })));
    }
    // the next round's dealer (the first winner; the discarder of a 一炮多响; the dealer again when nobody
    // won), chosen once a round is over: the players may choose another
    const over = round && round.finished ? `${data.id}:${round.number}:${next}` : null;
    if (over && table.dealerFor !== over) {
      table.dealerFor = over;
      dealer.value = next !== null && next !== undefined ? String(next) : "";
    }
    for (const id of ["event-kong", "event-win", "event-end", "event-undo"]) $(id).hidden = !inPlay();
    if (round && round.finished && round.events.length) $("event-undo").hidden = false; // take back the end
    renderRounds();
  }

  function renderRounds() {
    const list = $("table-rounds");
    if (list.contains(formNode())) list.before(formNode(), statusNode()); // kept while the list is redrawn
    list.replaceChildren();
    const target = table.target;
    for (const round of [...table.data.rounds].reverse()) {
      const details = el("details");
      details.open = round === current() || round.number === table.opened || Boolean(target && target.round.number === round.number);
      const totals = round.ledger.totals.map((t, seat) => `${name(seat)} ${t > 0 ? "+" : ""}${t}`).join(" · ");
      details.append(el("summary", "", `第 ${round.number} 局 Round ${round.number}: ${totals}`));
      const events = el("ol");
      round.events.forEach((event, index) => {
        const item = el("li", "", describe(event));
        item.dataset.at = `${round.number}:${index}`;
        const correct = { kong: kongForm, win: winForm, end: event.reason === "wall_exhausted" ? endForm : null }[event.type];
        if (correct) {
          const fix = Object.assign(el("button", "button small", "改 Correct"), { type: "button" });
          fix.addEventListener("click", () => correct({ round, index }));
          item.append(" ", fix);
        }
        for (const payment of round.ledger.payments.filter((p) => p.event === index)) {
          item.append(el("div", "payment", `${name(payment.payer)} → ${name(payment.payee)} ${payment.amount} · ${payment.reason}`));
        }
        events.append(item);
      });
      details.append(events);
      for (const note of round.ledger.notes) details.append(el("p", "note", note));
      list.append(details);
    }
    placeForm();
  }

  // The form and its messages: beside the event a correction is made on, else above the rounds.
  function placeForm() {
    const form = formNode();
    const said = statusNode();
    const target = table.target;
    const spot = target && $("table-rounds").querySelector(`li[data-at="${target.round.number}:${target.index}"]`);
    if (spot) {
      if (form.parentNode !== spot) spot.append(form, said);
    } else if (form.nextSibling !== said || said.nextSibling !== $("table-rounds")) {
      $("table-rounds").before(form, said);
    }
  }

  // ---- entering events

  function closeForm() {
    table.form = null;
    table.target = null;
    formNode().hidden = true;
    formNode().replaceChildren();
    if (table.data) placeForm();
  }

  function seatSelect(label, names) {
    const wrap = el("label", "", label);
    const select = el("select");
    names.forEach((player, seat) => select.append(Object.assign(el("option", "", player), { value: String(seat) })));
    wrap.append(select);
    return [wrap, select];
  }

  // ``target``: {round, index} to correct an entered event (PUT), opened beside it and filled with the event
  // as it was; else the next event of the round in play. A message left from before is cleared.
  function openForm(kind, build, target = null) {
    table.form = kind;
    table.target = target;
    status("");
    const form = formNode();
    form.replaceChildren();
    form.hidden = false;
    const submit = build(form, target ? target.round.events[target.index] : null);
    const actions = el("div", "table-actions");
    const ok = Object.assign(el("button", "button primary", "记入 Record"), { type: "submit" });
    const cancel = Object.assign(el("button", "button", "取消 Cancel"), { type: "button" });
    cancel.addEventListener("click", closeForm);
    actions.append(ok, cancel);
    form.append(actions);
    if (target) form.prepend(el("p", "note", `改 Correcting event ${target.index + 1} of round ${target.round.number}: change what was wrong.`));
    placeForm();
    form.scrollIntoView({ block: "nearest" });
    form.onsubmit = (event) => {
      event.preventDefault();
      const body = submit();
      if (!body) return;
      if (target) {
        // the round as this phone holds it now (another phone may have moved it on since the form opened)
        const round = table.data.rounds.find((r) => r.number === target.round.number) || target.round;
        const what = { round: round.number, index: target.index };
        write(`/rounds/${round.number}/events/${target.index}`, "PUT", { version: round.version, event: body }).then((done) => {
          if (!done) return;
          table.opened = what.round; // the corrected round stays open, the correction said
          render();
          status(`已改 Corrected: event ${what.index + 1} of round ${what.round}; the totals follow.`);
        });
      }
      else write(`/rounds/${current().number}/events`, "POST", { version: current().version, event: body });
    };
  }

  function kongForm(target = null) {
    openForm("kong", (form, was) => {
      const [who, player] = seatSelect("谁 Who", table.data.players);
      const kindLabel = el("label", "", "杠 Kind");
      const kind = el("select");
      for (const [key, text] of Object.entries(KINDS)) kind.append(Object.assign(el("option", "", text), { value: key }));
      kindLabel.append(kind);
      const tileLabel = el("label", "", "牌 Tile");
      const tile = Object.assign(el("input"), { placeholder: "5p", maxLength: 8, size: 4 });
      tileLabel.append(tile);
      const [fromLabel, from] = seatSelect("放杠 Discarded by", table.data.players);
      kind.addEventListener("change", () => (fromLabel.hidden = kind.value !== "direct"));
      if (was) {
        player.value = String(seatOf(was.player));
        kind.value = was.kind;
        tile.value = was.tile;
        if (was.discarder !== undefined) from.value = String(seatOf(was.discarder));
        fromLabel.hidden = kind.value !== "direct";
      }
      form.append(el("legend", "", "刮风下雨 A kong"), who, kindLabel, tileLabel, fromLabel);
      return () => {
        const event = { type: "kong", player: Number(player.value), kind: kind.value, tile: tile.value.trim() };
        if (kind.value === "direct") event.discarder = Number(from.value);
        return event;
      };
    }, target);
  }

  function winForm(target = null) {
    const won = target ? winnersSoFar(target.round, target.index) : winnersSoFar();
    openForm("win", (form, was) => {
      form.append(el("legend", "", "胡 A win (一炮多响: tick every winner)"));
      const photoHand = page().hand();
      const rows = [];
      table.data.players.forEach((player, seat) => {
        if (won.has(seat)) return;
        const row = el("fieldset", "winner");
        const pick = Object.assign(el("input"), { type: "checkbox", value: String(seat) });
        const pickLabel = el("label");
        pickLabel.append(pick, el("span", "", player));
        const source = el("select");
        // the fan first: the photo's hand is chosen by the player (a photo taken rounds ago is no winner's hand)
        source.append(Object.assign(el("option", "", "番数 fan"), { value: "fan" }));
        if (photoHand) source.append(Object.assign(el("option", "", `照片 the photo's hand ${photoHand.concealed}`), { value: "photo" }));
        source.append(Object.assign(el("option", "", "打字 typed hand"), { value: "typed" }));
        const value = Object.assign(el("input"), { maxLength: 120, size: 14, placeholder: "2 / 123345m66999p" });
        value.setAttribute("aria-label", `${player}'s fan or hand`);
        const had = was && (was.winners || [was]).find((winner) => seatOf(winner.player) === seat);
        if (had) {
          pick.checked = true;
          source.value = had.fan !== undefined ? "fan" : "typed";
          value.value = had.fan !== undefined ? String(had.fan) : typedText(had.hand);
        }
        const shown = () => (value.hidden = source.value === "photo"); // the photo's hand needs no box
        source.addEventListener("change", shown);
        shown();
        row.append(pickLabel, source, value);
        rows.push({ seat, pick, source, value });
        form.append(row);
      });
      const [fromLabel, from] = seatSelect("点炮 On the discard of", table.data.players);
      from.prepend(Object.assign(el("option", "", "— 选 choose —"), { value: "" }), Object.assign(el("option", "", "自摸 self-drawn"), { value: "self" }));
      from.value = ""; // said each time: never 自摸 by default
      if (was) from.value = was.self_drawn ? "self" : String(seatOf(was.discarder));
      form.append(fromLabel);
      const flags = el("fieldset");
      const boxes = {};
      for (const key of page().winFlags()) {
        const condition = page().conditions().find((c) => c.key === key);
        const label = el("label");
        boxes[key] = Object.assign(el("input"), { type: "checkbox", checked: Boolean(was && was[key]) });
        label.append(boxes[key], el("span", "", condition ? `${condition.name_zh} ${condition.name_en}` : key));
        flags.append(label);
      }
      form.append(flags);
      return () => {
        const chosen = rows.filter((row) => row.pick.checked);
        if (!chosen.length) {
          status("勾选赢家 Tick who won.", true);
          return null;
        }
        const missing = chosen.find((row) => unsaid(row.source.value, row.value.value));
        if (missing) {
          const player = name(missing.seat);
          status(missing.source.value === "fan" ? `填番数 Enter ${player}'s fan (0 for 平胡 a plain win).` : `填手牌 Type ${player}'s hand.`, true);
          return null;
        }
        if (from.value === "") {
          status("谁点炮? Say whose discard it was, or 自摸 self-drawn.", true);
          return null;
        }
        const winners = chosen.map((row) => {
          const entry = { player: row.seat };
          if (row.source.value === "photo") entry.hand = { concealed: photoHand.concealed, melds: photoHand.melds, win_tile: photoHand.win_tile };
          else if (row.source.value === "typed") entry.hand = row.value.value.trim();
          else entry.fan = Number(row.value.value);
          return entry;
        });
        const event = { type: "win" };
        if (from.value === "self") event.self_drawn = true;
        else event.discarder = Number(from.value);
        for (const key of page().winFlags()) if (boxes[key].checked) event[key] = true;
        if (winners.length === 1) Object.assign(event, winners[0]);
        else event.winners = winners;
        return event;
      };
    }, target);
  }

  function endForm(target = null) {
    const won = target ? winnersSoFar(target.round, target.index) : winnersSoFar();
    openForm("end", (form, was) => {
      form.append(el("legend", "", "流局 The wall ran out: each player still in"));
      const rows = [];
      table.data.players.forEach((player, seat) => {
        if (won.has(seat)) return;
        const row = el("fieldset", "still-in");
        const state = el("select");
        for (const [key, text] of [["ready", "听牌 ready (fan)"], ["not_ready", "没叫 not ready"], ["hua_zhu", "花猪 three suits"], ["hand", "打字 typed tiles"]]) {
          state.append(Object.assign(el("option", "", text), { value: key }));
        }
        state.setAttribute("aria-label", `${player} at the wall's end`);
        const value = Object.assign(el("input"), { maxLength: 120, size: 14, placeholder: "1 / 1123m456p..." });
        value.setAttribute("aria-label", `${player}'s fan or tiles`);
        const had = was && was.hands && (was.hands[player] !== undefined ? was.hands[player] : was.hands[String(seat)]);
        if (had !== undefined && had !== null) {
          if (typeof had === "string" || had.concealed !== undefined) [state.value, value.value] = ["hand", typedText(had)];
          else if (had.hua_zhu) state.value = "hua_zhu";
          else if (had.ready) [state.value, value.value] = ["ready", String(had.fan)];
          else state.value = "not_ready";
        }
        row.append(el("span", "", `${player} `), state, value);
        rows.push({ seat, state, value });
        form.append(row);
      });
      return () => {
        const missing = rows.find((row) => unsaid({ ready: "fan", hand: "typed" }[row.state.value], row.value.value));
        if (missing) {
          const player = name(missing.seat);
          status(missing.state.value === "ready" ? `填番数 Enter the fan ${player} was ready for.` : `填手牌 Type ${player}'s tiles.`, true);
          return null;
        }
        const hands = {};
        for (const row of rows) {
          if (row.state.value === "ready") hands[row.seat] = { ready: true, fan: Number(row.value.value) };
          else if (row.state.value === "not_ready") hands[row.seat] = { ready: false };
          else if (row.state.value === "hua_zhu") hands[row.seat] = { hua_zhu: true };
          else hands[row.seat] = row.value.value.trim(); // typed as the hand box takes it: the server joins its kongs
        }
        return { type: "end", reason: "wall_exhausted", hands };
      };
    }, target);
  }

  // a hand as it was entered, as the typed-hand box takes it: typed text as typed, a photo's hand written out
  function typedText(hand) {
    if (typeof hand === "string") return hand;
    const words = { pong: "碰", kong_exposed: "直杠", kong_added: "加杠", kong_concealed: "暗杠" };
    const melds = (hand.melds || []).map((meld) => `${words[meld.type] || meld.type}${meld.tile}`);
    return [hand.concealed, ...melds, ...(hand.win_tile ? [`胡${hand.win_tile}`] : [])].join(" ");
  }

  // The night as a file: asked for with the table's code in its header (never in a URL, where logs keep it),
  // saved from the answer
  async function exportNight(format) {
    try {
      const answer = await fetch(`/api/v1/tables/${table.id}/export?format=${format}`, { headers: headers() });
      if (!answer.ok) {
        const body = await answer.json().catch(() => ({ error: { code: "", message: answer.statusText } }));
        status(`出错 ${page().zh(body.error.code)}${body.error.message}`, true);
        return;
      }
      const link = el("a");
      link.href = URL.createObjectURL(await answer.blob());
      link.download = `table-${table.id}.${format}`;
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
    } catch (error) {
      status(`出错 ${error.message}`, true);
    }
  }

  function endThreeWon() {
    return write(`/rounds/${current().number}/events`, "POST", { version: current().version, event: { type: "end", reason: "three_won" } });
  }

  // whether a box that ``kind`` of entry needs is left unsaid: a fan must be a whole number (0: 平胡 a plain
  // win; an empty box is never read as 0), typed tiles must be there
  function unsaid(kind, text) {
    if (kind === "fan") return !/^\d{1,3}$/.test(text.trim());
    return kind === "typed" && !text.trim();
  }

  function start() {
    if (!window.smjPage) return;
    $("table-create").addEventListener("click", create);
    $("table-join").addEventListener("click", join);
    $("table-leave").addEventListener("click", () => {
      if (window.confirm(`离桌 Leave table ${table.code || ""} on this phone? It stays; join it again with its code.`)) leave();
    });
    $("round-new").addEventListener("click", () => {
      const dealer = $("round-banker").value;
      const body = dealer === "" ? {} : { dealer: Number(dealer) };
      const voids = {};
      for (const select of $("round-void-seats").querySelectorAll("select")) {
        if (select.value) voids[select.dataset.seat] = select.value;
      }
      if (Object.keys(voids).length) body.void_suits = voids;
      write("/rounds", "POST", body).then((started) => {
        if (started) for (const select of $("round-void-seats").querySelectorAll("select")) select.value = "";
      });
    });
    for (const format of ["csv", "json"]) {
      $(`table-export-${format}`).addEventListener("click", (event) => {
        event.preventDefault();
        exportNight(format);
      });
    }
    $("event-kong").addEventListener("click", () => kongForm());
    $("event-win").addEventListener("click", () => winForm());
    // the third win ends a round by itself; a round stored with three winners and no end yet is ended so
    $("event-end").addEventListener("click", () => (winnersSoFar().size >= 3 ? endThreeWon() : endForm()));
    $("event-undo").addEventListener("click", () => write(`/rounds/${current().number}/undo`, "POST", { version: current().version }));
    try {
      const saved = JSON.parse(localStorage.getItem("smj-table") || "null");
      if (saved && saved.id) {
        table.id = saved.id;
        table.code = saved.code;
        page().call(`/tables/${saved.id}`).then((data) => {
          table.data = data;
          render();
        }, leave);
      }
    } catch (error) {
      // no stored table
    }
    table.poll = setInterval(refresh, 4000);
    render();
  }

  window.addEventListener("smj-ready", start);
})();
