// MotionAgent console: the fleet, one device live, and desired-document edits. Plain JavaScript, no library.
// Every text that came from a device (ids, reasons, versions, settings) goes into the page through textContent
// only — never parsed as markup — so device text stays text. The server's Content-Security-Policy runs no other script.
"use strict";

const probe = {  // read by the browser tests, the screenshots and the figures (Tests/ConsoleBrowserTests)
  hello: false, rows: 0, rowUpdates: [], delays: [], attitude: null, attitudeDraws: 0,
  plots: {}, convergence: null, firstRows: null, messages: 0,
};
window.consoleProbe = probe;

const $ = (id) => document.getElementById(id);
const rows = new Map();      // device → row
const trs = new Map();       // device → <tr>
let canChange = false;
let socket = null;
let watching = null;
let sortKey = "device", sortDir = 1;
let reorderPending = false;
let pendingEdit = null;
let keys = [];

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}
function fmtTime(seconds) {
  if (!Number.isFinite(seconds) || seconds <= 0) return "—";
  const d = new Date(seconds * 1000);
  return d.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
}
function ago(seconds) {
  if (!Number.isFinite(seconds) || seconds <= 0) return "—";
  const s = Math.max(0, Date.now() / 1000 - seconds);
  if (s < 90) return Math.round(s) + " s ago";
  if (s < 5400) return Math.round(s / 60) + " min ago";
  if (s < 172800) return Math.round(s / 3600) + " h ago";
  return Math.round(s / 86400) + " d ago";
}
function num(v, digits) { return Number.isFinite(v) ? v.toFixed(digits) : "—"; }
function desiredText(row) {
  return Object.keys(row.desired || {}).sort().map((k) => k + " v" + row.desired[k]).join(", ") || "none";
}
function problemsText(row) {
  const out = [];
  if (!row.seen) out.push("no status yet");
  if (row.impostor !== undefined && row.impostor !== null) out.push("status names another device: " + row.impostor);
  if (row.refused) out.push("refused " + row.refused);
  for (const d of row.differing || []) out.push(d.key + " = " + (d.value ?? "—") + ", desired " + d.wanted + ": " + d.why);
  if (row.ignored) out.push("ignored " + row.ignored);
  return out.join("; ");
}

// ---- the socket -------------------------------------------------------------------------------------------
function connect() {
  const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws";
  socket = new WebSocket(url);
  socket.onopen = () => { setBadge($("connection"), "live", "ok"); if (watching) send({ watch: watching }); };
  socket.onclose = () => { setBadge($("connection"), "disconnected — retrying", "bad"); setTimeout(connect, 2000); };
  socket.onmessage = (event) => {
    const received = performance.now();
    probe.messages++;
    let message;
    try { message = JSON.parse(event.data); } catch (e) { return; }
    handle(message, received);
  };
}
function send(object) { if (socket && socket.readyState === 1) socket.send(JSON.stringify(object)); }
function setBadge(node, text, cls) { node.textContent = text; node.className = "badge " + (cls || ""); }

function handle(message, received) {
  switch (message.type) {
    case "hello":
      canChange = message.canChange;
      setBadge($("mode"), canChange ? (message.signing ? "can change (signing)" : "can change") : "read-only", canChange ? "ok" : "");
      $("edit-mode").textContent = canChange
        ? (message.signing ? "Documents are signed with the console's operator key." : "Documents are published unsigned (the console was given no --signing-key).")
        : "Read-only: open the address the console printed (it carries the token) to change settings.";
      for (const b of ["edit-set", "edit-unset", "edit-clear"]) $(b).disabled = !canChange;
      rows.clear(); trs.clear(); $("fleet-rows").replaceChildren();
      applyRows(message.rows, received, true);
      showDocuments(message.documents); setKeys(message.keys);
      probe.hello = true;
      break;
    case "rows": applyRows(message.rows, received, false); break;
    case "documents": showDocuments(message.documents); setKeys(message.keys); break;
    case "connection": {
      const down = message.nodes.filter((n) => n.connected !== "true").map((n) => n.node);
      setBadge($("connection"), down.length ? "broker unreachable: " + down.join(", ") : "live", down.length ? "bad" : "ok");
      break;
    }
    case "detail": if (message.detail.device === watching) showDetail(message.detail); break;
    case "samples": if (message.device === watching) takeSamples(message); break;
  }
}

// ---- fleet view ---------------------------------------------------------------------------------------------
function applyRows(list, received, initial) {
  let reorder = initial;
  const groupsBefore = groupSet();
  for (const row of list) {
    const before = rows.get(row.device);
    rows.set(row.device, row);
    let tr = trs.get(row.device);
    if (!tr) { tr = makeTr(row.device); trs.set(row.device, tr); reorder = true; }
    fillTr(tr, row);
    if (!before || sortValue(before, sortKey) !== sortValue(row, sortKey) || !matches(before) !== !matches(row)) reorder = true;
  }
  probe.rows = rows.size;
  if (groupSet().size !== groupsBefore.size) fillGroups();
  if (reorder) reorderNow();
  $("fleet-count").textContent = rows.size + " devices, " + [...rows.values()].filter((r) => r.online).length + " online";
  if (watching && list.some((r) => r.device === watching)) showDeviceState(rows.get(watching));
  updateConvergence();
  // The time from the message to the DOM updated (applyMs) and to the next frame painted with it (ms): one row of
  // a large fleet must stay cheap.
  const applyMs = performance.now() - received;
  requestAnimationFrame(() => setTimeout(() => {
    const ms = performance.now() - received;
    if (initial) probe.firstRows = { rows: list.length, ms, applyMs };
    else { probe.rowUpdates.push({ rows: list.length, ms, applyMs }); if (probe.rowUpdates.length > 500) probe.rowUpdates.shift(); }
  }, 0));
}
function makeTr(device) {
  const tr = el("div", null, "row");
  tr.setAttribute("role", "row");
  tr.dataset.device = device;
  const link = el("a", device);
  link.href = "#/device/" + encodeURIComponent(device);
  const first = el("span", null, "device"); first.appendChild(link); first.title = device;
  tr.appendChild(first);
  for (const cls of ["state", "since", "agent", "boot", "groups", "desired", "problems", "outbox", "cpu", "rss", "metrics"]) tr.appendChild(el("span", "", cls));
  for (const cell of tr.children) cell.setAttribute("role", "cell");
  return tr;
}
function fillTr(tr, row) {
  const c = tr.children;
  c[1].textContent = row.seen ? (row.online ? "online" : "offline") : "—";
  c[2].textContent = ago(row.since); c[2].title = fmtTime(row.since);
  c[3].textContent = row.agentVersion ?? "—";
  c[4].textContent = row.bootCount ?? "—";
  c[5].textContent = (row.groups || []).join(", ");
  c[6].textContent = desiredText(row);
  c[7].textContent = problemsText(row);
  c[8].textContent = row.outboxDepth ?? "—";
  c[9].textContent = row.metrics ? num(row.metrics.cpuPercent, 1) : "—";
  c[10].textContent = row.metrics ? num(row.metrics.rssBytes / 1048576, 1) : "—";
  c[11].textContent = row.metrics ? ago(row.metrics.time) : "—";
  tr.className = "row " + (row.online ? "online" : "offline") + (row.problem ? " problem" : "");
}
function sortValue(row, key) {
  switch (key) {
    case "state": return row.online ? 1 : 0;
    case "desired": return desiredText(row);
    case "groups": return (row.groups || []).join(", ");
    case "problem": return row.problem ? 0 : 1;
    case "outbox": return row.outboxDepth ?? -1;
    case "cpu": return row.metrics ? row.metrics.cpuPercent : -1;
    case "rss": return row.metrics ? row.metrics.rssBytes : -1;
    case "metricsTime": return row.metrics ? row.metrics.time : 0;
    default: return row[key] ?? "";
  }
}
function groupSet() { const s = new Set(); for (const r of rows.values()) for (const g of r.groups || []) s.add(g); return s; }
function fillGroups() {
  const select = $("group-filter"), chosen = select.value;
  const options = [el("option", "every group")]; options[0].value = "";
  for (const g of [...groupSet()].sort()) { const o = el("option", g); o.value = g; options.push(o); }
  select.replaceChildren(...options); select.value = chosen;
  $("names").replaceChildren(...[...groupSet()].sort().map((g) => { const o = document.createElement("option"); o.value = g; return o; }));
}
function matches(row) {
  const group = $("group-filter").value, text = $("text-filter").value.toLowerCase();
  if (group && !(row.groups || []).includes(group)) return false;
  if (text && !row.device.toLowerCase().includes(text)) return false;
  if ($("problems-only").checked && !row.problem) return false;
  return true;
}
function reorderNow() {
  const list = [...rows.values()].filter(matches);
  list.sort((a, b) => {
    const x = sortValue(a, sortKey), y = sortValue(b, sortKey);
    if (x < y) return -sortDir; if (x > y) return sortDir;
    return a.device < b.device ? -1 : a.device > b.device ? 1 : 0;
  });
  $("fleet-rows").replaceChildren(...list.map((r) => trs.get(r.device)));
}
function scheduleReorder() {
  if (reorderPending) return;
  reorderPending = true;
  requestAnimationFrame(() => { reorderPending = false; reorderNow(); });
}

// ---- device view --------------------------------------------------------------------------------------------
const windowSeconds = 30;
const series = { acceleration: [], rotation: [], motionAcceleration: [], motionRotation: [] };
let attitude = null, attitudeDirty = false, plotsDirty = false;
let rates = {};
let streamsStatus = {};
const latest = {};

function enterDevice(device) {
  if (watching !== device) {
    watching = device;
    for (const k of Object.keys(series)) series[k] = [];
    attitude = null; rates = {}; streamsStatus = {};
    for (const k of Object.keys(latest)) delete latest[k];
    $("events").replaceChildren();
    $("device-title").textContent = device;
    $("motion-values").replaceChildren(); $("attitude-values").replaceChildren();
    $("streams").tBodies[0].replaceChildren(); $("settings").tBodies[0].replaceChildren();
    send({ watch: device });
  }
  if (rows.has(device)) showDeviceState(rows.get(device));
  attitudeDirty = plotsDirty = true;
}
function leaveDevice() { if (watching) { watching = null; send({ watch: null }); } }
function showDeviceState(row) {
  setBadge($("device-state"), row.seen ? (row.online ? "online" : "offline") + " since " + fmtTime(row.since) : "no status", row.online ? "ok" : "bad");
  $("device-meta").textContent = "agent " + (row.agentVersion ?? "—") + " · boot " + (row.bootCount ?? "—") + " · groups " + ((row.groups || []).join(", ") || "none");
}
function showDetail(detail) {
  if (detail.row) { rows.set(detail.device, detail.row); showDeviceState(detail.row); }
  streamsStatus = detail.streams || {};
  renderStreams();
  const body = $("settings").tBodies[0];
  const settings = (detail.configuration && detail.configuration.settings) || {};
  body.replaceChildren(...Object.keys(settings).sort().map((key) => {
    const s = settings[key], tr = document.createElement("tr");
    tr.append(el("td", key), el("td", s.value), el("td", s.source), el("td", s.note ?? ""));
    return tr;
  }));
  const row = detail.row || {};
  $("device-desired").textContent = "Desired documents applied: " + desiredText(row) + (row.refused ? " — refused " + row.refused : "");
}
function renderStreams() {
  const body = $("streams").tBodies[0];
  body.replaceChildren(...Object.keys(streamsStatus).sort().map((name) => {
    const s = streamsStatus[name], tr = document.createElement("tr");
    const measured = rates[name];
    tr.append(el("td", name), el("td", s.enabled ? "yes" : "no"), el("td", num(s.requestedRateHz, 2)), el("td", num(s.rateHz, 2)),
      el("td", measured === undefined ? "—" : num(measured, 1)), el("td", s.qos), el("td", s.batch), el("td", s.encoding), el("td", s.error ?? ""));
    return tr;
  }));
}
function takeSamples(message) {
  const nowS = Date.now() / 1000;
  const push = (list, samples) => { for (const s of samples) list.push(s); };
  for (const s of message.attitude) {
    attitude = s;
    series.motionRotation.push([s[0], s[6], s[7], s[8]]);
    probe.delays.push((nowS - s[0]) * 1000);
  }
  push(series.acceleration, message.acceleration);
  push(series.rotation, message.rotation);
  push(series.motionAcceleration, message.motionAcceleration);
  for (const s of message.acceleration) probe.delays.push((nowS - s[0]) * 1000);
  if (probe.delays.length > 2000) probe.delays.splice(0, probe.delays.length - 2000);
  if (message.attitude.length) attitudeDirty = true;
  if (message.attitude.length || message.acceleration.length || message.rotation.length) plotsDirty = true;
  if (message.latest) { Object.assign(latest, message.latest); showLatest(); }
  if (message.events) for (const [t, kind, text] of message.events) {
    const li = el("li", fmtTime(t) + " " + kind + ": " + text);
    $("events").prepend(li);
    while ($("events").children.length > 20) $("events").lastChild.remove();
  }
  if (message.rates) { rates = message.rates; renderStreams(); }
}
function showLatest() {
  const dl = $("motion-values"), items = [];
  const p = latest["pedometer"], a = latest["activity"], alt = latest["altimeter"], abs = latest["altimeter/absolute"], dm = latest["device-motion"];
  if (dm) items.push(["Heading", dm.heading >= 0 ? num(dm.heading, 1) + "°" : "unavailable (no magnetometer frame)"]);
  if (p) { items.push(["Steps", p.steps]); items.push(["Cadence", p.cadence === undefined ? "—" : num(p.cadence, 2) + " steps/s"]);
    items.push(["Distance", p.distance === undefined ? "—" : num(p.distance, 1) + " m"]); }
  if (a) items.push(["Activity", (a.activity || "none") + " (" + a.confidence + " confidence)"]);
  if (alt) { items.push(["Relative altitude", num(alt.relativeAltitude, 2) + " m"]); items.push(["Pressure", num(alt.pressureKPa, 3) + " kPa"]); }
  if (abs) items.push(["Altitude", num(abs.altitude, 1) + " m ± " + num(abs.accuracy, 1)]);
  const m = latest["magnetometer"];
  if (m) items.push(["Magnetic field", num(Math.hypot(m.x, m.y, m.z), 1) + " µT"]);
  // Streams without a view of their own: their latest message's summary (generated text, shown as text).
  for (const [path, value] of Object.entries(latest)) if (value && typeof value.summary === "string") items.push([path, value.summary]);
  dl.replaceChildren(...items.flatMap(([k, v]) => [el("dt", k), el("dd", v)]));
}

// The device as a phone-shaped box turned by the attitude quaternion (device → reference frame, Z up), seen
// from above the reference frame's −Y side; its screen (+Z face) is dark, its top edge (+Y) marked.
const box = { x: 0.5, y: 1.0, z: 0.1 };
const corners = [];
for (const sx of [-1, 1]) for (const sy of [-1, 1]) for (const sz of [-1, 1]) corners.push([sx * box.x / 2, sy * box.y / 2, sz * box.z / 2]);
const faces = [  // corner indices, device-frame normal, colour
  [[1, 3, 7, 5], [0, 0, 1], "#263238"], [[0, 4, 6, 2], [0, 0, -1], "#b0bec5"],
  [[4, 5, 7, 6], [1, 0, 0], "#90a4ae"], [[0, 2, 3, 1], [-1, 0, 0], "#90a4ae"],
  [[2, 6, 7, 3], [0, 1, 0], "#ef9a9a"], [[0, 1, 5, 4], [0, -1, 0], "#78909c"],
];
function rotate(q, v) {
  const [w, x, y, z] = q, [vx, vy, vz] = v;
  const tx = 2 * (y * vz - z * vy), ty = 2 * (z * vx - x * vz), tz = 2 * (x * vy - y * vx);
  return [vx + w * tx + (y * tz - z * ty), vy + w * ty + (z * tx - x * tz), vz + w * tz + (x * ty - y * tx)];
}
function view(v) {  // reference frame → screen: turn 30° about Z, tilt 60° towards the viewer
  const a = -Math.PI / 6, t = Math.PI / 3;
  const x1 = v[0] * Math.cos(a) - v[1] * Math.sin(a), y1 = v[0] * Math.sin(a) + v[1] * Math.cos(a), z1 = v[2];
  return [x1, y1 * Math.cos(t) + z1 * Math.sin(t), -y1 * Math.sin(t) + z1 * Math.cos(t)];
}
function drawAttitude() {
  const canvas = $("attitude"), g = canvas.getContext("2d"), W = canvas.width, H = canvas.height;
  g.clearRect(0, 0, W, H);
  if (!attitude) { g.fillStyle = "#5d6670"; g.fillText("waiting for device-motion…", 10, 20); return; }
  const q = [attitude[1], attitude[2], attitude[3], attitude[4]];
  const scale = Math.min(W, H) * 0.55, cx = W / 2, cy = H / 2 + 10;
  const project = (v) => { const p = view(v); return [cx + p[0] * scale, cy - p[1] * scale, p[2]]; };
  const points = corners.map((c) => project(rotate(q, c)));
  // The reference frame's axes on the floor, for orientation.
  g.lineWidth = 1;
  for (const [axis, colour, label] of [[[0.7, 0, 0], "#d93025", "X"], [[0, 0.7, 0], "#188038", "Y"], [[0, 0, 0.7], "#1a73e8", "Z"]]) {
    const o = project([0, 0, 0]), e = project(axis);
    g.strokeStyle = colour; g.beginPath(); g.moveTo(o[0], o[1]); g.lineTo(e[0], e[1]); g.stroke();
    g.fillStyle = colour; g.fillText(label, e[0] + 3, e[1]);
  }
  const visible = faces.map(([idx, normal, colour]) => {
    const n = view(rotate(q, normal));
    const depth = idx.reduce((s, i) => s + points[i][2], 0) / 4;
    return { idx, colour, n, depth };
  }).filter((f) => f.n[2] > 0).sort((a, b) => a.depth - b.depth);
  for (const f of visible) {
    const light = 0.55 + 0.45 * Math.max(0, f.n[2]);
    g.fillStyle = f.colour; g.globalAlpha = light;
    g.beginPath(); f.idx.forEach((i, k) => (k ? g.lineTo : g.moveTo).call(g, points[i][0], points[i][1])); g.closePath(); g.fill();
    g.globalAlpha = 1; g.strokeStyle = "#37474f"; g.stroke();
  }
  const [, , , , , heading] = attitude;
  const euler = toEuler(q);
  const values = [["Roll", euler.roll], ["Pitch", euler.pitch], ["Yaw", euler.yaw]].flatMap(([k, v]) => [el("dt", k), el("dd", num(v * 180 / Math.PI, 1) + "°")]);
  if (heading >= 0) values.push(el("dt", "Heading"), el("dd", num(heading, 1) + "°"));
  $("attitude-values").replaceChildren(...values);
  probe.attitude = { w: q[0], x: q[1], y: q[2], z: q[3], time: attitude[0], screen: points.map((p) => [Math.round(p[0]), Math.round(p[1])]) };
  probe.attitudeDraws++;
}
function toEuler([w, x, y, z]) {  // Core Motion's roll (about Y), pitch (about X), yaw (about Z)
  return {
    pitch: Math.asin(Math.max(-1, Math.min(1, 2 * (w * x + y * z)))),
    roll: Math.atan2(2 * (w * y - x * z), 1 - 2 * (x * x + y * y)),
    yaw: Math.atan2(2 * (w * z - x * y), 1 - 2 * (x * x + z * z)),
  };
}
function drawPlot(id, list, name) {
  const canvas = $(id), g = canvas.getContext("2d"), W = canvas.width, H = canvas.height;
  g.clearRect(0, 0, W, H);
  const end = list.length ? list[list.length - 1][0] : Date.now() / 1000, start = end - windowSeconds;
  while (list.length && list[0][0] < start) list.shift();
  let peak = 0.1;
  for (const s of list) peak = Math.max(peak, Math.abs(s[1]), Math.abs(s[2]), Math.abs(s[3]));
  peak *= 1.1;
  g.strokeStyle = "#d8dde3"; g.beginPath(); g.moveTo(0, H / 2); g.lineTo(W, H / 2); g.stroke();
  g.fillStyle = "#5d6670"; g.fillText("±" + peak.toPrecision(2), 4, 12); g.fillText("−30 s", 4, H - 4);
  ["#d93025", "#188038", "#1a73e8"].forEach((colour, axis) => {
    g.strokeStyle = colour; g.beginPath();
    list.forEach((s, i) => { const x = (s[0] - start) / windowSeconds * W, y = H / 2 - s[axis + 1] / peak * (H / 2);
      if (i) g.lineTo(x, y); else g.moveTo(x, y); });
    g.stroke();
  });
  const last = list[list.length - 1];
  probe.plots[name] = { points: list.length, last: last ? last.slice(1) : null, first: list.length ? list[0][0] : null, end };
}
function frame() {
  if (watching && !$("device-view").hidden) {
    if (attitudeDirty) { drawAttitude(); attitudeDirty = false; }
    if (plotsDirty) {
      drawPlot("plot-acceleration", series.acceleration.length ? series.acceleration : series.motionAcceleration, "acceleration");
      drawPlot("plot-rotation", series.rotation.length ? series.rotation : series.motionRotation, "rotation");
      plotsDirty = false;
    }
  }
  requestAnimationFrame(frame);
}

// ---- changes ------------------------------------------------------------------------------------------------
function setKeys(list) {
  if (!list || !list.length) return;
  keys = list;
  $("keys").replaceChildren(...keys.map((k) => { const o = document.createElement("option"); o.value = k; return o; }));
}
function showDocuments(documents) {
  $("documents").tBodies[0].replaceChildren(...(documents || []).map((d) => {
    const tr = document.createElement("tr");
    const settings = d.clear ? "(clear: the layer removed)" : Object.keys(d.settings).sort().map((k) => k + " = " + d.settings[k]).join(", ");
    tr.append(el("td", d.topic), el("td", d.layer), el("td", "v" + d.version), el("td", settings));
    return tr;
  }));
}
async function submitEdit(kind) {
  const layer = $("edit-layer").value, name = $("edit-name").value.trim(), key = $("edit-key").value.trim(), value = $("edit-value").value.trim();
  const body = { layer };
  if (layer !== "fleet") body.name = name;
  if (kind === "set") body.set = { [key]: value };
  if (kind === "unset") body.unset = [key];
  if (kind === "clear") body.clear = true;
  $("edit-result").textContent = "publishing…";
  let response, answer;
  try {
    response = await fetch("/api/desired", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body), credentials: "same-origin" });
    const text = await response.text();
    try { answer = JSON.parse(text); } catch (e) { answer = { error: text }; }
  } catch (e) { $("edit-result").textContent = "could not reach the console: " + e; return; }
  if (!response.ok) { $("edit-result").textContent = "refused (" + response.status + "): " + (answer.error || ""); $("edit-result").className = "refused"; return; }
  $("edit-result").className = "applied";
  $("edit-result").textContent = "published " + answer.layer + " v" + answer.version + (answer.signed ? " (signed)" : "") + " on " + answer.topic + ": " + answer.document;
  pendingEdit = { layer: answer.layer, version: answer.version, group: layer === "group" ? name : null, device: layer === "device" ? name : null, published: Date.now() };
  updateConvergence();
}
function inScope(row) {
  if (!pendingEdit) return false;
  if (pendingEdit.group) return (row.groups || []).includes(pendingEdit.group);
  if (pendingEdit.device) return row.device === pendingEdit.device;
  return row.seen;
}
function updateConvergence() {
  if (!pendingEdit) return;
  const scope = [...rows.values()].filter(inScope).sort((a, b) => (a.device < b.device ? -1 : 1));
  let applied = 0, refused = 0, offline = 0;
  const trsOut = scope.map((row) => {
    const version = (row.desired || {})[pendingEdit.layer] || 0;
    const tr = document.createElement("tr");
    let state, detail = "", cls;
    if (version >= pendingEdit.version) { state = "applied"; cls = "applied"; applied++; detail = pendingEdit.layer + " v" + version; }
    else if (row.refused && row.refused.startsWith(pendingEdit.layer + " v" + pendingEdit.version + ":")) { state = "refused"; cls = "refused"; refused++; detail = row.refused; }
    else if (!row.online) { state = "offline"; cls = "pending"; offline++; detail = "gets it when it connects"; }
    else { state = "pending"; cls = "pending"; detail = "runs " + pendingEdit.layer + " v" + version; }
    tr.className = cls; tr.dataset.device = row.device;
    tr.append(el("td", row.device), el("td", state), el("td", detail));
    return tr;
  });
  $("convergence").tBodies[0].replaceChildren(...trsOut);
  const seconds = ((Date.now() - pendingEdit.published) / 1000).toFixed(1);
  $("convergence-summary").textContent = applied + " of " + scope.length + " applied " + pendingEdit.layer + " v" + pendingEdit.version +
    (refused ? ", " + refused + " refused" : "") + (offline ? ", " + offline + " offline" : "") + " (" + seconds + " s after publishing)";
  probe.convergence = { layer: pendingEdit.layer, version: pendingEdit.version, applied, refused, offline, total: scope.length };
}

// ---- routing ------------------------------------------------------------------------------------------------
function route() {
  const hash = location.hash || "#/";
  const device = hash.startsWith("#/device/") ? decodeURIComponent(hash.slice(9)) : null;
  $("fleet-view").hidden = !(hash === "#/" || hash === "#" || hash === "");
  $("device-view").hidden = !device;
  $("change-view").hidden = hash !== "#/change";
  if (device) enterDevice(device); else leaveDevice();
}

document.addEventListener("DOMContentLoaded", () => {
  for (const th of document.querySelectorAll("#fleet .head > span")) th.addEventListener("click", () => {
    const key = th.dataset.sort;
    sortDir = sortKey === key ? -sortDir : 1; sortKey = key;
    for (const other of document.querySelectorAll("#fleet .head > span")) other.className = "";
    th.className = sortDir > 0 ? "sorted-asc" : "sorted-desc";
    reorderNow();
  });
  for (const id of ["group-filter", "text-filter", "problems-only"]) $(id).addEventListener("input", scheduleReorder);
  $("edit-form").addEventListener("submit", (e) => { e.preventDefault(); submitEdit("set"); });
  $("edit-unset").addEventListener("click", () => submitEdit("unset"));
  $("edit-clear").addEventListener("click", () => submitEdit("clear"));
  window.addEventListener("hashchange", route);
  setInterval(() => { if (pendingEdit) updateConvergence(); }, 1000);
  route(); connect(); requestAnimationFrame(frame);
});
