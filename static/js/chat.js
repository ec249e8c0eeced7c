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
const csrfToken = chat.querySelector("input[name=csrfmiddlewaretoken]").value;

const REFUSED = new Set(["invalid", "rate_limited", "busy", "not_found"]);
const state = { id: chat.dataset.conversationId, socket: null, live: null, busy: false };

// --- tool results -------------------------------------------------------------
// Renderers for tool results by tool name. The five search tools need none:
// their steps show counts and the finished answer brings chips and citations.
// HOOK: incident intake registers "incident_intake" here to draw its card;
// any other unknown tool gets the generic card below.
const SEARCH_TOOLS = new Set([
  "lookup_incident_by_id", "search_similar_incidents", "get_incidents_by_application",
  "get_recent_incidents", "search_knowledge",
]);
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
  addSidebarItem(created.id, created.url);
}

function addSidebarItem(id, href) {
  const list = document.getElementById("conversations");
  list.querySelector(".empty-history")?.remove();
  list.querySelectorAll("[aria-current]").forEach((a) => a.removeAttribute("aria-current"));
  const item = el("li", "conversation current");
  item.dataset.id = id;
  const link = el("a");
  link.href = href;
  link.setAttribute("aria-current", "page");
  link.append(el("span", "conversation-title", "New conversation"), el("time", "conversation-when", "just now"));
  item.append(link);
  list.prepend(item);
}

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
    if (state.busy) setTimeout(() => connect().catch(() => setStatus("Connection lost; reload the page.", true)), 1000);
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

async function ask(text) {
  text = text.trim();
  if (!text || state.busy) return;
  setBusy(true);
  try {
    await ensureConversation();
    await connect();
  } catch (error) {
    setBusy(false);
    setStatus(error.message || "Could not connect; try again.", true);
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
  const item = document.querySelector(`#conversations [data-id="${id}"] .conversation-title`);
  if (item) item.textContent = title;
  document.title = `${title} · IncidentDesk`;
}

async function finishAnswer(event, live) {
  state.live = null;
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
  setStatus(event.message, event.code !== "cancelled");
  live.body.setAttribute("aria-busy", "false");
  if (REFUSED.has(event.code) && !live.body.textContent) {
    const asked = live.turn.querySelector(".bubble")?.textContent;
    live.turn.remove();
    if (asked && !question.value) question.value = asked;
  } else {
    live.section.classList.remove("is-streaming");
    live.section.append(el("p", "muted", event.code === "cancelled" ? "Stopped." : "The answer was interrupted."));
  }
}

// --- buttons and forms -------------------------------------------------------------

composer.addEventListener("submit", (e) => {
  e.preventDefault();
  const text = question.value;
  question.value = "";
  grow();
  ask(text);
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
