/* apex-voice view: the campaign page (#/) and the session page (#/s/<id>), plain JavaScript.
 *
 * Data arrive as scripts calling apexViewer.receive(name, data): data/index.js for the campaign,
 * data/sessions/<id>.js for one session, so the pages work opened from the disk (file://) as well as
 * served. Only the session being looked at is loaded. */
"use strict";
(function () {
  const waiting = new Map();
  const loaded = new Map();

  window.apexViewer = {
    receive(name, data) {
      loaded.set(name, data);
      const promise = waiting.get(name);
      if (promise) { waiting.delete(name); promise.resolve(data); }
    },
  };

  function load(name, src) {
    if (loaded.has(name)) return Promise.resolve(loaded.get(name));
    return new Promise((resolve, reject) => {
      waiting.set(name, { resolve, reject });
      const script = document.createElement("script");
      script.src = src;
      script.onerror = () => { waiting.delete(name); reject(new Error("could not load " + src)); };
      script.onload = () => {
        script.remove();
        if (waiting.has(name)) { waiting.delete(name); reject(new Error(src + " does not hold " + name)); }
      };
      document.head.appendChild(script);
    });
  }

  // ---- small helpers ----------------------------------------------------------------------------

  const app = document.getElementById("app");
  const crumb = document.getElementById("crumb");
  const help = document.getElementById("help");

  function esc(value) {
    return String(value).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  }
  function clock(ms) {
    if (ms == null || !isFinite(ms)) return "–";
    const s = Math.max(0, ms) / 1000;
    const m = Math.floor(s / 60);
    const rest = (s - m * 60).toFixed(1).padStart(4, "0");
    return m + ":" + rest;
  }
  function num(value, digits) { return value == null ? "–" : Number(value).toFixed(digits); }
  function json(value) { return esc(JSON.stringify(value, null, 2)); }
  function statusClass(status) {
    if (status === "passed") return "st-passed";
    if (status === "failed") return "st-failed";
    if (status === "error") return "st-error";
    if (status === "pending judge") return "st-pending";
    return "st-unscored";
  }
  function statusChip(status) { return `<span class="st ${statusClass(status)}">${esc(status)}</span>`; }
  function gateChip(name, value, bare) {
    const cls = value === true ? "g-pass" : value === false ? "g-fail" : "g-none";
    const mark = value === true ? "✓" : value === false ? "✗" : "·";
    const word = value === true ? "passed" : value === false ? "failed" : "not graded";
    return `<span class="g ${cls}" title="${name} ${word}">${bare ? "" : name}${mark}</span>`;
  }
  const GATES = ["GS", "PC", "RA", "WA"];

  function showError(error) {
    app.innerHTML = `<p class="error-box">${esc(error.message || error)}</p>`;
  }

  // ---- campaign page ------------------------------------------------------------------------------

  const filters = { text: "", status: "all", campaign: "all", sort: null, desc: false };

  const COLUMNS = [
    { key: "campaign", label: "campaign", multi: true, width: 190 },
    { key: "task_id", label: "task", width: 230 },
    { key: "rep", label: "rep", num: true, width: 36 },
    { key: "status", label: "status", width: 96, html: (r) => statusChip(r.status) },
    { key: "outcome", label: "outcome", width: 80 },
    { key: "pts", label: "PTS", num: true, width: 36 },
    ...GATES.map((g) => ({ key: g, label: g, width: 34, get: (r) => r.gates[g], html: (r) => gateChip(g, r.gates[g], true) })),
    { key: "afa", label: "AFA", num: true, width: 50, html: (r) => num(r.afa, 2) },
    { key: "fda", label: "FDA", num: true, width: 48, html: (r) => num(r.fda, 2) },
    { key: "stop_ms", label: "stop", title: "median stop latency after a barge-in (ms)", num: true, width: 56, html: (r) => num(r.stop_ms, 0) },
    { key: "overlap_pct", label: "ovl %", title: "overlap: both channels speaking, % of the session", num: true, width: 56, html: (r) => num(r.overlap_pct, 1) },
    { key: "turns", label: "turns", num: true, width: 46 },
    { key: "tool_calls", label: "calls", title: "tool calls", num: true, width: 44 },
    { key: "media_ms", label: "length", title: "media time to resolution", num: true, width: 60, html: (r) => clock(r.media_ms) },
    { key: "reason", label: "why it failed" },
  ];
  const REASON_PX = 200;
  function cellValue(column, row) { return column.get ? column.get(row) : row[column.key]; }

  function matches(row) {
    if (filters.campaign !== "all" && row.campaign !== filters.campaign) return false;
    const s = row.status;
    if (filters.status === "passed" && s !== "passed") return false;
    if (filters.status === "failed" && s !== "failed" && s !== "error") return false;
    if (filters.status === "not passed" && s === "passed") return false;
    if (filters.status === "pending" && s !== "pending judge") return false;
    if (filters.status === "unscored" && (row.scored || s === "pending judge" || s === "error")) return false;
    if (filters.text) {
      const hay = (row.task_id + " " + row.reason + " " + row.status + " " + (row.outcome || "")).toLowerCase();
      if (!hay.includes(filters.text)) return false;
    }
    return true;
  }

  function sorted(rows, columns) {
    const column = columns.find((c) => c.key === filters.sort);
    if (!column) return rows;
    const sign = filters.desc ? -1 : 1;
    return rows.slice().sort((a, b) => {
      const x = cellValue(column, a), y = cellValue(column, b);
      if (x == null && y == null) return 0;
      if (x == null) return 1;
      if (y == null) return -1;
      return (x < y ? -1 : x > y ? 1 : 0) * sign;
    });
  }

  async function showCampaign() {
    const index = await load("index", "data/index.js");
    const single = index.cells.length === 1 && index.cells[0].id && index.campaigns.length === 0;
    if (single && !location.hash) { location.replace("#/s/" + encodeURIComponent(index.cells[0].id)); return; }
    document.title = index.title + " · apex-voice view";
    crumb.textContent = index.title;
    const multi = index.campaigns.length > 1;
    // The task column as wide as the longest task id (within bounds), measured in the page's font.
    const longest = index.cells.reduce((a, c) => (c.task_id.length > a.length ? c.task_id : a), "");
    const measure = document.createElement("canvas").getContext("2d");
    measure.font = getComputedStyle(document.body).font;
    const taskWidth = Math.min(320, Math.max(120, Math.ceil(measure.measureText(longest).width) + 14));
    const columns = COLUMNS.filter((c) => !c.multi || multi).map((c) => (c.key === "task_id" ? { ...c, width: taskWidth } : c));
    const campaigns = index.campaigns.map((c) =>
      `<div class="camp"><b>${esc(c.name)}</b> · ${esc(c.condition)} · ${c.passed} passed of ${c.cells} cells` +
      (c.unscored ? ` · <span class="st st-unscored">${c.unscored} unscored</span>` : "") + `</div>`).join("");
    app.innerHTML = `
      <div class="summary">${campaigns}</div>
      <div class="filters">
        <input type="search" id="filter-text" placeholder="filter: task, reason…  (/)" value="${esc(filters.text)}">
        <select id="filter-status" aria-label="status">
          ${["all", "passed", "failed", "not passed", "pending", "unscored"].map((s) =>
            `<option${s === filters.status ? " selected" : ""}>${s}</option>`).join("")}
        </select>
        ${multi ? `<select id="filter-campaign" aria-label="campaign"><option>all</option>${index.campaigns.map((c) =>
          `<option${c.name === filters.campaign ? " selected" : ""}>${esc(c.name)}</option>`).join("")}</select>` : ""}
        <span class="count" id="count"></span>
      </div>
      <div class="table-wrap" id="table-wrap"><table class="cells"><colgroup>${columns.map((c) =>
        `<col${c.width ? ` style="width:${c.width}px"` : ""}>`).join("")}</colgroup><thead><tr>${columns.map((c) =>
        `<th data-key="${c.key}"${c.title ? ` title="${esc(c.title)}"` : ""}>${esc(c.label)}</th>`).join("")}</tr></thead><tbody id="rows"></tbody></table></div>`;
    // Fixed columns and at least REASON_PX for the reason: narrower windows scroll sideways.
    app.querySelector("table.cells").style.minWidth = columns.reduce((sum, c) => sum + (c.width || 0), REASON_PX) + "px";
    const wrap = document.getElementById("table-wrap");
    const body = document.getElementById("rows");
    const count = document.getElementById("count");
    const heads = app.querySelectorAll("th");
    let shown = [];
    let rowHeight = 28;
    let painting = false;
    function rowHtml(row) {
      const cls = row.id ? "cell link" : "cell nosession";
      const id = row.id ? ` data-id="${esc(row.id)}"` : ` title="no session to show"`;
      return `<tr class="${cls}"${id}>` + columns.map((c) => {
        const value = c.html ? c.html(row) : esc(cellValue(c, row) ?? "–");
        const title = c.key === "reason" || c.key === "task_id" ? ` title="${esc(cellValue(c, row) || "")}"` : "";
        return `<td class="${c.num ? "num" : c.key === "reason" ? "reason" : ""}"${title}>${value}</td>`;
      }).join("") + "</tr>";
    }
    function spacer(rows) {
      return rows > 0 ? `<tr class="spacer" style="height:${rows * rowHeight}px"><td colspan="${columns.length}"></td></tr>` : "";
    }
    // Only the rows in view (and a margin) are in the page: 1,800 rows drawn whole take seconds to lay out.
    function paint() {
      painting = false;
      if (!shown.length) { body.innerHTML = `<tr class="none"><td colspan="${columns.length}" class="empty">no cell matches</td></tr>`; return; }
      const view = Math.max(wrap.clientHeight, window.innerHeight);
      const first = Math.max(0, Math.floor(wrap.scrollTop / rowHeight) - 20);
      const last = Math.min(shown.length, Math.ceil((wrap.scrollTop + view) / rowHeight) + 20);
      body.innerHTML = spacer(first) + shown.slice(first, last).map(rowHtml).join("") + spacer(shown.length - last);
      const drawn = body.querySelector("tr.cell");
      const measured = drawn ? drawn.getBoundingClientRect().height : 0;
      if (measured && Math.abs(measured - rowHeight) > 0.5) { rowHeight = measured; paint(); }
    }
    function render() {
      shown = sorted(index.cells.filter(matches), columns);
      count.textContent = `${shown.length} of ${index.cells.length} cells`;
      heads.forEach((th) => {
        th.className = th.dataset.key === filters.sort ? (filters.desc ? "sorted-desc" : "sorted-asc") : "";
      });
      paint();
    }
    wrap.addEventListener("scroll", () => { if (!painting) { painting = true; requestAnimationFrame(paint); } });
    document.getElementById("filter-text").addEventListener("input", (e) => { filters.text = e.target.value.trim().toLowerCase(); render(); });
    document.getElementById("filter-status").addEventListener("change", (e) => { filters.status = e.target.value; render(); });
    const campaignSelect = document.getElementById("filter-campaign");
    if (campaignSelect) campaignSelect.addEventListener("change", (e) => { filters.campaign = e.target.value; render(); });
    app.querySelector("thead").addEventListener("click", (e) => {
      const th = e.target.closest("th");
      if (!th) return;
      if (filters.sort === th.dataset.key) filters.desc = !filters.desc; else { filters.sort = th.dataset.key; filters.desc = false; }
      render();
    });
    body.addEventListener("click", (e) => {
      const tr = e.target.closest("tr[data-id]");
      if (tr) location.hash = "#/s/" + encodeURIComponent(tr.dataset.id);
    });
    render();
  }

  // ---- session page -----------------------------------------------------------------------------

  let session = null; // the open session page's controller

  function fieldsTable(fields) {
    if (!fields.length) return "";
    const failing = fields.filter((f) => f.counted && f.tier !== "pending" && f.score < 1).length;
    const rows = fields.map((f) => {
      const cls = f.tier === "pending" ? "pend" : f.counted && f.score < 1 ? "bad" : "";
      const flags = [f.required ? "required" : "", f.stale ? "stale" : "", f.present ? "" : "missing"].filter(Boolean).join(", ");
      return `<tr class="${cls}"><td class="v">${esc(f.artifact)}.${esc(f.field)}</td><td class="v">${json(f.expected)}</td>` +
        `<td class="v">${json(f.got)}</td><td>${esc(f.grader)}</td><td>${esc(f.tier)}</td><td>${num(f.score, 2)}</td><td>${esc(flags)}</td></tr>`;
    }).join("");
    return `<div class="panel" id="fields"><h2>Field verdicts (${failing} of ${fields.length} failing)</h2>
      <table class="fields"><thead><tr><th>field</th><th>expected</th><th>got</th><th>grader</th><th>tier</th><th>score</th><th></th></tr></thead>
      <tbody>${rows}</tbody></table></div>`;
  }

  function predicatesPanel(predicates) {
    if (!predicates.length) return "";
    return `<div class="panel"><h2>Predicates that failed (${predicates.length})</h2><table class="fields"><tbody>${
      predicates.map((p) => `<tr class="bad"><td>${gateChip(p.gate, false)}</td><td>${esc(p.role)}</td><td class="v">${esc(p.id)}</td><td>${esc(p.reason)}</td></tr>`).join("")
    }</tbody></table></div>`;
  }

  const WHY_SHOWN = 6; // explanation lines shown before "N more"
  function whyPanel(s) {
    if (s.status === "passed") return "";
    const item = (line) => `<li>${esc(line)}</li>`;
    const rest = s.explain.slice(WHY_SHOWN);
    const lines = s.explain.slice(0, WHY_SHOWN).map(item).join("") +
      (rest.length ? `</ul><details><summary>${rest.length} more</summary><ul>${rest.map(item).join("")}</ul></details><ul>` : "");
    const head = s.status === "pending judge" ? "Waiting on the judge" : "Why it failed";
    return `<div class="why" id="why"><h2>${head}${s.reason ? ` · ended: ${esc(s.reason)}` : ""}</h2>
      ${s.detail ? `<p>${esc(s.detail)}</p>` : ""}${lines ? `<ul>${lines}</ul>` : ""}
      ${!lines && !s.detail ? `<p>${esc(s.outcome || s.status)}</p>` : ""}</div>`;
  }

  function transcriptLine(line, i) {
    let text = esc(line.text);
    let note = "";
    if (line.speaker === "agent" && line.heard_chars != null && line.heard_chars < line.text.length) {
      const unheard = line.text.length - line.heard_chars;
      text = esc(line.text.slice(0, line.heard_chars)) + `<del class="unheard">${esc(line.text.slice(line.heard_chars))}</del>`;
      note = `<span class="heard-note">the agent's transcript says this; the user heard ${line.heard_chars} of ` +
        `${line.text.length} characters (${esc(line.heard_verdict)}; ${unheard} never heard)</span>`;
    }
    const tags = line.tags.map((t) => `<span class="tag">${esc(t)}</span>`).join("");
    const who = line.speaker === "event" ? "" : line.speaker;
    return `<div class="line ${line.speaker}" data-i="${i}" data-t="${line.t_ms}"><span class="t">${clock(line.t_ms)}</span>` +
      `<span class="who">${who}</span><span>${text}${tags}${note}</span></div>`;
  }

  function callItem(call, i) {
    const auth = call.auth_decision ? `<span class="auth${/AUTHORIZED$|^ALLOW/i.test(call.auth_decision) ? "" : " denied"}">${esc(call.auth_decision)}</span>` : "";
    const err = call.is_error ? `<span class="st st-failed">${esc(call.error || "error")}</span>` : "";
    const latency = call.latency_ms != null ? `<span class="t">${call.latency_ms} ms</span>` : "";
    return `<div class="call${call.is_error ? " err" : ""}" data-i="${i}">
      <button type="button" class="call-head" data-seek="${call.t_ms}" title="seek to ${clock(call.t_ms)}">
        <span class="t">${clock(call.t_ms)}</span><span class="name">${esc(call.tool)}</span>${auth}${err}${latency}</button>
      <details><summary>arguments${call.done ? " and result" : " (no result)"}${call.mutations.length ? ` · wrote ${esc(call.mutations.join(", "))}` : ""}</summary>
        <pre>${json(call.args)}</pre>${call.done ? `<pre>${json(call.result)}</pre>` : ""}</details></div>`;
  }

  function gateItem(change) {
    const chips = GATES.map((g) => gateChip(g, change.gates[g])).join(" ");
    const failing = change.failing.length ? `<pre>${esc(change.failing.join("\n"))}</pre>` : "";
    return `<div class="gatechange" data-t="${change.t_ms}">${clock(change.t_ms)} gates: ${chips}${failing}</div>`;
  }

  function timelineHtml(s, total) {
    const pct = (t) => Math.max(0, Math.min(100, (t / total) * 100)).toFixed(3) + "%";
    const tools = s.tools.map((c, i) => `<button type="button" class="tl-tool${c.is_error ? " err" : ""}" data-i="${i}" data-seek="${c.t_ms}" ` +
      `style="left:${pct(c.t_ms)}" title="${esc(c.tool)} at ${clock(c.t_ms)}${c.auth_decision ? " · " + esc(c.auth_decision) : ""}"></button>`).join("");
    const marks = s.marks.map((m) => `<button type="button" class="tl-mark k-${esc(m.kind)}" data-seek="${m.t_ms}" ` +
      `style="left:${pct(m.t_ms)}" title="${clock(m.t_ms)} ${esc(m.label)}"></button>`).join("");
    const lanes = s.audio ? `<span class="lane-label" style="top:2px">user (L)</span><span class="lane-label" style="top:77px">agent (R)</span>` : "";
    return `<div class="timeline" id="timeline"><canvas id="wave"></canvas>${lanes}
      <div class="markers">${tools}${marks}</div><div class="cursor" id="cursor"></div></div>`;
  }

  function drawWave(canvas, s, total) {
    const ratio = window.devicePixelRatio || 1;
    const width = canvas.clientWidth, height = canvas.clientHeight;
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
    const ctx = canvas.getContext("2d");
    ctx.scale(ratio, ratio);
    ctx.fillStyle = "#fbfcfd";
    ctx.fillRect(0, 0, width, height);
    const lane = height / 2;
    ctx.strokeStyle = "#e1e4ea";
    ctx.beginPath(); ctx.moveTo(0, lane); ctx.lineTo(width, lane); ctx.stroke();
    const colors = ["#2f6fd6", "#d2702b"];
    if (!s.peaks.length) {
      ctx.fillStyle = "#8a90a0";
      ctx.font = "12px system-ui, sans-serif";
      ctx.fillText("no recording: the turns and calls below are placed at their media times", 10, lane - 6);
    }
    s.peaks.slice(0, 2).forEach((peaks, channel) => {
      const mid = lane * channel + lane / 2;
      ctx.fillStyle = colors[channel];
      const binsPerPx = (total / s.bin_ms) / width;
      for (let x = 0; x < width; x++) {
        const from = Math.floor(x * binsPerPx), to = Math.max(from + 1, Math.floor((x + 1) * binsPerPx));
        let peak = 0;
        for (let b = from; b < to && b < peaks.length; b++) if (peaks[b] > peak) peak = peaks[b];
        const h = Math.max(0.5, (peak / 100) * (lane / 2 - 3));
        ctx.fillRect(x, mid - h, 1, h * 2);
      }
    });
  }

  async function showSession(id) {
    const s = await load(id, "data/sessions/" + encodeURIComponent(id) + ".js");
    document.title = `${s.task_id} · apex-voice view`;
    crumb.innerHTML = `<a href="#/" style="color:#c9cfdc">campaign</a> › ${esc(s.task_id)}${s.rep != null ? " rep" + s.rep : ""}`;
    const total = Math.max(1, s.duration_ms || s.end_ms || 1);
    const gates = GATES.map((g) => gateChip(g, s.gates[g])).join(" ");
    const timed = [
      ...s.tools.map((c, i) => ({ t: c.t_ms, html: callItem(c, i) })),
      ...s.gate_changes.map((g) => ({ t: g.t_ms, html: gateItem(g), after: true })),
    ].sort((a, b) => a.t - b.t || (a.after ? 1 : 0) - (b.after ? 1 : 0));
    app.innerHTML = `
      <div class="session-head"><h1>${esc(s.task_id)}${s.rep != null ? ` · rep ${s.rep}` : ""}</h1>
        ${statusChip(s.status)} <span>PTS <b>${s.pts ?? "–"}</b></span> ${gates} <span>AFA <b>${num(s.afa, 2)}</b></span>
        <span class="meta">${esc(s.model)} · ${esc(s.condition)} · run ${esc(s.run_id)}${s.outcome ? " · " + esc(s.outcome) : ""}</span></div>
      ${whyPanel(s)}
      <div class="panel"><div class="player">
        <button type="button" id="play"${s.audio ? "" : " disabled"}>play</button>
        <span class="time"><span id="now">0:00.0</span> / ${clock(total)}</span>
        <span class="note">${s.audio ? "space play/pause · ← → seek · n/p tool calls · ? keys" :
          "no recording (a text session, C0): its turns and calls, placed at their media times"}</span>
        ${s.audio ? `<audio id="audio" preload="auto" src="${esc(s.audio)}"></audio>` : ""}</div>
        ${timelineHtml(s, total)}</div>
      <div class="columns">
        <div class="panel"><h2>Transcript (${s.transcript.length})</h2><div class="scroll" id="transcript">${s.transcript.map(transcriptLine).join("") || '<p class="empty">nothing said</p>'}</div></div>
        <div class="panel"><h2>Tool calls (${s.tools.length}) and gates</h2><div class="scroll" id="calls">${timed.map((x) => x.html).join("") || '<p class="empty">no tool calls</p>'}</div></div>
      </div>
      ${fieldsTable(s.fields)}${predicatesPanel(s.predicates)}
      ${s.errors.length ? `<div class="panel"><h2>Log problems</h2><pre>${esc(s.errors.join("\n"))}</pre></div>` : ""}`;
    session = sessionController(s, total);
  }

  function sessionController(s, total) {
    const audio = document.getElementById("audio");
    const canvas = document.getElementById("wave");
    const cursor = document.getElementById("cursor");
    const nowLabel = document.getElementById("now");
    const playButton = document.getElementById("play");
    const transcript = document.getElementById("transcript");
    const calls = document.getElementById("calls");
    const lines = Array.from(transcript.querySelectorAll(".line"));
    const callNodes = Array.from(calls.querySelectorAll(".call"));
    let virtual = 0;
    let frame = 0;
    let currentLine = -1;
    let currentCall = -1;

    const now = () => (audio ? audio.currentTime * 1000 : virtual);
    function seek(ms) {
      ms = Math.max(0, Math.min(total, ms));
      if (audio) audio.currentTime = ms / 1000; else virtual = ms;
      update();
    }
    function lastAtOrBefore(items, t, key) {
      let found = -1;
      for (let i = 0; i < items.length; i++) { if (key(items[i]) <= t) found = i; else break; }
      return found;
    }
    function follow(container, node) {
      const top = node.offsetTop - container.clientHeight / 3;
      container.scrollTop = Math.max(0, top);
    }
    function update() {
      const t = now();
      cursor.style.left = ((t / total) * 100).toFixed(3) + "%";
      nowLabel.textContent = clock(t);
      const line = lastAtOrBefore(s.transcript, t, (l) => l.t_ms);
      if (line !== currentLine) {
        if (currentLine >= 0) lines[currentLine].classList.remove("current");
        lines.forEach((node, i) => node.classList.toggle("past", i < line));
        currentLine = line;
        if (line >= 0) { lines[line].classList.add("current"); follow(transcript, lines[line]); }
      }
      const call = lastAtOrBefore(s.tools, t, (c) => c.t_ms);
      if (call !== currentCall) {
        if (currentCall >= 0) callNodes[currentCall].classList.remove("current");
        document.querySelectorAll(".tl-tool.active").forEach((n) => n.classList.remove("active"));
        currentCall = call;
        if (call >= 0) {
          callNodes[call].classList.add("current");
          follow(calls, callNodes[call]);
          const marker = document.querySelector(`.tl-tool[data-i="${call}"]`);
          if (marker) marker.classList.add("active");
        }
      }
    }
    function loop() { update(); if (audio && !audio.paused) frame = requestAnimationFrame(loop); }
    function toggle() {
      if (!audio) return;
      if (audio.paused) audio.play().catch((e) => console.warn("playback refused:", e.message)); else audio.pause();
    }
    if (audio) {
      audio.addEventListener("play", () => { playButton.textContent = "pause"; cancelAnimationFrame(frame); loop(); });
      audio.addEventListener("pause", () => { playButton.textContent = "play"; update(); });
      audio.addEventListener("seeked", update);
      audio.addEventListener("ended", () => { playButton.textContent = "play"; });
      playButton.addEventListener("click", toggle);
    }
    canvas.addEventListener("click", (e) => {
      const box = canvas.getBoundingClientRect();
      seek(((e.clientX - box.left) / box.width) * total);
    });
    app.addEventListener("click", onSeekClick);
    function onSeekClick(e) {
      const target = e.target.closest("[data-seek]");
      if (target) { seek(Number(target.dataset.seek)); return; }
      const stamp = e.target.closest(".line .t");
      if (stamp) seek(Number(stamp.parentElement.dataset.t));
    }
    function stepCall(direction) {
      const t = now();
      const times = s.tools.map((c) => c.t_ms);
      const next = direction > 0 ? times.find((x) => x > t + 1) : times.slice().reverse().find((x) => x < t - 1);
      if (next != null) seek(next);
    }
    const redraw = () => drawWave(canvas, s, total);
    window.addEventListener("resize", redraw);
    redraw();
    update();
    return {
      keys(e) {
        const big = e.shiftKey ? 1000 : 5000;
        switch (e.key) {
          case " ": toggle(); return true;
          case "ArrowLeft": seek(now() - big); return true;
          case "ArrowRight": seek(now() + big); return true;
          case "Home": seek(0); return true;
          case "End": seek(total); return true;
          case "n": stepCall(1); return true;
          case "p": stepCall(-1); return true;
          case "b": location.hash = "#/"; return true;
          default: return false;
        }
      },
      close() {
        cancelAnimationFrame(frame);
        if (audio) { audio.pause(); audio.removeAttribute("src"); audio.load(); }
        window.removeEventListener("resize", redraw);
        app.removeEventListener("click", onSeekClick);
      },
    };
  }

  // ---- routing and keys -----------------------------------------------------------------------------

  function route() {
    if (session) { session.close(); session = null; }
    const match = location.hash.match(/^#\/s\/(.+)$/);
    const shown = match ? showSession(decodeURIComponent(match[1])) : showCampaign();
    shown.catch(showError);
  }

  function toggleHelp(show) { help.hidden = show === undefined ? !help.hidden : !show; }
  document.getElementById("help-button").addEventListener("click", () => toggleHelp());
  document.getElementById("help-close").addEventListener("click", () => toggleHelp(false));
  help.addEventListener("click", (e) => { if (e.target === help) toggleHelp(false); });

  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const typing = /^(INPUT|SELECT|TEXTAREA)$/.test(e.target.tagName);
    if (e.key === "Escape") { if (!help.hidden) { toggleHelp(false); e.preventDefault(); } else if (typing) e.target.blur(); return; }
    if (typing) return;
    if (e.key === "?") { toggleHelp(); e.preventDefault(); return; }
    if (!help.hidden) return;
    if (e.key === " " && /^(BUTTON|SUMMARY)$/.test(e.target.tagName)) e.target.blur(); // space is ours, not the button's
    if (session && session.keys(e)) { e.preventDefault(); return; }
    if (!session && e.key === "/") {
      const input = document.getElementById("filter-text");
      if (input) { input.focus(); e.preventDefault(); }
    }
  });

  window.addEventListener("hashchange", route);
  route();
})();
