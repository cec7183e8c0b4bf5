// forgegym dashboard: plain JS over the server's own endpoints (no build step).
"use strict";

const $ = (sel) => document.querySelector(sel);
const el = (tag, props = {}, ...children) => {
  const node = document.createElement(tag);
  Object.assign(node, props);
  for (const child of children) node.append(child instanceof Node ? child : String(child));
  return node;
};
const fmt = (x, digits = 3) => (typeof x === "number" ? x.toFixed(digits) : x == null ? "" : String(x));

async function getJSON(path) {
  const response = await fetch(path);
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = new Error(body.detail ? JSON.stringify(body.detail) : response.statusText);
    error.status = response.status;
    error.detail = body.detail;
    throw error;
  }
  return body;
}

// ------------------------------------------------------------------ tabs
const loaders = {};
for (const tab of document.querySelectorAll(".tab")) {
  tab.addEventListener("click", () => {
    for (const t of document.querySelectorAll(".tab")) t.classList.toggle("active", t === tab);
    for (const p of document.querySelectorAll(".panel")) p.classList.toggle("active", p.id === tab.dataset.tab);
    if (loaders[tab.dataset.tab]) loaders[tab.dataset.tab]();
  });
}

async function loadHeader() {
  const meta = await getJSON("/metadata");
  $("#env-id").textContent = meta.name;
  document.title = `forgegym — ${meta.name}`;
  const health = await getJSON("/health");
  $("#health").textContent = `${health.status}; ${health.active_sessions}/${health.max_sessions} sessions`;
}

// ------------------------------------------------------------------ play (one /ws session)
let socket = null;
let pending = null;
let stepIndex = 0;

function setStatus(text, isError = false) {
  const status = $("#status");
  status.textContent = text;
  status.classList.toggle("error", isError);
}

function openSocket() {
  if (socket && socket.readyState === WebSocket.OPEN) return Promise.resolve(socket);
  return new Promise((resolve, reject) => {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const ws = new WebSocket(`${scheme}://${location.host}/ws`);
    ws.onopen = () => { socket = ws; resolve(ws); };
    ws.onerror = () => reject(new Error("cannot open the WebSocket session"));
    ws.onclose = () => { socket = null; $("#step").disabled = true; };
    ws.onmessage = (event) => {
      const message = JSON.parse(event.data);
      const waiter = pending;
      pending = null;
      if (waiter) waiter(message);
    };
  });
}

async function send(type, data) {
  const ws = await openSocket();
  return new Promise((resolve) => {
    pending = resolve;
    ws.send(JSON.stringify(data === undefined ? { type } : { type, data }));
  });
}

function showObservation(payload) {
  const obs = payload.observation;
  $("#observation").textContent = obs.prompt;
  const info = obs.info || {};
  $("#episode").textContent = `${info.task_id || ""} · difficulty ${info.difficulty ?? "?"} · step ${info.step}/${info.max_steps}`;
  return info;
}

function renderBreakdown(breakdown) {
  const box = $("#breakdown");
  box.replaceChildren();
  box.classList.remove("muted");
  const table = el("table", { id: "breakdown-table" });
  table.append(el("thead", {}, el("tr", {}, el("th", {}, "term"), el("th", {}, "kind"), el("th", {}, "value"), el("th", {}, "weight"), el("th", {}, "detail"))));
  const body = el("tbody");
  for (const [name, term] of Object.entries(breakdown.terms || {})) {
    body.append(el("tr", { className: "term" },
      el("td", {}, name), el("td", {}, term.kind || ""),
      el("td", { className: "num" }, fmt(term.value)), el("td", { className: "num" }, fmt(term.weight)),
      el("td", {}, term.detail || "")));
  }
  table.append(body);
  box.append(table);
  box.append(el("p", {},
    el("span", { className: "total", id: "breakdown-total" }, `total ${fmt(breakdown.total)}`),
    ` · score ${fmt(breakdown.score)}`));
  if ((breakdown.gates || []).length) box.append(el("p", { className: "gate" }, `gates: ${breakdown.gates.join(", ")}`));
  for (const note of breakdown.notes || []) box.append(el("p", { className: "muted" }, note));
}

$("#reset").addEventListener("click", async () => {
  const data = {};
  const seed = $("#seed").value.trim();
  if (seed !== "") data.seed = Number(seed);
  const taskId = $("#task-id").value.trim();
  if (taskId) data.options = { task_id: taskId };
  setStatus("resetting…");
  try {
    const reply = await send("reset", data);
    if (reply.type === "error") { setStatus(`${reply.data.code}: ${reply.data.message}`, true); return; }
    showObservation(reply.data);
    stepIndex = 0;
    $("#rewards tbody").replaceChildren();
    const box = $("#breakdown");
    box.replaceChildren("Graded at the end of the episode (submit or step budget).");
    box.classList.add("muted");
    setStepping(true);
    setStatus("episode started");
  } catch (error) {
    setStatus(String(error), true);
  }
});

// Step, and the one-click actions, are live only while an episode runs.
function setStepping(enabled) {
  $("#step").disabled = !enabled;
  for (const button of document.querySelectorAll(".template")) button.disabled = !enabled;
}

async function step() {
  setStepping(false);
  setStatus("running…");
  const reply = await send("step", { text: $("#action").value });
  if (reply.type === "error") {
    setStatus(`${reply.data.code}: ${reply.data.message}`, true);
    setStepping(true);
    return;
  }
  const info = showObservation(reply.data);
  stepIndex += 1;
  $("#rewards tbody").append(el("tr", {},
    el("td", {}, stepIndex), el("td", { className: "num reward" }, fmt(reply.data.reward)),
    el("td", {}, info.action_error || "")));
  if (info.reward_breakdown) renderBreakdown(info.reward_breakdown);
  const done = reply.data.done;
  setStatus(done ? `episode over: score ${fmt(info.score)}, ${info.success ? "solved" : "not solved"}` : "ok");
  setStepping(!done);
}

$("#step").addEventListener("click", step);

// run_tests / submit need no text of their own: one click fills the box and sends it.
for (const button of document.querySelectorAll(".template")) {
  button.addEventListener("click", () => {
    $("#action").value = button.dataset.action;
    step();
  });
}

// ------------------------------------------------------------------ task bank
let taskPage = 0;
const PAGE = 20;

async function loadTasks() {
  const params = new URLSearchParams({ limit: PAGE, offset: taskPage * PAGE });
  const difficulty = $("#task-difficulty").value;
  if (difficulty !== "") params.set("difficulty", difficulty);
  const body = $("#task-table tbody");
  try {
    const data = await getJSON(`/tasks?${params}`);
    const select = $("#task-difficulty");
    if (select.options.length === 1) {
      for (const level of data.difficulty_levels) select.append(el("option", { value: level }, level));
    }
    $("#tasks-size").textContent = data.bank_size == null ? "" : `${data.bank_size} tasks in the bank`;
    $("#tasks-page").textContent = `page ${taskPage + 1}`;
    body.replaceChildren(...data.tasks.map((task) => {
      const play = el("button", {}, "play");
      play.addEventListener("click", () => {
        $("#task-id").value = task.task_id;
        document.querySelector('.tab[data-tab="play"]').click();
        $("#reset").click();
      });
      return el("tr", { title: task.description },
        el("td", {}, task.task_id), el("td", { className: "num" }, task.difficulty),
        el("td", {}, task.title), el("td", {}, play));
    }));
  } catch (error) {
    body.replaceChildren(el("tr", {}, el("td", { colSpan: 4 }, String(error))));
  }
}
$("#tasks-prev").addEventListener("click", () => { taskPage = Math.max(0, taskPage - 1); loadTasks(); });
$("#tasks-next").addEventListener("click", () => { taskPage += 1; loadTasks(); });
$("#task-difficulty").addEventListener("change", () => { taskPage = 0; loadTasks(); });
loaders.tasks = loadTasks;

// ------------------------------------------------------------------ curriculum
// Counts (integers) as they are; other numbers to 3 decimals.
const fmtValue = (x) => (Number.isInteger(x) ? String(x) : fmt(x));

function keyValueTable(object) {
  const table = el("table");
  for (const [key, value] of Object.entries(object)) {
    const cell = value && typeof value === "object" ? renderJSON(value) : fmtValue(value);
    table.append(el("tr", {}, el("th", {}, key), el("td", {}, cell)));
  }
  return table;
}

function drawCurve(points) {
  const svg = $("#curve");
  svg.replaceChildren();
  if (!points.length) return;
  const ns = "http://www.w3.org/2000/svg";
  const maxEpisode = Math.max(...points.map((p) => p.episode), 1);
  const maxDifficulty = Math.max(...points.map((p) => p.difficulty ?? 0), 1);
  const line = (cls, y) => {
    const poly = document.createElementNS(ns, "polyline");
    poly.setAttribute("class", cls);
    poly.setAttribute("points", points.map((p) => `${(p.episode / maxEpisode) * 600},${200 - y(p) * 190 - 5}`).join(" "));
    svg.append(poly);
  };
  line("success", (p) => p.rolling_success);
  line("difficulty", (p) => (p.difficulty ?? 0) / maxDifficulty);
}

async function loadCurriculum() {
  const message = $("#curriculum-message");
  message.classList.remove("error");
  let stats;
  try {
    stats = await getJSON("/curriculum/stats");
  } catch (error) {
    // A server without --curriculum: say so (the server's own words), not an error.
    $("#curriculum-stats").replaceChildren();
    $("#queue tbody").replaceChildren();
    $("#curve").replaceChildren();
    message.textContent = error.status === 404 && typeof error.detail === "string" ? error.detail : String(error);
    message.classList.toggle("error", error.status !== 404);
    return;
  }
  try {
    const [queue, curve] = await Promise.all([
      getJSON("/curriculum/queue?limit=100"), getJSON("/curriculum/curve"),
    ]);
    message.textContent = `episode ${stats.episode}; pass@${queue.k}`;
    $("#curriculum-stats").replaceChildren(keyValueTable(stats));
    drawCurve(curve.points);
    $("#queue tbody").replaceChildren(...queue.tasks.map((t) => el("tr", {},
      el("td", {}, t.task_id), el("td", {}, t.tier), el("td", { className: "num" }, t.difficulty ?? ""),
      el("td", { className: "num" }, `${fmt(t.successes, 1)} / ${t.trials}`),
      el("td", { className: "num" }, fmt(t.pass_at_k)), el("td", { className: "num" }, fmt(t.learnability)))));
  } catch (error) {
    message.textContent = String(error);
    message.classList.add("error");
  }
}
loaders.curriculum = loadCurriculum;

// ------------------------------------------------------------------ family statistics
// Any JSON: a mapping of mappings of scalars is a matrix (e.g. domain × corruption),
// a list of objects a table, anything else nested key/value tables.
function isScalar(v) { return v == null || typeof v !== "object"; }

function renderJSON(value) {
  if (isScalar(value)) return document.createTextNode(fmt(value));
  if (Array.isArray(value)) {
    if (value.length && value.every((v) => v && typeof v === "object" && !Array.isArray(v))) {
      const columns = [...new Set(value.flatMap((v) => Object.keys(v)))];
      const table = el("table");
      table.append(el("tr", {}, ...columns.map((c) => el("th", {}, c))));
      for (const row of value) table.append(el("tr", {}, ...columns.map((c) => el("td", {}, renderJSON(row[c])))));
      return table;
    }
    return document.createTextNode(value.map((v) => (isScalar(v) ? fmt(v) : JSON.stringify(v))).join(", "));
  }
  const rows = Object.entries(value);
  if (rows.length && rows.every(([, v]) => v && typeof v === "object" && !Array.isArray(v) && Object.values(v).every(isScalar))) {
    const columns = [...new Set(rows.flatMap(([, v]) => Object.keys(v)))];
    const table = el("table", { className: "matrix" });
    table.append(el("tr", {}, el("th"), ...columns.map((c) => el("th", {}, c))));
    for (const [key, v] of rows) table.append(el("tr", {}, el("th", {}, key), ...columns.map((c) => el("td", { className: "num" }, fmt(v[c])))));
    return table;
  }
  return keyValueTable(value);
}

async function showStats(name) {
  const message = $("#stats-message");
  const body = $("#stats-body");
  message.textContent = `computing ${name} statistics…`;
  try {
    const stats = await getJSON(`/${encodeURIComponent(name)}/stats`);
    body.replaceChildren(el("h2", {}, name), renderJSON(stats));
    message.textContent = "";
  } catch (error) {
    message.textContent = String(error);
  }
}

async function loadStats() {
  const select = $("#stats-family");
  if (select.options.length) return showStats(select.value);
  try {
    const families = (await getJSON("/families")).filter((f) => f.has_stats);
    if (!families.length) { $("#stats-message").textContent = "no registered family exposes statistics"; return; }
    for (const family of families) select.append(el("option", { value: family.name, selected: family.served }, family.name));
    select.addEventListener("change", () => showStats(select.value));
    await showStats(select.value);
  } catch (error) {
    $("#stats-message").textContent = String(error);
  }
}
loaders.stats = loadStats;

loadHeader().catch((error) => setStatus(String(error), true));

// ------------------------------------------------------------------ leaderboard (results files)
const interval = (x) => (x == null ? "–" : `${fmt(x.value)} [${fmt(x.low)}, ${fmt(x.high)}]`);

async function loadLeaderboard() {
  const message = $("#leaderboard-message");
  const metric = $("#leaderboard-metric").value;
  try {
    const board = await getJSON(`/leaderboard?metric=${encodeURIComponent(metric)}`);
    const total = board.weights.reduce((a, b) => a + b, 0) || 1;
    const weights = board.weights.map((w) => Math.round((100 * w) / total)).join("/");
    message.textContent = `metric ${board.metric}; difficulty weights ${weights}; 95% t intervals over tasks`;
    const columns = ["rank", "model", ...board.families, "aggregate", "tasks", "runs"];
    $("#leaderboard-table thead").replaceChildren(el("tr", {}, ...columns.map((c) => el("th", {}, c))));
    $("#leaderboard-table tbody").replaceChildren(...board.rows.map((row) => el("tr", {},
      el("td", { className: "num" }, row.rank),
      el("td", { className: "model", title: row.source }, row.name),
      ...board.families.map((f) => el("td", { className: "num family" }, interval(row.families[f]))),
      el("td", { className: "num aggregate" }, interval(row.aggregate)),
      el("td", { className: "num" }, row.tasks),
      el("td", { className: "num" }, row.runs),
    )));
    $("#leaderboard-differences").replaceChildren(...board.differences.map((d) => el("li", {},
      `${d.a} − ${d.b}: ${d.difference.value >= 0 ? "+" : ""}${fmt(d.difference.value)} ` +
      `[${fmt(d.difference.low)}, ${fmt(d.difference.high)}] on ${d.shared_tasks} shared tasks ` +
      `(paired t-test p = ${fmt(d.p_value)})`)));
    $("#leaderboard-notes").replaceChildren(...board.notes.map((n) => el("li", {}, n)));
  } catch (error) {
    message.textContent = String(error);
    $("#leaderboard-table tbody").replaceChildren();
    $("#leaderboard-differences").replaceChildren();
  }
}
$("#leaderboard-metric").addEventListener("change", loadLeaderboard);
loaders.leaderboard = loadLeaderboard;
