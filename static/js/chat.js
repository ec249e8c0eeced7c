// The chat page: asks over the conversation's websocket and shows the events
// as they come (status line, steps, streamed text); the finished answer is
// fetched as server-rendered, sanitised HTML. Model text is only ever
// inserted as text here, never as HTML.

const chat = document.getElementById("chat");
const thread = document.getElementById("thread");
const statusLine = document.getElementById("status");
const composer = document.getElementById("composer");
const question = document.getElementById("question");
const sendButton = document.getElementById("send");
const stopButton = document.getElementById("stop");
const retryButton = document.getElementById("retry");
const csrfToken = chat.querySelector("input[name=csrfmiddlewaretoken]").value;

const REFUSED = new Set(["invalid", "rate_limited", "busy", "not_found"]);
// `pending` is the question on its way; it goes back into the composer on any failure.
const state = { id: chat.dataset.conversationId, socket: null, live: null, busy: false, pending: null };

// --- tool results -------------------------------------------------------------
// Renderers for tool results by tool name. The search tools need none: their
// steps show counts and the finished answer brings chips and citations. Which
// tools those are comes from copilot/tools.py (`data-search-tools`).
// HOOK: incident intake registers "incident_intake" here to draw its card;
// any other unknown tool gets the generic card below.
const SEARCH_TOOLS = new Set((chat.dataset.searchTools || "").split(",").filter(Boolean));
export const toolResultRenderers = {};

function renderToolResult(event, live) {
  if (SEARCH_TOOLS.has(event.name)) return;
  const render = toolResultRenderers[event.name] || genericToolCard;
  const card = render(event);
  if (card) live.section.insertBefore(card, live.body);
}

function genericToolCard(event) {
  const card = el("details", "tool-card");
  card.append(el("summary", "", `${event.name}: ${event.count} result${event.count === 1 ? "" : "s"}`));
  card.append(el("pre", "", JSON.stringify(event.data, null, 2)));
  return card;
}

// --- small helpers ----------------------------------------------------------------

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function url(template, id) {
  return template.replace("/0/", `/${id}/`);
}

function post(target, body) {
  return fetch(target, {
    method: "POST",
    headers: { "X-CSRFToken": csrfToken, Accept: "application/json" },
    body,
    credentials: "same-origin",
  });
}

function setStatus(text, isError = false) {
  statusLine.textContent = text;
  statusLine.classList.toggle("error", isError);
}

function nearBottom() {
  return thread.scrollHeight - thread.scrollTop - thread.clientHeight < 120;
}

function keepScrolled(action) {
  const stick = nearBottom();
  action();
  if (stick) thread.scrollTop = thread.scrollHeight;
}

function setBusy(busy) {
  state.busy = busy;
  sendButton.disabled = busy;
  stopButton.hidden = !busy;
}

// --- the conversation and its socket ----------------------------------------------

async function ensureConversation() {
  if (state.id) return;
  const response = await post(chat.dataset.createUrl);
  if (!response.ok) throw new Error("Could not start a conversation.");
  const created = await response.json();
  state.id = String(created.id);
  history.pushState({}, "", created.url);
  chat.dataset.stopUrl = `${created.url}stop/`;
  addSidebarItem(created.item_html);
}

function addSidebarItem(html) {
  // Server-rendered (copilot/_conversation_item.html, escaped), with its ⋯ menu.
  const list = document.getElementById("conversations");
  list.querySelector(".empty-history")?.remove();
  list.querySelectorAll(".current").forEach((li) => li.classList.remove("current"));
  list.querySelectorAll("[aria-current]").forEach((a) => a.removeAttribute("aria-current"));
  const holder = document.createElement("template");
  holder.innerHTML = html.trim();
  list.prepend(holder.content);
}

// --- the history sidebar: search, and delete with confirmation ------------------------

const historyList = document.getElementById("conversations");
const historySearch = document.getElementById("conversation-search");
const confirmDelete = document.getElementById("confirm-delete");
let searchTimer = null;

async function searchHistory() {
  const params = new URLSearchParams({
    q: historySearch.elements.q.value, current: state.id || "", next: location.pathname,
  });
  const response = await fetch(`${historySearch.dataset.searchUrl}?${params}`, { credentials: "same-origin" });
  if (response.ok) historyList.innerHTML = await response.text(); // server-rendered, escaped
}

historySearch.elements.q.addEventListener("input", () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(searchHistory, 200);
});
historySearch.addEventListener("submit", (e) => {
  e.preventDefault();
  clearTimeout(searchTimer);
  searchHistory();
});

historyList.addEventListener("submit", (e) => {
  const form = e.target;
  if (!form.classList.contains("delete")) return;
  e.preventDefault();
  confirmDelete.querySelector(".confirm-name").textContent = `“${form.dataset.title}”`;
  confirmDelete.addEventListener("close", () => {
    if (confirmDelete.returnValue === "delete") form.submit();
  }, { once: true });
  confirmDelete.returnValue = "";
  confirmDelete.showModal();
});

function connect() {
  if (state.socket && state.socket.readyState <= WebSocket.OPEN) return state.opened;
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const socket = new WebSocket(`${scheme}://${location.host}${chat.dataset.wsPath}${state.id}/`);
  state.socket = socket;
  state.opened = new Promise((resolve, reject) => {
    socket.addEventListener("open", resolve, { once: true });
    socket.addEventListener("error", reject, { once: true });
  });
  socket.addEventListener("message", (message) => handle(JSON.parse(message.data)));
  socket.addEventListener("close", () => {
    if (state.socket !== socket) return;
    state.socket = null;
    if (state.busy) setTimeout(() => connect().catch(() => connectionLost()), 1000);
  });
  return state.opened;
}

// --- asking ------------------------------------------------------------------------

function startTurn(text) {
  document.getElementById("welcome")?.remove();
  const turn = el("article", "turn");
  const asked = el("div", "question");
  asked.append(el("p", "bubble", text));
  turn.append(asked);
  thread.append(turn);
  state.live = liveAnswer(turn);
  thread.scrollTop = thread.scrollHeight;
}

function liveAnswer(turn, section) {
  if (!section) {
    section = el("section", "answer is-streaming");
    section.setAttribute("aria-label", "Answer");
    section.append(el("div", "answer-body streaming"));
    turn.append(section);
  }
  const body = section.querySelector(".answer-body");
  body.setAttribute("aria-live", "polite");
  body.setAttribute("aria-busy", "true");
  return { turn, section, body, steps: null, calls: {} };
}

// --- failures keep the question ----------------------------------------------------

function keepQuestion(text) {
  state.pending = text;
  retryButton.hidden = true;
}

function questionFailed(reason) {
  // The typed text comes back (unless something new was typed meanwhile), with Retry.
  const what = screenshot.file ? "report" : "question";
  setStatus(`${reason} Your ${what} is kept; press Retry.`, true);
  if (state.pending && !question.value.trim()) {
    question.value = state.pending;
    grow();
  }
  state.pending = null;
  retryButton.hidden = false;
}

function connectionLost() {
  if (state.live) {
    state.live.section.classList.remove("is-streaming");
    state.live.body.setAttribute("aria-busy", "false");
    state.live.section.append(el("p", "muted", "The answer was interrupted."));
  }
  state.live = null;
  setBusy(false);
  questionFailed("Connection lost.");
}

retryButton.addEventListener("click", () => {
  retryButton.hidden = true;
  composer.requestSubmit();
});

async function ask(text) {
  text = text.trim();
  if (!text || state.busy) return;
  keepQuestion(text);
  setBusy(true);
  try {
    await ensureConversation();
    await connect();
  } catch (error) {
    setBusy(false);
    const reason = error instanceof Error ? error.message : "Could not connect.";
    questionFailed(reason);
    return;
  }
  startTurn(text);
  setStatus("Sending…");
  state.socket.send(JSON.stringify({ type: "ask", text }));
}

// --- events --------------------------------------------------------------------------

const handlers = {
  status(event) { setStatus(event.text); },
  token(event, live) { keepScrolled(() => live.body.append(event.text)); },
  tool_call(event, live) { addStep(event, live); },
  tool_result(event, live) { finishStep(event, live); renderToolResult(event, live); },
  title(event) { renameInSidebar(event.conversation_id, event.title); },
  done(event, live) { finishAnswer(event, live); },
  error(event, live) { failAnswer(event, live); },
};

function handle(event) {
  if (!state.live && event.type !== "title") {
    // An answer started elsewhere (another tab) in this conversation.
    const turn = el("article", "turn");
    thread.append(turn);
    state.live = liveAnswer(turn);
    setBusy(true);
  }
  handlers[event.type]?.(event, state.live);
}

function addStep(event, live) {
  if (!live.steps) {
    const details = el("details", "steps");
    details.open = true;
    details.append(el("summary", "", "Steps"), el("ol", "timeline"));
    live.section.prepend(details);
    live.steps = details.querySelector("ol");
  }
  const item = el("li");
  const args = Object.entries(event.arguments || {}).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ");
  item.append(el("code", "tool", event.name), " ", el("span", "args", args), " ", el("span", "meta", "running…"));
  live.calls[event.call_id] = item;
  live.steps.append(item);
}

function finishStep(event, live) {
  const meta = live.calls[event.call_id]?.querySelector(".meta");
  if (!meta) return;
  meta.textContent = event.error
    ? `${event.error} · ${event.latency_ms} ms`
    : `${event.count} result${event.count === 1 ? "" : "s"} · ${event.latency_ms} ms`;
  meta.classList.toggle("error-text", Boolean(event.error));
}

function renameInSidebar(id, title) {
  const entry = document.querySelector(`#conversations [data-id="${id}"]`);
  if (entry) {
    entry.querySelector(".conversation-title").textContent = title;
    entry.querySelector("form.delete").dataset.title = title;
    entry.querySelector(".rename input[name=title]").value = title;
  }
  document.title = `${title} · IncidentDesk`;
}

async function finishAnswer(event, live) {
  state.live = null;
  state.pending = null;
  setBusy(false);
  setStatus("");
  const response = await fetch(url(chat.dataset.answerUrl, event.message_id), { credentials: "same-origin" });
  if (!response.ok) {
    live.body.setAttribute("aria-busy", "false");
    return;
  }
  // Server-rendered and sanitised with nh3 (copilot/_answer.html).
  const html = await response.text();
  const holder = document.createElement("template");
  holder.innerHTML = html.trim();
  keepScrolled(() => live.section.replaceWith(holder.content));
}

function failAnswer(event, live) {
  state.live = null;
  setBusy(false);
  live.body.setAttribute("aria-busy", "false");
  if (event.code === "cancelled") setStatus(event.message);
  else questionFailed(event.message);
  if (REFUSED.has(event.code) && !live.body.textContent) {
    live.turn.remove();
  } else {
    live.section.classList.remove("is-streaming");
    live.section.append(el("p", "muted", event.code === "cancelled" ? "Stopped." : "The answer was interrupted."));
  }
}

// --- incident intake: the card and the screenshot upload --------------------------------
// The card is drawn from the incident_intake tool result while the answer is live;
// the finished answer brings the same card rendered by the server
// (copilot/_intake_card.html). Everything is inserted as text.

const KNOWN_SOURCE = /^(INC|KB)-/i;

toolResultRenderers.incident_intake = (event) => intakeCard(event.data);

function sourceLink(id, className = "id") {
  if (!KNOWN_SOURCE.test(id)) return el("span", "source", id);
  const link = el("a", className, id);
  link.href = /^INC-/i.test(id) ? `/incidents/${id}/` : `/knowledge/${id}/`;
  return link;
}

function panel(title, items, renderItem) {
  const box = el("div", "intake-panel");
  box.append(el("h4", "", title));
  const list = el("ol", "intake-list");
  items.forEach((item) => {
    const li = el("li");
    li.append(...renderItem(item));
    list.append(li);
  });
  box.append(list);
  return box;
}

function severityPill(incident) {
  return el("span", `pill sev sev-${String(incident.severity).toLowerCase()}`, incident.severity);
}

function titlePanel(incident) {
  const box = el("div", "intake-panel");
  const heading = el("h3", "", `${incident.title} `);
  heading.append(severityPill(incident));
  box.append(heading);
  return box;
}

function fieldsPanel(incident) {
  const box = el("div", "intake-panel intake-fields");
  const heading = el("h3", "", `${incident.title} `);
  heading.append(severityPill(incident));
  const list = el("dl", "fields");
  const rows = [
    ["Service", incident.service || "unknown"],
    ["Severity", `${incident.severity} · ${incident.severity_reason}`],
    ["Impact", incident.impact],
    ["Components", (incident.components || []).join(", ") || "unknown"],
    ["Tags", (incident.tags || []).join(", ") || "–"],
  ];
  rows.forEach(([name, value]) => list.append(el("dt", "", name), el("dd", "", value)));
  const recorded = el("dd");
  recorded.append(sourceLink(incident.incident_id));
  list.append(el("dt", "", "Recorded as"), recorded);
  box.append(heading, list);
  return box;
}

function ticketPanel(data) {
  const box = el("div", "intake-panel intake-ticket");
  const proposal = data.ticket_proposal || {};
  if (data.ticket) {
    const link = el("a", "id", data.ticket.key);
    link.href = data.ticket.url;
    box.append(el("strong", "", "Ticket "), link, " ", el("span", "pill", data.ticket.status));
  } else if (data.ticket_error) {
    box.append(el("span", "error-text", data.ticket_error));
  } else if (proposal.action === "comment") {
    box.append(el("strong", "", "Possible duplicate "), proposal.ticket_key,
      " — reply “yes” to comment on it, or “create a new ticket”.");
  } else if (proposal.action === "create") {
    box.append(el("strong", "", "No ticket yet"), " — reply “yes, file it” to file one.");
  }
  return box;
}

function stepsPanel(steps) {
  const details = el("details", "steps intake-steps");
  details.append(el("summary", "", `${steps.length} step${steps.length === 1 ? "" : "s"}`));
  const list = el("ol", "timeline");
  steps.forEach((step) => {
    const li = el("li");
    const meta = el("span", "meta", `${step.error || step.outcome} · ${step.ms} ms`);
    meta.classList.toggle("error-text", Boolean(step.error));
    li.append(el("code", "tool", step.name), " ", meta);
    list.append(li);
  });
  details.append(list);
  return details;
}

function intakeCard(data) {
  const card = el("section", "intake-card");
  card.setAttribute("aria-label", "Incident report");
  const isReport = Boolean(data.similar_incidents?.length || data.actions?.length);
  if (data.incident?.title && isReport) card.append(fieldsPanel(data.incident));
  else if (data.incident?.title) card.append(titlePanel(data.incident));
  if (data.kind === "new_incident" && data.description) {
    const details = el("details", "intake-panel intake-description");
    details.append(el("summary", "", "Normalised description"), el("p", "", data.description));
    card.append(details);
  }
  if (data.similar_incidents?.length) {
    card.append(panel("Similar incidents", data.similar_incidents, (item) => [
      sourceLink(item.incident_id), ` ${item.title} `,
      el("span", "muted", `· ${item.impacted_application} · ${item.match}`),
    ]));
  }
  if (data.actions?.length) {
    const owner = data.owner_team ? ` · owner: ${data.owner_team}` : "";
    card.append(panel(`Proposed actions${owner}`, data.actions, (a) => [`${a.text} `, sourceLink(a.source, "source")]));
  }
  card.append(ticketPanel(data));
  if (data.decisions?.length) {
    card.append(panel("Decision ledger", data.decisions, (d) => [
      `${d.kind === "action" ? "Action" : "Decision"}: ${d.what} `,
      el("span", "muted", `· ${d.who} · ${d.decided_at.slice(0, 16).replace("T", " ")} UTC · message #${d.source_message_id}`),
    ]));
  }
  if (data.steps?.length) card.append(stepsPanel(data.steps));
  return card;
}

// A screenshot is checked here (type by its first bytes, size) and again by the
// server, then sent with the text to POST /api/incident; the stored answer is then
// fetched like any other.
const screenshot = { input: document.getElementById("screenshot"), file: null };
const attachment = document.getElementById("attachment");
const PNG = [0x89, 0x50, 0x4e, 0x47];
const JPEG = [0xff, 0xd8, 0xff];

async function screenshotProblem(file) {
  const limit = Number(chat.dataset.maxImageBytes);
  if (file.size > limit) {
    return `The screenshot is ${(file.size / 1048576).toFixed(1)} MB; the limit is ${(limit / 1048576).toFixed(1)} MB.`;
  }
  const head = new Uint8Array(await file.slice(0, 4).arrayBuffer());
  const starts = (magic) => magic.every((byte, i) => head[i] === byte);
  return starts(PNG) || starts(JPEG) ? "" : "The screenshot must be a PNG or JPEG image.";
}

function clearScreenshot() {
  screenshot.file = null;
  screenshot.input.value = "";
  attachment.hidden = true;
  question.required = true;
}

screenshot.input.addEventListener("change", async () => {
  const file = screenshot.input.files[0];
  if (!file) return clearScreenshot();
  const problem = await screenshotProblem(file);
  if (problem) {
    clearScreenshot();
    return setStatus(problem, true);
  }
  screenshot.file = file;
  attachment.querySelector(".attachment-name").textContent = `Screenshot: ${file.name}`;
  attachment.hidden = false;
  question.required = false; // a screenshot alone is a report
  setStatus("");
});
attachment.querySelector(".attachment-remove").addEventListener("click", clearScreenshot);

async function report(text, file) {
  if (state.busy) return;
  keepQuestion(text.trim());
  setBusy(true);
  try {
    await ensureConversation();
  } catch (error) {
    setBusy(false);
    return questionFailed(error.message);
  }
  startTurn(text.trim());
  state.live.turn.querySelector(".bubble").append(" ", el("span", "pill", "screenshot"));
  setStatus("Reading the screenshot and looking for similar incidents…");
  const form = new FormData();
  form.set("conversation_id", state.id);
  form.set("text", text.trim());
  form.set("image", file);
  const response = await post(chat.dataset.intakeUrl, form).catch(() => null);
  const body = response ? await response.json().catch(() => ({})) : {};
  if (!response?.ok) {
    return failAnswer({ message: body.error?.message || "The report could not be sent.", code: "invalid" }, state.live);
  }
  clearScreenshot();
  finishAnswer({ message_id: body.message_id }, state.live);
}

// --- buttons and forms -------------------------------------------------------------

composer.addEventListener("submit", (e) => {
  e.preventDefault();
  const text = question.value;
  question.value = "";
  grow();
  if (screenshot.file) report(text, screenshot.file);
  else ask(text);
});

function grow() {
  question.style.height = "auto";
  question.style.height = `${Math.min(question.scrollHeight, 240)}px`;
}
question.addEventListener("input", grow);
question.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    composer.requestSubmit();
  }
});

stopButton.addEventListener("click", async () => {
  setStatus("Stopping…");
  await post(chat.dataset.stopUrl);
});

thread.addEventListener("click", (e) => {
  const example = e.target.closest(".example");
  if (example) ask(example.textContent);
  const remove = e.target.closest(".chip-remove");
  if (remove) {
    const form = remove.closest("form");
    remove.closest(".chip").remove();
    form.querySelector("button[type=submit]").focus();
  }
});

thread.addEventListener("submit", (e) => {
  const form = e.target;
  if (form.classList.contains("filters")) {
    e.preventDefault();
    ask(rerunQuestion(form));
  } else if (form.classList.contains("feedback")) {
    e.preventDefault();
    sendFeedback(form, e.submitter);
  }
});

function rerunQuestion(form) {
  // The copilot reads filters from the words, so a changed chip is a changed phrase.
  const phrases = [...form.querySelectorAll(".chip")].map((chip) => {
    const value = chip.querySelector("input").value.trim();
    return value ? chip.dataset.phrase.replace("{}", value) : "";
  });
  return [form.dataset.base, ...phrases].filter(Boolean).join(" ");
}

async function sendFeedback(form, submitter) {
  const data = new FormData(form);
  data.set("feedback", submitter?.value || "");
  const response = await post(form.action, data);
  const result = await response.json();
  const note = form.querySelector(".feedback-state");
  if (!response.ok) {
    note.textContent = result.error;
    return;
  }
  form.querySelectorAll(".thumb").forEach((b) => b.setAttribute("aria-pressed", String(b.value === result.feedback)));
  form.querySelector(".save-comment").value = result.feedback || "down";
  note.textContent = "Thanks for the feedback.";
  if (result.feedback === "down" && !result.comment) {
    const comment = form.querySelector(".comment");
    comment.open = true;
    comment.querySelector("textarea").focus();
  }
}

// --- a reload in the middle of an answer ---------------------------------------------

const streaming = thread.querySelector(".answer.is-streaming");
if (streaming && state.id) {
  state.live = liveAnswer(streaming.closest(".turn"), streaming);
  setBusy(true);
  setStatus("Still answering…");
  connect()
    .then(() => catchUp(streaming.dataset.messageId))
    .catch(() => setStatus("Could not reconnect; reload the page.", true));
}

async function catchUp(messageId) {
  // The answer may have finished between rendering this page and joining its group.
  if (!messageId) return;
  const response = await fetch(url(chat.dataset.answerUrl, messageId), { credentials: "same-origin" });
  const html = response.ok ? await response.text() : "";
  if (html && !html.includes("is-streaming") && state.live) {
    finishAnswer({ message_id: messageId }, state.live);
  }
}
thread.scrollTop = thread.scrollHeight;
question.focus();
