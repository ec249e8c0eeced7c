// What the finished answers offer: the example questions, the filter chips
// (re-run with a chip changed or removed), the thumbs with a comment, copy
// (answer and code blocks), regenerate, and edit-and-resend the last question.
// `ask` sends a question; `edit` puts one back into the composer.

import { el, post } from "./dom.js";

const thread = document.getElementById("thread");

export function answerActions({ ask, edit }) {
  decorateCode(thread);
  thread.addEventListener("click", (e) => {
    const example = e.target.closest(".example");
    if (example) ask(example.textContent);
    const copy = e.target.closest(".copy-answer, .copy-code");
    if (copy) copyFrom(copy);
    const again = e.target.closest(".regenerate");
    if (again) ask(again.closest(".turn").dataset.question || "");
    const editing = e.target.closest(".edit-question");
    if (editing) edit(editing.closest(".turn").dataset.question || "");
    showSource(e.target.closest(".source-toggle"));
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
}

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

function showSource(toggle) {
  // Tap (or click) a citation's "i" for its title and snippet; hover and focus show it too.
  thread.querySelectorAll(".source.open").forEach((item) => {
    if (item !== toggle?.parentElement) {
      item.classList.remove("open");
      item.querySelector(".source-toggle").setAttribute("aria-expanded", "false");
    }
  });
  if (!toggle) return;
  const open = toggle.parentElement.classList.toggle("open");
  toggle.setAttribute("aria-expanded", String(open));
}

// --- copy --------------------------------------------------------------------------

export function decorateCode(root) {
  // A copy button on each code block of a finished answer (once).
  root.querySelectorAll(".answer-body pre").forEach((pre) => {
    if (pre.parentElement.classList.contains("code-block")) return;
    const wrapper = el("div", "code-block");
    const button = el("button", "small secondary copy-code", "Copy");
    button.type = "button";
    button.setAttribute("aria-label", "Copy the code");
    pre.before(wrapper);
    wrapper.append(button, pre);
  });
}

function answerText(body) {
  // The answer's text without the code blocks' own Copy buttons.
  const clone = body.cloneNode(true);
  clone.querySelectorAll(".copy-code").forEach((button) => button.remove());
  return clone.textContent.replace(/\n{3,}/g, "\n\n");
}

async function copyFrom(button) {
  const text = button.classList.contains("copy-code")
    ? button.parentElement.querySelector("pre").innerText
    : answerText(button.closest(".answer").querySelector(".answer-body"));
  const label = "Copy";
  try {
    await navigator.clipboard.writeText(text.trim());
    button.textContent = "Copied";
  } catch {
    button.textContent = "Copy failed";
  }
  setTimeout(() => { button.textContent = label; }, 2000);
}
