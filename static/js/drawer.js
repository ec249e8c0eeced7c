// On a phone the history sidebar is a drawer over the thread: the "History"
// button opens it; Escape, a tap outside it, or choosing a conversation closes it.

const chat = document.getElementById("chat");
const toggle = document.getElementById("history-toggle");
const sidebar = document.getElementById("sidebar");

function setOpen(open) {
  chat.classList.toggle("drawer-open", open);
  toggle.setAttribute("aria-expanded", String(open));
  if (open) sidebar.querySelector("a, input, button")?.focus();
}

toggle.addEventListener("click", () => setOpen(!chat.classList.contains("drawer-open")));
document.addEventListener("keydown", (e) => {
  if (e.key === "Escape" && chat.classList.contains("drawer-open")) {
    setOpen(false);
    toggle.focus();
  }
});
document.addEventListener("click", (e) => {
  if (!chat.classList.contains("drawer-open")) return;
  if (e.target.closest("#history-toggle")) return;
  if (!sidebar.contains(e.target) || e.target.closest(".conversation > a")) setOpen(false);
});
