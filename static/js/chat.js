// The chat page: asks over the conversation's websocket and shows the events
// as they come (status line, steps, streamed text drawn as Markdown by
// markdown.js); the finished answer, and the intake card, arrive as
// server-rendered, sanitised HTML. Model text is only ever inserted as text
// (textContent, createElement), never as HTML.

import { answerActions, decorateCode } from "./answers.js";
import { el, fragment, post, setStatus, showProgress, url } from "./dom.js";
import { addSidebarItem, renameInSidebar } from "./history.js";
import { LiveMarkdown } from "./markdown.js";
import { attached, clearAttachment, reportForm } from "./upload.js";
import "./drawer.js";
import "./voice.js";

const chat = document.getElementById("chat");
const thread = document.getElementById("thread");
const composer = document.getElementById("composer");
const question = document.getElementById("question");
const sendButton = document.getElementById("send");
const stopButton = document.getElementById("stop");
const retryButton = document.getElementById("retry");

// Refused before any answer was written: the empty turn goes, the question back
// into the composer ("unavailable": the database or Redis is down, nothing was stored).
const REFUSED = new Set(["invalid", "rate_limited", "busy", "not_found", "unavailable"]);
// `pending` is the question on its way; it goes back into the composer on any failure.
const state = {
  id: chat.dataset.conversationId, socket: null, live: null, busy: false, pending: null, stopping: false,
};

// --- tool results -------------------------------------------------------------
// Renderers for tool results by tool name. The search tools need none: their
// steps show counts and the finished answer brings chips and citations. Which
// tools those are comes from copilot/tools.py (`data-search-tools`). The
// intake card comes rendered by the server (copilot/_intake_card.html) in the
// event's `html`; any other tool gets the generic card below.
const SEARCH_TOOLS = new Set((chat.dataset.searchTools || "").split(",").filter(Boolean));
export const toolResultRenderers = {
  incident_intake: (event) => (event.html ? fragment(event.html) : null),
};

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
  state.stopping = state.stopping && busy;
  sendButton.disabled = busy;
  stopButton.hidden = !busy;
  stopButton.disabled = false;
}

// --- the conversation and its socket ----------------------------------------------

async function ensureConversation() {
  if (state.id) return;
  const response = await post(chat.dataset.createUrl);
  if (!response.ok) throw new Error("Could not start a conversation.");
  const created = await response.json();
  state.id = String(created.id);
  chat.dataset.conversationId = state.id;
  history.pushState({}, "", created.url);
  chat.dataset.stopUrl = `${created.url}stop/`;
  addSidebarItem(created.item_html);
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
    if (state.busy) setTimeout(() => connect().catch(() => connectionLost()), 1000);
  });
  return state.opened;
}

// --- asking ------------------------------------------------------------------------

function startTurn(text) {
  document.getElementById("welcome")?.remove();
  // "Successfully signed in" and the like are stale once the chat is in use (on a
  // phone they took a tenth of the screen for good); the Undo banner stays.
  document.querySelector(".thread-pane > ul.messages")?.remove();
  const turn = el("article", "turn");
  turn.dataset.question = text;
  const asked = el("div", "question");
  const edit = el("button", "link edit-question", "Edit");
  edit.type = "button";
  edit.title = "Edit this question and send it again";
  asked.append(edit, el("p", "bubble", text));
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
  return { turn, section, body, markdown: new LiveMarkdown(body), steps: null, calls: {} };
}

// --- failures keep the question ----------------------------------------------------

function keepQuestion(text) {
  state.pending = text;
  retryButton.hidden = true;
}

function questionFailed(reason) {
  // The typed text comes back (unless something new was typed meanwhile), with Retry.
  const what = attached.file ? "report" : "question";
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
  status(event) { showProgress(event.text); },
  token(event, live) { live.markdown.append(event.text, keepScrolled); },
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

async function finishAnswer(event, live) {
  state.live = null;
  state.pending = null;
  const stopping = state.stopping;
  setBusy(false);
  if (stopping) setStatus("The answer was finished before it could stop.");
  else showProgress("");
  const response = await fetch(url(chat.dataset.answerUrl, event.message_id), { credentials: "same-origin" });
  if (!response.ok) {
    live.body.setAttribute("aria-busy", "false");
    return;
  }
  // Server-rendered and sanitised with nh3 (copilot/_answer.html).
  const html = await response.text();
  const answer = fragment(html);
  decorateCode(answer);
  keepScrolled(() => live.section.replaceWith(answer));
}

function failAnswer(event, live, { keepTurn = false } = {}) {
  state.live = null;
  setBusy(false);
  live.body.setAttribute("aria-busy", "false");
  if (event.code === "cancelled") setStatus(event.message);
  else questionFailed(event.message);
  if (REFUSED.has(event.code) && !live.body.textContent && !keepTurn) {
    live.turn.remove();
  } else if (keepTurn) {
    live.section.classList.remove("is-streaming");
    live.body.append(el("p", "error-text", event.message));
  } else {
    live.section.classList.remove("is-streaming");
    live.section.append(el("p", "muted", event.code === "cancelled" ? "Stopped." : "The answer was interrupted."));
  }
}

// --- a report with a screenshot or a voice note: POST /api/incident -------------------

function showAttachment(turn) {
  const bubble = turn.querySelector(".bubble");
  const voice = attached.kind === "voice";
  bubble.append(" ", el("span", "pill", voice ? "voice note" : "screenshot"));
  if (voice) {
    const player = el("audio", "voice-note");
    player.controls = true;
    player.src = URL.createObjectURL(attached.file);
    player.setAttribute("aria-label", "Your voice note");
    bubble.after(player);
  }
}

async function report(text) {
  if (state.busy) return;
  keepQuestion(text.trim());
  setBusy(true);
  try {
    await ensureConversation();
  } catch (error) {
    setBusy(false);
    return questionFailed(error.message);
  }
  const voice = attached.kind === "voice";
  startTurn(text.trim());
  showAttachment(state.live.turn);
  setStatus(voice ? "Transcribing the voice note and looking for similar incidents…"
    : "Reading the screenshot and looking for similar incidents…");
  const response = await post(chat.dataset.intakeUrl, reportForm(state.id, text.trim())).catch(() => null);
  const body = response ? await response.json().catch(() => ({})) : {};
  if (!response?.ok) {
    const message = body.error?.message || "The report could not be sent.";
    // A voice note stays in the thread with the reason (no model server to transcribe it).
    return failAnswer({ message, code: "invalid" }, state.live, { keepTurn: voice });
  }
  clearAttachment();
  finishAnswer({ message_id: body.message_id }, state.live);
}

// --- buttons and forms -------------------------------------------------------------

composer.addEventListener("submit", (e) => {
  e.preventDefault();
  const text = question.value;
  question.value = "";
  grow();
  if (attached.file) report(text);
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

// Stop always answers: "Stopping…" at once, then "Stopped.", or why not.
stopButton.addEventListener("click", async () => {
  state.stopping = true;
  stopButton.disabled = true;
  setStatus("Stopping…");
  const response = await post(chat.dataset.stopUrl).catch(() => null);
  const result = response?.ok ? await response.json().catch(() => null) : null;
  if (!result) {
    stopButton.disabled = false;
    setStatus("Could not reach the server to stop the answer; try again.", true);
  } else if (!result.stopping && state.busy) {
    setStatus("Stopping… the answer is finishing its last step.");
  } else if (!result.stopping) {
    setStatus("Nothing to stop: the answer had already finished.");
  }
});

function edit(text) {
  question.value = text;
  grow();
  question.focus();
  question.setSelectionRange(text.length, text.length);
}

answerActions({ ask, edit });

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
