// The page: photo -> /api/v1/score-photo; corrections -> /api/v1/group then /api/v1/score.
// Plain script, no build step, no request leaves this origin.
"use strict";

(() => {
  const API = "/api/v1";
  const MELD_NAMES = { pong: "碰 pong", kong_exposed: "明杠 kong", kong_added: "加杠 kong", kong_concealed: "暗杠 kong" };
  const UNSURE = 0.5;
  // warnings about the photo itself, not its tiles: no correction answers them, so they stay on the page
  const PHOTO_WARNINGS = ["blurred_photo"];
  // each warning's code named in Chinese before its (English) message
  // errors named in Chinese by their code before their (English) message: the rules' and the service's
  const ERRORS_ZH = {
    wrong_tile_count: "张数不对",
    too_many_copies: "第五张",
    three_suits: "三门牌 (缺一门)",
    void_suit_present: "有定缺的牌",
    win_tile_not_in_hand: "胡的牌不在手牌",
    not_a_winning_shape: "不成胡",
    contradictory_context: "胡法矛盾",
    too_few_fan: "番数不够",
    upload_too_large: "照片太大",
    too_many_pixels: "照片像素太多",
    not_an_image: "不是图片",
    corrupt_image: "图片损坏",
    model_not_loaded: "识别未加载",
    request_timeout: "超时",
    invalid_request: "请求有误",
    token_required: "需要令牌",
    wrong_token: "令牌不对",
    too_many_guesses: "令牌错太多次, 稍等",
    saving_disabled: "不能保存",
    not_a_layout: "不是三行九张",
    no_such_set: "没有这副牌",
    set_exists: "已有同名",
    wrong_code: "桌号不对",
    stale_write: "别人先改了",
    already_won: "已胡的人不能再动",
    round_in_play: "这局还没完",
    round_over: "这局已完",
  };
  const zh = (code) => (ERRORS_ZH[code] ? `${ERRORS_ZH[code]}: ` : "");

  const WARNINGS_ZH = {
    duplicate_box: "重复的框",
    honour_tile: "字牌花牌",
    not_a_meld: "不成碰杠",
    stray_tiles: "散牌",
    win_tile_not_apart: "胡的牌没分开",
    fifth_copy: "第五张",
    tile_count: "张数不对",
    no_tiles: "没有牌",
    reread_tile: "改读",
    unsure_tile: "不确定的牌",
    left_out_tile: "去掉的牌",
    blurred_photo: "照片模糊",
    close_faces: "请核对",
    other_row: "换了一行",
  };

  const $ = (id) => document.getElementById(id);
  const state = {
    file: null,
    set: "", // the set on the table the photos are read with ("" none), kept in this browser
    taught: null, // the set just taught: {name, tiles}
    width: 0,
    height: 0,
    detections: [], // {tile, box: [x1, y1, x2, y2], confidence, alternatives: [{tile, confidence}], likely: [tile]}
    grouping: null,
    score: null,
    tiles: [], // from /api/v1/tiles
    conditions: [], // from /api/v1/conditions: the win conditions, a check box each
    presets: [],
    editing: null, // index being corrected
    adding: false,
    addedIndex: null, // a tile just added: cancelling the palette removes it
    winIndex: null, // the tile of the hand the player marked as the winning one (null: the grouper's choice)
    // what each tile of this photo the player named taught the set, by the tile's box: {set, example}; and
    // the last write about it still on its way (a tile named again waits for it, so "replaces" is right)
    corrected: new Map(),
    teaching: new Map(),
    flagged: new Set(),
    photoWarnings: [], // PHOTO_WARNINGS the photo was read with
    // the latest request wins, counted apart for the tiles (photo, corrections) and for the score (the
    // photo, any change of the hand, the win conditions or the rules): a change of rules never drops a
    // correction's grouping
    grouped: 0,
    scored: 0,
    typed: 0, // typed hands sent to be read: an answer to an earlier one is dropped
  };

  // ---- talking to the API

  async function call(path, options) {
    let response;
    try {
      response = await fetch(API + path, options);
    } catch (error) {
      throw new Error("the server cannot be reached");
    }
    let body = null;
    try {
      body = await response.json();
    } catch (error) {
      body = null;
    }
    if (!response.ok) {
      const problem = body && body.error ? body.error : { code: String(response.status), message: response.statusText };
      const error = new Error(problem.message);
      error.code = problem.code;
      error.status = response.status;
      error.details = problem.details || null;
      throw error;
    }
    return body;
  }

  // A detection as the API reads it: "likely" (the palette's first row) stays on the page.
  const sent = ({ tile, box, confidence, alternatives }) => ({ tile, box, confidence, alternatives });
  const readings = (alternatives) => (alternatives || []).filter((a) => a.confidence > 0).map((a) => ({ ...a }));
  const fromServer = (d) => ({
    tile: d.tile,
    box: d.box.slice(),
    confidence: d.confidence,
    alternatives: readings(d.alternatives),
    likely: readings(d.alternatives).map((a) => a.tile),
  });

  const postJson = (path, payload) =>
    call(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(payload) });

  function context() {
    const result = {};
    for (const { key } of state.conditions) result[key] = flagBox(key).checked;
    return result;
  }

  const flagBox = (key) => document.querySelector(`#flags input[name="${key}"]`);
  const preset = () => $("preset").value || "chengdu";

  function setStatus(text, isError = false) {
    const status = $("status");
    status.textContent = text;
    status.classList.toggle("error", isError);
  }

  // ---- tiles and names

  function tileInfo(name) {
    return state.tiles.find((tile) => tile.name === name) || { name, tile: null, name_zh: name };
  }

  function shortName(name) {
    if (name === "back") return "背";
    if (name === "honour") return "字";
    const info = tileInfo(name);
    return info.name_zh || name;
  }

  // ---- the photo

  // A phone photo is shrunk in the browser to what the reader decodes (the server reads a 12 MP JPEG at half
  // its size: 2016 px): 3 MB becomes a few hundred KB, turned upright by its EXIF tag on the way.
  const SEND_LONG_SIDE = 2048;

  async function shrunk(file) {
    try {
      const bitmap = await createImageBitmap(file, { imageOrientation: "from-image" });
      const scale = SEND_LONG_SIDE / Math.max(bitmap.width, bitmap.height);
      if (scale >= 1) {
        bitmap.close();
        return file;
      }
      const canvas = document.createElement("canvas");
      canvas.width = Math.round(bitmap.width * scale);
      canvas.height = Math.round(bitmap.height * scale);
      canvas.getContext("2d").drawImage(bitmap, 0, 0, canvas.width, canvas.height);
      bitmap.close();
      const blob = await new Promise((resolve) => canvas.toBlob(resolve, "image/jpeg", 0.92));
      return blob ? new File([blob], (file.name || "photo").replace(/\.\w+$/, "") + ".jpg", { type: "image/jpeg" }) : file;
    } catch (error) {
      return file; // a format the browser cannot draw: the server says what it is
    }
  }

  async function onPhoto(event) {
    const picked = event.target.files && event.target.files[0];
    event.target.value = "";
    if (!picked) return;
    const file = await shrunk(picked);
    state.file = file;
    state.zoomed = true; // a small hand in a large photo is shown zoomed to it
    // a new photo is a new hand: the last one's win conditions (自摸, 杠上花, ...) are not its
    for (const { key } of state.conditions) {
      flagBox(key).checked = false;
      delete flagBox(key).dataset.by;
    }
    const image = $("photo");
    if (image.src) URL.revokeObjectURL(image.src);
    image.src = URL.createObjectURL(file);
    $("stage").hidden = false;
    $("tools").hidden = true;
    state.detections = [];
    state.grouping = null;
    state.score = null;
    state.photoWarnings = [];
    render();
    setStatus("识别中… Reading the tiles…");
    const sequence = ++state.grouped;
    const scoring = ++state.scored;
    const form = new FormData();
    form.append("image", file, file.name || "photo.jpg");
    form.append("preset", preset());
    for (const [flag, on] of Object.entries(context())) form.append(flag, on ? "true" : "false");
    if (state.set) form.append("set", state.set);
    try {
      const result = await call("/score-photo", { method: "POST", body: form });
      if (sequence !== state.grouped) return;
      state.width = result.width;
      state.height = result.height;
      state.detections = result.detections.map(fromServer);
      state.winIndex = null;
      state.corrected = new Map();
      state.teaching = new Map();
      state.photoWarnings = result.warnings.filter((w) => PHOTO_WARNINGS.includes(w.code));
      state.grouping = groupingOf(result);
      state.score = result.score ? { ok: true, value: result.score, waits: result.waits } : null;
      $("tools").hidden = false;
      setStatus(
        state.detections.length
          ? `找到 ${state.detections.length} 张牌 Found ${state.detections.length} tiles. Tap a tile to correct it.`
          : "没有找到牌 No tile found: add the tiles by tapping where they are, or take a closer photo.",
      );
      render();
      $("photo-section").scrollIntoView({ block: "start" }); // the photo and its score's line; the boxes are measured where they land
      if (scoring !== state.scored) rescore(); // the win conditions or rules changed meanwhile
    } catch (error) {
      if (sequence !== state.grouped) return;
      const unreadable = error.status === 415 || error.status === 422 || error.status === 413;
      $("stage").hidden = unreadable;
      if (unreadable) {
        state.file = null; // nothing of it is read, scored nor saved
        state.width = state.height = 0;
        render(); // no score left on show from before
      }
      setStatus(`出错 ${zh(error.code)}${error.message}`, true);
    }
  }

  // The grouping as the page shows it: a tile of the hand the player marked as the winning one
  // (``state.winIndex``) is the hand's winning tile, whatever the grouper took.
  function groupingOf(result) {
    const grouping = {
      hand: result.hand,
      groups: result.groups,
      win_index: result.win_index,
      win_apart: result.win_apart,
      warnings: result.warnings,
    };
    const chosen = state.winIndex;
    if (chosen === null || !grouping.hand || !inHand(grouping, chosen) || !state.detections[chosen]) return grouping;
    const face = state.detections[chosen].tile; // "m3": the hand writes it "3m"
    grouping.hand = { ...grouping.hand, win_tile: `${face.slice(1)}${face[0]}` };
    grouping.win_index = chosen;
    grouping.win_apart = true;
    grouping.warnings = grouping.warnings.filter((w) => w.code !== "win_tile_not_apart");
    return grouping;
  }

  // whether detection ``index`` is one of the hand's concealed tiles in ``grouping``
  const inHand = (grouping, index) => (grouping.groups || []).some((g) => g.role === "hand" && g.indices.includes(index));

  // ---- corrections

  async function regroup() {
    const sequence = ++state.grouped;
    try {
      const grouping = await postJson("/group", {
        width: state.width,
        height: state.height,
        detections: state.detections.map(sent),
        preset: preset(), // judged as the photo was: under these rules and how it was won
        context: context(),
      });
      if (sequence !== state.grouped) return;
      // a tile re-read as one of its alternatives comes back renamed (its box and order unchanged); its
      // first reading becomes one the palette offers
      grouping.detections.forEach((d, i) => {
        const detection = state.detections[i];
        if (d.tile !== detection.tile) detection.likely = [...new Set([detection.tile, ...detection.likely])];
        Object.assign(detection, { tile: d.tile, confidence: d.confidence, alternatives: readings(d.alternatives) });
      });
      state.grouping = groupingOf({ ...grouping, warnings: [...grouping.warnings, ...state.photoWarnings] });
      render();
      await rescore();
    } catch (error) {
      if (sequence !== state.grouped) return;
      setStatus(`出错 ${zh(error.code)}${error.message}`, true);
    }
  }

  async function rescore() {
    const sequence = ++state.scored;
    const hand = state.grouping && state.grouping.hand;
    if (!hand) {
      state.score = null;
      renderScore();
      return;
    }
    try {
      const score = await postJson("/score", { hand, context: context(), preset: preset() });
      if (sequence !== state.scored) return;
      state.score = { ok: true, value: score };
    } catch (error) {
      if (sequence !== state.scored) return;
      const waits = error.code === "wrong_tile_count" ? await waitsOf(hand) : null;
      if (sequence !== state.scored) return;
      state.score = { ok: false, code: error.code, message: error.message, waits };
    }
    renderScore();
  }

  // A hand one tile short of a win (13 tiles + one per kong) is a waiting hand: what does it wait on (听牌)?
  async function waitsOf(hand) {
    try {
      return await postJson("/waits", { hand: { concealed: hand.concealed, melds: hand.melds }, context: context(), preset: preset() });
    } catch (error) {
      return null; // not one tile short either
    }
  }

  function openPalette(index) {
    state.editing = index;
    const detection = state.detections[index];
    $("palette-title").textContent = `改牌 Correct ${placeOf(index)}: ${shortName(detection.tile)}`;
    for (const button of $("palette-tiles").children) button.classList.toggle("current", button.dataset.tile === detection.tile);
    const likely = $("palette-likely");
    likely.replaceChildren();
    for (const name of detection.likely.filter((name) => name !== detection.tile)) {
      const tile = state.tiles.find((t) => t.name === name);
      if (tile) likely.append(tileButton(tile));
    }
    $("palette-likely-row").hidden = !likely.children.length;
    const grouping = state.grouping;
    $("palette").querySelector("[data-action=win]").hidden = !grouping || !inHand(grouping, index) || grouping.win_index === index;
    $("palette").hidden = false;
    render();
    const current = $("palette-tiles").querySelector(".current") || $("palette-tiles").firstElementChild;
    if (current) current.focus();
  }

  // Where a tile lies, in words: "the winning tile", "tile 3 of the hand", "a tile of meld 2", "tile 7".
  function placeOf(index) {
    const grouping = state.grouping;
    if (!grouping) return `tile ${index + 1}`;
    if (grouping.win_index === index) return "胡 the winning tile";
    let melds = 0;
    for (const group of grouping.groups) {
      if (group.role === "meld") melds += 1;
      const position = group.indices.indexOf(index);
      if (position < 0) continue;
      if (group.role === "hand") return `手牌第 ${position + 1} 张 tile ${position + 1} of the hand`;
      if (group.role === "meld") return `第 ${melds} 组 a tile of meld ${melds}`;
    }
    return `tile ${index + 1}`;
  }

  function closePalette() {
    $("palette").hidden = true;
    state.editing = null;
    state.addedIndex = null;
    render();
  }

  function correct(action, tile) {
    const index = state.editing;
    if (index === null) return;
    if (action === "cancel") {
      if (state.addedIndex === index) state.detections.splice(index, 1);
      const changed = state.addedIndex === index;
      closePalette();
      if (changed) regroup();
      return;
    }
    const before = state.detections[index];
    if (action === "win") {
      state.winIndex = index; // the player's word: this tile of the hand is the one they won on
      closePalette();
      regroup();
      return;
    }
    if (action === "delete" || action === "back") forgetCorrection(before);
    if (action === "delete") {
      state.detections.splice(index, 1);
      if (state.winIndex === index) state.winIndex = null;
      else if (state.winIndex !== null && state.winIndex > index) state.winIndex -= 1;
    } else {
      // the user's word: no alternatives, so the grouper never re-reads this tile
      const named = action === "back" ? "back" : tile;
      const was = state.detections[index].tile;
      state.detections[index] = { ...state.detections[index], tile: named, confidence: 1, alternatives: [] };
      if (action === "set" && named !== was && state.addedIndex !== index) teachCorrection(state.detections[index]);
    }
    closePalette();
    regroup();
  }

  function startAdding() {
    state.adding = !state.adding;
    $("add-tile").classList.toggle("active", state.adding);
    $("overlay").classList.toggle("adding", state.adding);
    $("tool-hint").textContent = state.adding ? "点漏掉的牌 Tap where the missed tile is." : "点牌改牌 Tap a tile to correct it.";
  }

  function typicalSize() {
    const sizes = state.detections.map((d) => [d.box[2] - d.box[0], d.box[3] - d.box[1]]);
    if (!sizes.length) return [state.width / 16, (state.width / 16) * 1.35];
    const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
    return [median(sizes.map((s) => s[0])), median(sizes.map((s) => s[1]))];
  }

  function addAt(event) {
    const rect = $("overlay").getBoundingClientRect();
    const x = ((event.clientX - rect.left) / rect.width) * state.width;
    const y = ((event.clientY - rect.top) / rect.height) * state.height;
    const [w, h] = typicalSize();
    const x1 = Math.min(Math.max(x - w / 2, 0), state.width - w);
    const y1 = Math.min(Math.max(y - h / 2, 0), state.height - h);
    const box = [x1, y1, x1 + w, y1 + h].map((v, i) => Math.max(0, Math.min(v, i % 2 ? state.height : state.width)));
    state.detections.push({ tile: "m1", box, confidence: 1, alternatives: [], likely: [] });
    startAdding();
    openPalette(state.detections.length - 1);
    state.addedIndex = state.detections.length - 1;
  }

  // ---- drawing

  const percent = (value, total) => `${((value / total) * 100).toFixed(3)}%`;

  function place(element, [x1, y1, x2, y2]) {
    element.style.left = percent(x1, state.width);
    element.style.top = percent(y1, state.height);
    element.style.width = percent(x2 - x1, state.width);
    element.style.height = percent(y2 - y1, state.height);
  }

  function roles() {
    const role = new Map();
    const grouping = state.grouping;
    if (!grouping) return role;
    for (const group of grouping.groups) for (const index of group.indices) role.set(index, group.role);
    return role;
  }

  function groupLabel(group) {
    if (group.role === "meld") {
      // a concealed kong shows backs on its ends: it is named by a tile that shows its face
      const faces = group.indices.map((i) => state.detections[i]).filter((d) => d && d.tile !== "back");
      return `${MELD_NAMES[group.kind] || group.kind} ${faces.length ? shortName(faces[0].tile) : ""}`;
    }
    if (group.role === "ignored") return "不计 ignored";
    const win = state.grouping.win_index;
    if (group.indices.length === 1 && group.indices[0] === win) return "胡 win";
    return "手牌 hand";
  }

  function render() {
    renderOverlay();
    renderStrip();
    renderScore();
    $("save-example").disabled = !($("consent").checked && state.file && state.grouping && state.grouping.hand);
  }

  // A hand small in a large photo is shown zoomed to its tiles (and its melds), large enough to tap; the
  // button shows the whole photo and back. Image and boxes move together (one transform), so a tap lands
  // where it is drawn.
  const ZOOM_WHEN = 0.55; // the hand's region spans less than this share of the photo's width
  const TAG_MIN_PX = 18; // a box drawn narrower than this shows no name (names would pile up)

  function handRegion() {
    const grouping = state.grouping;
    if (!grouping || !state.width) return null;
    const boxes = grouping.groups
      .filter((g) => g.role !== "ignored")
      .flatMap((g) => g.indices.map((i) => state.detections[i]))
      .filter(Boolean)
      .map((d) => d.box);
    if (boxes.length < 3) return null;
    const x1 = Math.min(...boxes.map((b) => b[0])), x2 = Math.max(...boxes.map((b) => b[2]));
    const y1 = Math.min(...boxes.map((b) => b[1])), y2 = Math.max(...boxes.map((b) => b[3]));
    const pad = 0.08 * Math.max(x2 - x1, y2 - y1);
    const region = [Math.max(0, x1 - pad), Math.max(0, y1 - pad), Math.min(state.width, x2 + pad), Math.min(state.height, y2 + pad)];
    return (region[2] - region[0]) / state.width < ZOOM_WHEN ? region : null;
  }

  function applyZoom() {
    const stage = $("stage");
    const region = state.zoomed ? handRegion() : null;
    $("zoom").hidden = !handRegion();
    $("zoom").textContent = state.zoomed ? "全图 Whole photo" : "放大 Zoom to the hand";
    const overlay = $("overlay");
    const moved = [$("photo"), overlay];
    if (!region) {
      stage.style.height = "";
      stage.style.overflow = "";
      overlay.style.height = "";
      overlay.style.bottom = "";
      overlay.style.setProperty("--zoom", "1");
      for (const node of moved) node.style.transform = "";
      return 1;
    }
    const shown = stage.clientWidth; // the photo's width on the page, unzoomed
    const perPixel = shown / state.width;
    // the boxes are placed in percent of the overlay: it keeps the whole photo's size, not the stage's
    overlay.style.bottom = "auto";
    overlay.style.height = `${(state.height * perPixel).toFixed(1)}px`;
    const scale = state.width / (region[2] - region[0]);
    overlay.style.setProperty("--zoom", String(scale)); // names and labels keep their size (app.css)
    stage.style.height = `${((region[3] - region[1]) * perPixel * scale).toFixed(1)}px`;
    stage.style.overflow = "hidden";
    const transform = `scale(${scale}) translate(${(-region[0] * perPixel).toFixed(1)}px, ${(-region[1] * perPixel).toFixed(1)}px)`;
    for (const node of moved) {
      node.style.transformOrigin = "0 0";
      node.style.transform = transform;
    }
    return scale;
  }

  function renderOverlay() {
    const overlay = $("overlay");
    overlay.replaceChildren();
    if (!state.width) return;
    const scale = applyZoom();
    const tagged = (box) => ((box[2] - box[0]) / state.width) * $("stage").clientWidth * scale >= TAG_MIN_PX;
    const role = roles();
    const grouping = state.grouping;
    if (grouping) {
      for (const group of grouping.groups) {
        const boxes = group.indices.map((i) => state.detections[i]).filter(Boolean).map((d) => d.box);
        if (!boxes.length) continue;
        const pad = Math.min(state.width, state.height) * 0.006;
        const outline = document.createElement("div");
        outline.className = `group-outline ${group.role}`;
        place(outline, [
          Math.max(0, Math.min(...boxes.map((b) => b[0])) - pad),
          Math.max(0, Math.min(...boxes.map((b) => b[1])) - pad),
          Math.min(state.width, Math.max(...boxes.map((b) => b[2])) + pad),
          Math.min(state.height, Math.max(...boxes.map((b) => b[3])) + pad),
        ]);
        if (group.role !== "ignored") {
          // an ignored group (discards, other players' tiles) is outlined, never labelled: labels would
          // cover the photo around the hand
          const label = document.createElement("span");
          label.textContent = groupLabel(group);
          outline.append(label);
        }
        overlay.append(outline);
      }
    }
    state.detections.forEach((detection, index) => {
      const box = document.createElement("button");
      box.type = "button";
      box.className = "tile-box";
      box.dataset.index = String(index);
      box.dataset.tile = detection.tile;
      const r = role.get(index);
      if (r === "meld" || r === "ignored") box.classList.add(r);
      if (grouping && grouping.win_index === index) box.classList.add("win");
      if (detection.confidence < UNSURE) box.classList.add("unsure");
      if (state.flagged.has(index)) box.classList.add("flagged");
      if (state.editing === index) box.classList.add("selected");
      box.setAttribute("aria-label", `tile ${index + 1}: ${detection.tile}, ${Math.round(detection.confidence * 100)}%`);
      place(box, detection.box);
      if (tagged(detection.box)) {
        const tag = document.createElement("span");
        tag.className = "tag";
        tag.textContent = shortName(detection.tile);
        box.append(tag);
      }
      box.addEventListener("click", (event) => {
        if (state.adding) return; // the overlay's click adds a tile
        event.stopPropagation();
        openPalette(index);
      });
      overlay.append(box);
    });
    declutter();
  }

  // Names and group labels are drawn at a fixed size, whatever the zoom: where tiles touch, or a tile lies at
  // the photo's edge, they would pile up or stand outside the photo. Each is laid where it fits, in order of
  // what a player reads first (the groups, the winning tile, the hand, the melds, the rest): below its tile (a
  // group's above or below the group), else above it (inside the group), else left out (the strip below names
  // every tile).
  const LABEL_RANK = { hand: 0, meld: 1, ignored: 2 };

  function declutter() {
    const stage = $("stage").getBoundingClientRect();
    if (!stage.height) return; // the photo is not laid out yet: its load lays the labels again
    const labels = [];
    for (const span of $("overlay").querySelectorAll(".group-outline > span")) {
      const role = [...span.parentElement.classList].find((name) => name in LABEL_RANK) || "hand";
      labels.push({ node: span, rank: LABEL_RANK[role] });
    }
    for (const tag of $("overlay").querySelectorAll(".tile-box > .tag")) {
      const box = tag.parentElement.classList;
      const rank = box.contains("win") ? 3 : box.contains("ignored") ? 6 : box.contains("meld") ? 5 : 4;
      labels.push({ node: tag, rank });
    }
    labels.sort((a, b) => a.rank - b.rank); // stable: within a rank, in the photo's reading order
    const inside = (r) =>
      r.top >= stage.top - 1 && r.bottom <= stage.bottom + 1 && r.left >= stage.left - 1 && r.right <= stage.right + 1;
    const meets = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
    const laid = [];
    const fits = (rect) => inside(rect) && !laid.some((other) => meets(rect, other));
    for (const { node } of labels) {
      node.hidden = false;
      node.classList.remove("flipped");
      let rect = node.getBoundingClientRect();
      if (!fits(rect)) {
        // a tile's name above it; a group's label below its outline, never across its tiles (the strip
        // under the photo names every group)
        node.classList.add("flipped");
        rect = node.getBoundingClientRect();
      }
      if (fits(rect)) laid.push(rect);
      else node.hidden = true;
    }
  }

  function renderStrip() {
    const strip = $("strip");
    strip.replaceChildren();
    const grouping = state.grouping;
    if (!grouping) return;
    for (const group of grouping.groups) {
      if (group.role === "ignored") continue;
      const wrapper = document.createElement("div");
      wrapper.className = "strip-group";
      const label = document.createElement("small");
      label.textContent = groupLabel(group);
      const tiles = document.createElement("div");
      tiles.className = "strip-tiles";
      for (const index of group.indices) {
        const detection = state.detections[index];
        if (!detection) continue;
        const chip = document.createElement("button");
        chip.type = "button";
        chip.className = "chip";
        chip.dataset.index = String(index);
        if (group.role === "meld") chip.classList.add("meld");
        if (grouping.win_index === index) chip.classList.add("win");
        if (detection.tile === "back") chip.classList.add("back");
        if (state.flagged.has(index)) chip.classList.add("flagged");
        chip.textContent = shortName(detection.tile);
        chip.setAttribute("aria-label", `correct tile ${index + 1}: ${detection.tile}`);
        chip.addEventListener("click", () => openPalette(index));
        tiles.append(chip);
      }
      wrapper.append(label, tiles);
      strip.append(wrapper);
    }
  }

  // ``waiting``: the hand is one tile short of a win (听牌), so no tile of it is the winning one
  function handText(hand, waiting) {
    const parts = [`手牌 ${hand.concealed || "—"}`];
    for (const meld of hand.melds) parts.push(`${MELD_NAMES[meld.type] || meld.type} ${meld.tile}`);
    if (hand.win_tile && !waiting) parts.push(`胡 win ${hand.win_tile}`);
    return parts.join(" · ");
  }

  function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function renderScore() {
    const grouping = state.grouping;
    const hand = grouping && grouping.hand;
    const waiting = Boolean(state.score && !state.score.ok && state.score.waits);
    $("hand-text").textContent = hand ? handText(hand, waiting) : state.width ? "没有找到四川麻将牌 No Sichuan tile found." : "No hand yet.";
    const target = $("score");
    target.replaceChildren();
    const rules = state.presets.find((p) => p.name === preset());
    const unit = rules && rules.numbering === "points" ? "分" : "番";
    const unitEn = rules && rules.numbering === "points" ? "points" : "fan";
    if (state.score && !state.score.ok) {
      // a hand one tile short that waits on something is a waiting hand (听牌), not an error
      const waiting = state.score.waits && state.score.waits.ready;
      const why = `${zh(state.score.code)}${state.score.message}`;
      const heading = waiting ? `听牌 不能计分 A waiting hand, not a win yet: ${why}` : `不能计分 Cannot score: ${why}`;
      target.append(element("p", waiting ? "waiting" : "not-win", heading));
      if (state.score.waits) target.append(renderWaits(state.score.waits, unit));
    } else if (state.score && !state.score.value.valid) {
      const error = state.score.value.error;
      target.append(element("p", "not-win", `不是胡牌 Not a win: ${zh(error.code)}${error.message}`));
      if (state.score.waits) target.append(renderWaits(state.score.waits, unit));
    } else if (state.score) {
      const s = state.score.value;
      const total = element("div", "total");
      const fan = element("strong", "", `${s.total_fan} ${unit}`);
      fan.dataset.testid = "total-fan";
      total.append(fan, element("span", "multiplier", `×${s.multiplier}`), element("small", "", `${s.total_fan} ${unitEn}, multiplier ×${s.multiplier}`));
      target.append(total);
      const table = element("table", "fans");
      for (const item of s.fans) {
        const row = document.createElement("tr");
        const count = item.count > 1 ? ` ×${item.count}` : "";
        row.append(element("td", "", item.name_zh + count), element("td", "", item.name_en), element("td", "fan", `${item.fan >= 0 ? "+" : ""}${item.fan}`));
        table.append(row);
      }
      target.append(table);
      const summary = element("dl", "summary");
      const add = (term, value) => summary.append(element("dt", "", term), element("dd", "", value));
      if (s.combination) add("组合 Combination", `${s.combination.name_zh} ${s.combination.name_en}`);
      add(`原${unit} Raw`, String(s.raw_fan));
      const cap = rules ? (rules.cap === null ? "no cap" : `cap ${rules.cap}`) : "";
      add(`封顶 Capped`, `${s.total_fan} (${cap})`);
      add("倍数 Multiplier", `×${s.multiplier}`);
      const payers = { discarder: "点炮 the discarder pays", robbed_konger: "抢杠 the konger robbed pays", each_player_still_in: "自摸 each player still in pays" };
      const payment = element("dd", "", `${payers[s.payers]} ${s.payment} 底 base`);
      payment.dataset.testid = "payment";
      summary.append(element("dt", "", "支付 Payment"), payment);
      add("拆牌 Sets", s.decomposition.join(" "));
      add("规则 Rules", s.preset);
      target.append(summary);
    }
    for (const note of unscoredConditions(rules)) target.append(element("p", "note", note));
    renderSummary(unit, unitEn);
    renderWarnings();
  }

  // The score in one line under the photo (and the typed hand): the fan, the multiplier and who pays what,
  // on the first screen with the photo; the whole breakdown is below (番数 Score).
  function renderSummary(unit, unitEn) {
    const summary = $("summary");
    const score = state.score;
    summary.hidden = !score;
    summary.classList.toggle("not-win", Boolean(score && (!score.ok || !score.value.valid)));
    if (!score) return summary.replaceChildren();
    if (!score.ok || !score.value.valid) {
      const error = score.ok ? score.value.error : score;
      const waiting = score.waits && score.waits.ready;
      summary.textContent = waiting ? `听牌 A waiting hand: ${score.waits.waits.map((w) => w.tile).join(" ")}` : `不能计分 Not a win: ${zh(error.code)}${error.message}`;
      return;
    }
    const s = score.value;
    const payers = { discarder: "点炮 the discarder pays", robbed_konger: "抢杠 the konger robbed pays", each_player_still_in: "自摸 each player still in pays" };
    summary.textContent = `${s.total_fan} ${unit} (${unitEn}) ×${s.multiplier} · ${payers[s.payers]} ${s.payment} 底 base`;
  }

  // A ticked condition that is a fan of its own but scores nothing under these rules (海底 under chengdu).
  function unscoredConditions(rules) {
    if (!rules || !state.grouping || !state.grouping.hand) return [];
    const fanKeys = new Set(state.presets.flatMap((p) => p.fans.map((f) => f.key)));
    const notes = [];
    for (const condition of state.conditions) {
      const box = flagBox(condition.key);
      if (!box || !box.checked || !fanKeys.has(condition.key) || rules.limit_fans.includes(condition.key)) continue;
      const fan = rules.fans.find((f) => f.key === condition.key);
      if (!fan || !fan.fan) notes.push(`注 ${condition.name_zh} ${condition.name_en} scores nothing under ${rules.name}.`);
    }
    return notes;
  }

  function renderWaits(result, unit) {
    const section = element("div", "waits");
    section.dataset.testid = "waits";
    if (!result.ready) {
      section.append(element("p", "", "没有叫 Not ready: one tile short, but no tile completes this hand"));
      return section;
    }
    section.append(element("p", "", `听牌 One tile short, waiting on ${result.waits.length}:`));
    const list = element("ul", "");
    for (const wait of result.waits) {
      const s = wait.score;
      const fans = s.fans.map((item) => item.name_zh).join(" ");
      list.append(element("li", "", `${wait.tile_zh} ${s.total_fan} ${unit} ×${s.multiplier} ${fans}`));
    }
    section.append(list);
    return section;
  }

  function renderWarnings() {
    const list = $("warnings");
    list.replaceChildren();
    state.flagged = new Set();
    const warnings = (state.grouping && state.grouping.warnings) || [];
    for (const warning of warnings) {
      for (const index of warning.indices) state.flagged.add(index);
      const item = document.createElement("li");
      item.dataset.code = warning.code;
      const text = WARNINGS_ZH[warning.code] ? `${WARNINGS_ZH[warning.code]}: ${warning.message}` : warning.message;
      if (warning.indices.length) {
        const button = element("button", "", text);
        button.type = "button";
        button.addEventListener("click", () => openPalette(warning.indices[0]));
        item.append(button);
      } else {
        item.textContent = text;
      }
      list.append(item);
    }
    for (const node of document.querySelectorAll(".tile-box, .chip")) {
      node.classList.toggle("flagged", state.flagged.has(Number(node.dataset.index)));
    }
  }

  // ---- a hand typed: "123345m66999p kong 2p win 6p", "12345m11p 碰3m 暗杠9m"
  // The server reads it (POST /typed, scoring/typed.py: the one reader of typed hands, the table's too) and
  // answers the hand as JSON, or a typed_hand error naming the word in Chinese and English.

  async function scoreTyped(event) {
    event.preventDefault();
    const text = $("typed-hand").value.trim();
    if (!text) return;
    const sequence = ++state.typed;
    let hand;
    try {
      hand = await postJson("/typed", { text });
      if (sequence !== state.typed) return; // a later typed hand is on its way
    } catch (error) {
      if (sequence !== state.typed) return;
      if (!state.detections.length) {
        // an earlier typed hand's score is not left on show beside this one's error (a photo's reading
        // and its corrections stay: the typo is in the text box only)
        state.grouping = null;
        state.score = null;
        state.grouped += 1; // what is still on its way for the earlier hand is dropped
        state.scored += 1;
        render();
      }
      setStatus(`出错 ${zh(error.code)}${error.message}`, true);
      return;
    }
    await useHand(hand, "打字的手牌 The typed hand:");
    $("summary").scrollIntoView({ block: "nearest" });
  }

  // A hand given whole (typed, or locked by the live camera) is the hand now: the last photo and its tools go
  // (and it is not saved as this hand's); it is scored under the page's rules and win conditions.
  async function useHand(hand, text) {
    state.grouping = { hand, groups: [], win_index: null, win_apart: false, warnings: [] };
    state.detections = [];
    state.winIndex = null;
    state.photoWarnings = [];
    state.file = null;
    state.width = state.height = 0;
    state.grouped += 1; // what is still on its way for an earlier hand is dropped
    $("stage").hidden = true;
    $("tools").hidden = true;
    setStatus(text);
    render();
    await rescore();
  }

  // ---- the set on the table

  const token = () => $("set-token").value.trim() || $("example-token").value.trim();

  // the token typed in either box fills both, and lasts this tab's session (a reload keeps it)
  function keepToken() {
    const boxes = [$("set-token"), $("example-token")];
    try {
      const kept = sessionStorage.getItem("smj-token") || "";
      for (const box of boxes) if (!box.value) box.value = kept;
    } catch (error) {
      // storage refused: the token lasts this page only
    }
    for (const box of boxes) {
      box.addEventListener("input", () => {
        for (const other of boxes) if (other !== box) other.value = box.value;
        try {
          sessionStorage.setItem("smj-token", box.value);
        } catch (error) {
          // as above
        }
      });
    }
  }

  async function loadSets(chosen) {
    const select = $("set-choice");
    try {
      const { sets } = await call("/sets");
      select.replaceChildren(element("option", "", "— 不用 no set —"));
      select.firstElementChild.value = "";
      for (const set of sets) {
        const option = element("option", "", `${set.name} (${set.examples})`);
        option.value = set.name;
        select.append(option);
      }
      const keep = sets.some((set) => set.name === chosen) ? chosen : "";
      select.value = keep;
      chooseSet(keep);
    } catch (error) {
      $("set-status").textContent = `出错 ${zh(error.code)}${error.message}`;
    }
  }

  function chooseSet(name) {
    state.set = name;
    try {
      if (name) localStorage.setItem("smj-set", name);
      else localStorage.removeItem("smj-set");
    } catch (error) {
      // private browsing: the choice lasts this page only
    }
  }

  async function teachSet(event) {
    const picked = event.target.files && event.target.files[0];
    event.target.value = "";
    const name = $("set-name").value.trim();
    if (!picked) return;
    const file = await shrunk(picked);
    if (!name) {
      $("set-status").textContent = "先起个名字 Give the set a name first.";
      return;
    }
    const send = (replace) => {
      const form = new FormData();
      form.append("image", file, file.name || "layout.jpg");
      form.append("name", name);
      form.append("replace", replace ? "true" : "false");
      if (token()) form.append("token", token());
      return call("/sets", { method: "POST", body: form });
    };
    $("set-status").textContent = "识别中… Reading the rows…";
    $("set-grid").replaceChildren();
    $("set-grid-note").hidden = true;
    $("set-use").hidden = true;
    const ask = () => window.confirm(`已有 A set named ${name} is stored, with the tiles it was taught since. Replace it with this photo?`);
    const listed = [...$("set-choice").options].some((option) => option.value === name);
    if (listed && !ask()) {
      $("set-status").textContent = `已有同名 A set named ${name} exists: kept as it is. Choose another name to keep both.`;
      return;
    }
    try {
      let taught;
      try {
        taught = await send(listed);
      } catch (error) {
        // another phone stored the name meanwhile
        if (error.code !== "set_exists" || !ask()) throw error;
        taught = await send(true);
      }
      if (listed) state.corrected = new Map(); // the set's old examples are gone, what tiles taught with them
      state.taught = taught;
      const misread = taught.taught.filter((t) => t.face !== t.classifier_alone).length;
      const turned = taught.turned ? " (taken from across the table)" : "";
      $("set-status").textContent = `已存 Stored ${taught.tiles.length} tiles${turned}; ${misread} read differently without the set. Check each name below.`;
      renderSetGrid();
      $("set-grid-note").hidden = false;
      $("set-use").hidden = false;
      loadSets(state.set); // the list shows the set as it is now
    } catch (error) {
      tokenRefused(error);
      $("set-status").textContent = `出错 ${zh(error.code)}${error.message}`;
    }
  }

  function renderSetGrid() {
    const grid = $("set-grid");
    grid.replaceChildren();
    const taught = state.taught;
    if (!taught) return;
    const alone = new Map(taught.taught.map((t, i) => [i, t.classifier_alone]));
    taught.tiles.forEach((tile, i) => {
      const figure = element("figure");
      if (alone.get(i) && alone.get(i) !== tile.face) figure.classList.add("misread");
      const image = element("img");
      image.src = tile.crop;
      image.alt = `example ${tile.id}: ${tile.face}`;
      const select = element("select");
      select.setAttribute("aria-label", `example ${i + 1}`);
      for (const info of [...state.tiles.filter((t) => t.tile), { name: "back", name_zh: "背" }]) {
        const option = element("option", "", info.tile || info.name_zh);
        option.value = info.name;
        select.append(option);
      }
      select.value = tile.face;
      select.addEventListener("change", () => renameExample(tile, select.value));
      figure.append(image, select);
      grid.append(figure);
    });
  }

  async function renameExample(tile, face) {
    const before = (state.taught.tiles.find((t) => t.id === tile.id) || tile).face;
    try {
      const headers = { "Content-Type": "application/json" };
      if (token()) headers["X-SMJ-Token"] = token();
      const url = `/sets/${encodeURIComponent(state.taught.name)}/examples/${tile.id}`;
      const detail = await call(url, { method: "PATCH", headers, body: JSON.stringify({ face }) });
      state.taught = { ...state.taught, tiles: detail.tiles };
      $("set-status").textContent = `已改 ${before} → ${face}`;
    } catch (error) {
      tokenRefused(error);
      $("set-status").textContent = `出错 ${zh(error.code)}${error.message}`;
    }
  }

  // A tile the player named, with a set chosen: its face joins the set's examples, so the next photo reads it.
  // The same tile named again takes back what its last naming taught (``replaces``): only the last name stays.
  const tileKey = (detection) => detection.box.map((v) => Math.round(v)).join(",");

  // ``work`` after the last write about the same tile, whatever became of it
  function afterTeaching(key, work) {
    const next = (state.teaching.get(key) || Promise.resolve()).then(work, work);
    state.teaching.set(key, next);
    return next;
  }

  function teachCorrection(detection) {
    if (!state.set || !state.file || detection.tile === "back") return;
    const { file, set } = state;
    const key = tileKey(detection);
    const face = detection.tile;
    afterTeaching(key, async () => {
      const earlier = state.corrected.get(key);
      const correction = { box: detection.box, face };
      if (earlier && earlier.set === set) correction.replaces = earlier.example;
      const form = new FormData();
      form.append("image", file, file.name || "photo.jpg");
      form.append("correction", JSON.stringify(correction));
      if (token()) form.append("token", token());
      try {
        const stored = await call(`/sets/${encodeURIComponent(set)}/examples`, { method: "POST", body: form });
        state.corrected.set(key, { set, example: stored.example });
        setStatus(`已记住 The set ${set} now knows this ${shortName(face)}.`);
      } catch (error) {
        tokenRefused(error);
        setStatus(`没记住 Not taught to the set: ${zh(error.code)}${error.message}`, true);
      }
    });
  }

  // A tile the player corrected, then deleted or called a back: what it taught the set leaves it.
  function forgetCorrection(detection) {
    const key = tileKey(detection);
    afterTeaching(key, async () => {
      const taught = state.corrected.get(key);
      if (!taught) return;
      state.corrected.delete(key);
      const headers = token() ? { "X-SMJ-Token": token() } : {};
      const url = `/sets/${encodeURIComponent(taught.set)}/examples/${taught.example}?origin=correction`;
      try {
        await call(url, { method: "DELETE", headers });
      } catch (error) {
        if (error.code === "no_such_example") return; // gone already (the set taught again, or trimmed)
        tokenRefused(error);
        setStatus(`没删掉 The set ${taught.set} still holds that tile: ${zh(error.code)}${error.message}`, true);
      }
    });
  }

  // a token the server refused is not kept: each later write would count as another wrong guess
  function tokenRefused(error) {
    if (error.code !== "wrong_token") return;
    for (const box of [$("set-token"), $("example-token")]) box.value = "";
    try {
      sessionStorage.removeItem("smj-token");
    } catch (ignored) {
      // storage refused
    }
  }

  // ---- saving a labelled example

  async function saveExample() {
    const hand = state.grouping && state.grouping.hand;
    if (!$("consent").checked || !state.file || !hand) return;
    const form = new FormData();
    form.append("image", state.file, state.file.name || "photo.jpg");
    form.append("detections", JSON.stringify(state.detections.map(sent)));
    form.append("hand", JSON.stringify(hand));
    form.append("consent", "true");
    const token = $("example-token").value.trim();
    if (token) form.append("token", token); // SMJ_EXAMPLES_TOKEN, where the server sets one
    $("save-status").textContent = "保存中… Saving…";
    try {
      const saved = await call("/examples", { method: "POST", body: form });
      $("save-status").textContent = `已保存 Saved ${saved.image} with ${saved.boxes} boxes. Thank you!`;
    } catch (error) {
      $("save-status").textContent = `出错 ${zh(error.code)}${error.message}`;
    }
  }

  // ---- setup

  function tileButton(tile) {
    const button = document.createElement("button");
    button.type = "button";
    button.dataset.tile = tile.name;
    const rank = tile.tile[0];
    const suit = tile.name_zh.slice(1);
    button.append(document.createTextNode(rank), element("small", "", suit));
    button.setAttribute("aria-label", `${tile.tile} ${tile.name_zh}`);
    button.addEventListener("click", () => correct("set", tile.name));
    return button;
  }

  function buildPalette() {
    $("palette-tiles").replaceChildren(...state.tiles.filter((t) => t.tile).map(tileButton));
  }

  // A check box per win condition, as the server's table gives them.
  function buildFlags() {
    const flags = $("flags");
    flags.replaceChildren();
    for (const condition of state.conditions) {
      const input = element("input");
      input.type = "checkbox";
      input.name = condition.key;
      const text = element("span", "", `${condition.name_zh} `);
      text.append(element("small", "", condition.name_en));
      const label = element("label");
      label.title = condition.help;
      label.append(input, text);
      input.addEventListener("change", onFlag);
      flags.append(label);
    }
  }

  // Ticking a condition ticks what it brings (what it implies or requires: 天胡 is self-drawn, by the
  // 庄家) and clears what it cannot go with, so the context sent is one the rules accept.
  // Unticking it unticks what it brought and was not ticked otherwise (天胡 off: 庄家 and 自摸 off with it).
  function onFlag(event) {
    const box = event.target;
    const condition = state.conditions.find((c) => c.key === box.name);
    delete box.dataset.by; // ticked or unticked by the player now
    if (box.checked) {
      for (const other of condition.clears) flagBox(other).checked = false;
      for (const other of condition.brings) {
        const brought = flagBox(other);
        if (!brought.checked) Object.assign(brought, { checked: true }).dataset.by = box.name;
      }
    } else {
      for (const other of condition.brings) {
        const brought = flagBox(other);
        if (brought.dataset.by === box.name) {
          brought.checked = false;
          delete brought.dataset.by;
        }
      }
    }
    rescore();
  }

  function onPreset() {
    const rules = state.presets.find((p) => p.name === preset());
    $("preset-description").textContent = rules ? rules.description : "";
    rescore();
  }

  async function start() {
    $("camera").addEventListener("change", onPhoto);
    $("file").addEventListener("change", onPhoto);
    $("add-tile").addEventListener("click", startAdding);
    $("zoom").addEventListener("click", () => {
      state.zoomed = !state.zoomed;
      renderOverlay();
    });
    window.addEventListener("resize", () => renderOverlay());
    $("photo").addEventListener("load", declutter);
    $("overlay").addEventListener("click", (event) => {
      if (state.adding) addAt(event);
    });
    $("preset").addEventListener("change", onPreset);
    $("typed").addEventListener("submit", scoreTyped);
    $("set-choice").addEventListener("change", (event) => chooseSet(event.target.value));
    $("set-photo").addEventListener("change", teachSet);
    keepToken();
    $("set-use").addEventListener("click", async () => {
      await loadSets(state.taught.name);
      $("teach").open = false;
    });
    $("consent").addEventListener("change", render);
    $("save-example").addEventListener("click", saveExample);
    for (const button of document.querySelectorAll(".sheet-actions button")) {
      button.addEventListener("click", () => correct(button.dataset.action));
    }
    $("palette").addEventListener("click", (event) => {
      if (event.target === $("palette")) correct("cancel");
    });
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && !$("palette").hidden) correct("cancel");
    });
    try {
      const [tiles, presets, conditions] = await Promise.all([call("/tiles"), call("/presets"), call("/conditions")]);
      state.tiles = tiles.tiles;
      state.conditions = conditions.conditions;
      state.winFlags = conditions.win_event_flags; // what a round's win event carries (the table)
      buildFlags();
      state.presets = presets.presets;
      const select = $("preset");
      for (const rules of state.presets) {
        // shown by its name (the description's head, 成都 ...), sent by its key
        const title = rules.description.split(":")[0];
        const option = element("option", "", title.length <= 24 ? `${title} · ${rules.name}` : rules.name);
        option.value = rules.name;
        option.title = rules.description;
        select.append(option);
      }
      select.value = presets.default;
      $("preset-description").textContent = (state.presets.find((p) => p.name === presets.default) || {}).description || "";
      buildPalette();
      let remembered = "";
      try {
        remembered = localStorage.getItem("smj-set") || "";
      } catch (error) {
        remembered = "";
      }
      await loadSets(remembered);
      // what the table (table.js) reads of this page
      window.smjPage = {
        call,
        element,
        context,
        preset,
        conditions: () => state.conditions,
        winFlags: () => state.winFlags,
        zh,
        hand: () => (state.grouping && state.grouping.hand) || null,
        set: () => state.set,
        tileLabel: shortName,
        useHand,
        setStatus,
      };
      window.dispatchEvent(new Event("smj-ready"));
      document.body.dataset.ready = "true";
    } catch (error) {
      setStatus(`出错 ${zh(error.code)}${error.message}`, true);
    }
  }

  start();
})();
