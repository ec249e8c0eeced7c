// At phone width the top bar's links do not fit in one row: they fold behind
// a "Menu" button (the CSS decides when, so resizing needs no script). Without
// this script the links wrap instead, so every one stays reachable either way.
// Escape, a tap outside the menu, or following a link closes it.

const bar = document.querySelector(".topbar");
const toggle = document.getElementById("nav-toggle");
const nav = document.getElementById("main-nav");

function setOpen(open) {
  bar.classList.toggle("menu-open", open);
  toggle.setAttribute("aria-expanded", String(open));
}

if (toggle && nav) {
  toggle.hidden = false;
  bar.classList.add("has-menu");
  toggle.addEventListener("click", () => setOpen(!bar.classList.contains("menu-open")));
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && bar.classList.contains("menu-open")) {
      setOpen(false);
      toggle.focus();
    }
  });
  document.addEventListener("click", (e) => {
    if (!bar.classList.contains("menu-open") || e.target.closest("#nav-toggle")) return;
    if (!nav.contains(e.target) || e.target.closest("a")) setOpen(false);
  });
}
