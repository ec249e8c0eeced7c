// The history sidebar: search over titles and messages, delete with
// confirmation, and the entries the page adds or renames while it is open.
// Every entry and list is rendered by the server (escaped).

import { fragment } from "./dom.js";

const historyList = document.getElementById("conversations");
const historySearch = document.getElementById("conversation-search");
const confirmDelete = document.getElementById("confirm-delete");
let searchTimer = null;

export function addSidebarItem(html) {
  // Server-rendered (copilot/_conversation_item.html), with its ⋯ menu.
  historyList.querySelector(".empty-history")?.remove();
  historyList.querySelectorAll(".current").forEach((li) => li.classList.remove("current"));
  historyList.querySelectorAll("[aria-current]").forEach((a) => a.removeAttribute("aria-current"));
  historyList.prepend(fragment(html));
}

export function renameInSidebar(id, title) {
  const entry = historyList.querySelector(`[data-id="${id}"]`);
  if (entry) {
    entry.querySelector(".conversation-title").textContent = title;
    entry.querySelector("form.delete").dataset.title = title;
    entry.querySelector(".rename input[name=title]").value = title;
  }
  document.title = `${title} · IncidentDesk`;
}

async function searchHistory() {
  const params = new URLSearchParams({
    q: historySearch.elements.q.value,
    current: document.getElementById("chat").dataset.conversationId || "",
    next: location.pathname,
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
