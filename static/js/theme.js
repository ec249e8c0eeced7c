// The light/dark toggle in the top bar, on every page. Without a choice the
// page follows the system (prefers-color-scheme); a choice is kept in this
// browser (localStorage) and set as <html data-theme>.

const root = document.documentElement;
const button = document.getElementById("theme-toggle");
const systemDark = window.matchMedia("(prefers-color-scheme: dark)");

function current() {
  return root.dataset.theme || (systemDark.matches ? "dark" : "light");
}

function label() {
  const dark = current() === "dark";
  button.setAttribute("aria-pressed", String(dark)); // a toggle named "Dark theme"
  button.title = dark ? "Dark theme (on): switch to light" : "Dark theme (off): switch to dark";
}

try {
  const saved = localStorage.getItem("theme");
  if (saved === "dark" || saved === "light") root.dataset.theme = saved;
} catch {
  // Storage refused (private mode): the toggle still works for this page.
}

if (button) {
  label();
  systemDark.addEventListener("change", label);
  button.addEventListener("click", () => {
    root.dataset.theme = current() === "dark" ? "light" : "dark";
    try {
      localStorage.setItem("theme", root.dataset.theme);
    } catch {
      // as above
    }
    label();
  });
}
