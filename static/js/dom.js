// Small DOM helpers shared by the chat modules. Text is only ever inserted as
// text; `fragment` is for HTML rendered (and escaped or sanitised) by our server.

const chat = document.getElementById("chat");
const statusLine = document.getElementById("status");
const csrfToken = chat?.querySelector("input[name=csrfmiddlewaretoken]")?.value || "";

export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export function fragment(serverHtml) {
  const holder = document.createElement("template");
  holder.innerHTML = serverHtml.trim();
  return holder.content;
}

export function url(template, id) {
  return template.replace("/0/", `/${id}/`);
}

export function post(target, body) {
  return fetch(target, {
    method: "POST",
    headers: { "X-CSRFToken": csrfToken, Accept: "application/json" },
    body,
    credentials: "same-origin",
  });
}

// --- the status line ------------------------------------------------------------------
// `setStatus` shows a line at once (errors, the page's own notes). The copilot's
// progress lines (`showProgress`) can come faster than anyone reads them (an
// offline answer takes a few hundred ms), so each stays until the next one and
// for at least PROGRESS_DWELL_MS; the end of an answer (`showProgress("")`)
// waits its turn too.
const PROGRESS_DWELL_MS = 900;
const progress = { queue: [], shownAt: 0, timer: null };

function show(text, isError) {
  statusLine.textContent = text;
  statusLine.classList.toggle("error", isError);
}

export function setStatus(text, isError = false) {
  progress.queue.length = 0;
  clearTimeout(progress.timer);
  progress.timer = null;
  show(text, isError);
}

export function showProgress(text) {
  progress.queue.push(text);
  pump();
}

function pump() {
  if (progress.timer || !progress.queue.length) return;
  const wait = progress.shownAt + PROGRESS_DWELL_MS - Date.now();
  if (wait > 0) {
    progress.timer = setTimeout(() => {
      progress.timer = null;
      pump();
    }, wait);
    return;
  }
  // At once when the last line has had its time: before any text that follows it.
  show(progress.queue.shift(), false);
  progress.shownAt = Date.now();
  pump();
}
