// Live: the phone's camera read frame by frame (/api/v1/live). One frame is in flight at a time (the next is
// taken when the last is answered, so frames go at the rate the server keeps up with, never queued), scaled
// here to the size the server asks for; the tiles are named over the live view, the server's advice shown,
// and the hand, once the reading holds, locked and scored on the page (and on #live-result as data-hand).
// Where the camera can't be opened the photo buttons stay the way in. /?live=1 starts it at once.
// Plain script, no build step.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const page = () => window.smjPage; // app.js: call, context, preset, set, tileLabel, useHand, zh
  const ADVICE_ZH = {
    no_hand: "看不到牌",
    hold_still: "拿稳别动",
    come_closer: "靠近一点",
    cut_at_edge: "牌出了画面",
    too_dark: "太暗了",
  };
  const WHY_ZH = {
    no_hand: "看不到手牌",
    changing: "还在认牌",
    win_tile_not_apart: "胡的牌放右边分开",
    unsure_tile: "有牌没认准",
    not_a_win: "不是胡牌",
  };
  const QUALITY = 0.85; // JPEG quality of a frame sent
  const RETRY_MS = 150; // after a frame the server dropped
  const live = { running: false, stream: null, session: null, side: 640, maxSide: 1280, locked: "", canvas: null };

  const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

  function say(text, isError = false) {
    const node = $("live-status");
    node.textContent = text;
    node.classList.toggle("error", isError);
  }

  // the camera can't be opened: the photo buttons are the way in
  function fallback(why) {
    stop();
    $("live-result").dataset.state = "fallback";
    page().setStatus(`相机打不开，请拍照 The camera can't be opened (${why}): take a photo instead.`, true);
  }

  async function start() {
    if (live.running) return;
    if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
      fallback("this browser opens a camera only over https or on this machine");
      return;
    }
    try {
      live.stream = await navigator.mediaDevices.getUserMedia({
        audio: false,
        video: { facingMode: { ideal: "environment" }, width: { ideal: 1280 }, height: { ideal: 720 } },
      });
    } catch (error) {
      fallback(error.name === "NotAllowedError" ? "the camera was refused" : error.name || "no camera");
      return;
    }
    const video = $("live-video");
    video.srcObject = live.stream;
    $("live").hidden = false;
    $("live-start").hidden = true;
    $("live-result").dataset.state = "reading";
    delete $("live-result").dataset.hand;
    $("live-result").textContent = "";
    say("对准手牌 Point the camera at the hand…");
    try {
      await video.play();
      const opened = await page().call("/live", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ context: page().context(), preset: page().preset(), set: page().set() || null }),
      });
      live.session = opened.session;
      live.maxSide = opened.max_side;
    } catch (error) {
      const why = error.code ? `${page().zh(error.code)}${error.message}` : error.message || String(error);
      fallback(why);
      return;
    }
    live.running = true;
    live.locked = "";
    loop();
  }

  function stop() {
    live.running = false;
    if (live.stream) for (const track of live.stream.getTracks()) track.stop();
    live.stream = null;
    if (live.session) {
      const session = live.session;
      live.session = null;
      page()
        .call(`/live/${session}`, { method: "DELETE" })
        .catch(() => null); // it ends alone when idle
    }
    $("live-video").srcObject = null;
    $("live").hidden = true;
    $("live-start").hidden = false;
  }

  // the video's frame scaled so its long side is what the server asked for (never enlarged), as a JPEG
  function grab() {
    const video = $("live-video");
    const width = video.videoWidth;
    const height = video.videoHeight;
    if (!width || !height) return Promise.resolve(null);
    const scale = Math.min(1, Math.min(live.side, live.maxSide) / Math.max(width, height));
    const canvas = live.canvas || (live.canvas = document.createElement("canvas"));
    canvas.width = Math.round(width * scale);
    canvas.height = Math.round(height * scale);
    canvas.getContext("2d").drawImage(video, 0, 0, canvas.width, canvas.height);
    return new Promise((done) => canvas.toBlob(done, "image/jpeg", QUALITY));
  }

  async function loop() {
    while (live.running) {
      const blob = await grab();
      if (!blob) {
        await sleep(100);
        continue;
      }
      const form = new FormData();
      form.append("image", blob, "frame.jpg");
      let answer;
      try {
        answer = await page().call(`/live/${live.session}/frames`, { method: "POST", body: form });
      } catch (error) {
        if (!live.running) return;
        if (error.code === "no_live_session") {
          live.session = null;
          fallback("the live session ended");
          return;
        }
        if (error.code !== "frame_dropped") say(`出错 ${page().zh(error.code)}${error.message}`, true);
        await sleep(error.code === "frame_dropped" ? RETRY_MS : 1000);
        continue;
      }
      if (!live.running) return;
      show(answer);
    }
  }

  function show(answer) {
    live.side = Math.min(answer.next_side, live.maxSide);
    draw(answer);
    const advice = answer.guidance[0];
    const steady = answer.steady;
    const result = $("live-result");
    if (answer.locked) {
      const text = JSON.stringify(answer.hand);
      say("锁定 Locked: the hand held still; move to another hand to read again");
      if (text !== live.locked) {
        live.locked = text;
        result.dataset.hand = text;
        result.dataset.state = "locked";
        result.textContent = `${handLine(answer.hand)} · ${answer.score.total_fan} 番 fan`;
        page().useHand(answer.hand, "实时锁定的手牌 The hand the camera locked:");
      }
      return;
    }
    if (live.locked) {
      live.locked = "";
      delete result.dataset.hand;
      result.dataset.state = "reading";
      result.textContent = "";
    }
    const why = answer.why;
    const held = `${Math.min(steady.held, steady.hold)}/${steady.hold}`;
    if (advice) say(`${ADVICE_ZH[advice.code] || ""} ${advice.message} · ${held}`, advice.code !== "come_closer");
    else if (why) say(`${WHY_ZH[why.code] || ""} ${why.message} · ${held}`);
  }

  function handLine(hand) {
    const melds = hand.melds.map((m) => ` ${m.type === "pong" ? "碰" : "杠"} ${m.tile}`).join("");
    return `${hand.concealed}${melds}${hand.win_tile ? ` 胡 ${hand.win_tile}` : ""}`;
  }

  // the frame's tiles over the live view, each named
  function draw(answer) {
    const video = $("live-video");
    const canvas = $("live-overlay");
    const shown = video.getBoundingClientRect();
    canvas.width = Math.round(shown.width);
    canvas.height = Math.round(shown.height);
    const context = canvas.getContext("2d");
    context.clearRect(0, 0, canvas.width, canvas.height);
    // the video is letterboxed into its box (object-fit: contain)
    const scale = Math.min(shown.width / answer.width, shown.height / answer.height);
    const left = (shown.width - answer.width * scale) / 2;
    const top = (shown.height - answer.height * scale) / 2;
    context.lineWidth = 2;
    context.font = "bold 14px sans-serif";
    context.textBaseline = "bottom";
    for (const detection of answer.detections) {
      const [x1, y1, x2, y2] = detection.box.map((v) => v * scale);
      context.strokeStyle = answer.locked ? "#1a8f3c" : "#f0b400";
      context.strokeRect(left + x1, top + y1, x2 - x1, y2 - y1);
      const label = page().tileLabel(detection.tile);
      context.fillStyle = "rgba(0, 0, 0, 0.65)";
      context.fillRect(left + x1, top + y1 - 16, context.measureText(label).width + 6, 16);
      context.fillStyle = "#fff";
      context.fillText(label, left + x1 + 3, top + y1);
    }
  }

  function ready() {
    $("live-start").addEventListener("click", start);
    $("live-stop").addEventListener("click", () => {
      stop();
      say("");
    });
    window.addEventListener("pagehide", stop);
    if (new URLSearchParams(window.location.search).get("live") === "1") start();
  }

  if (window.smjPage) ready();
  else window.addEventListener("smj-ready", ready, { once: true });
})();
