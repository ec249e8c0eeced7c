// Markdown while an answer streams. The text is the model's (untrusted), so it
// is only ever inserted with createElement and textContent, never as HTML: a
// `<script>` or an `onerror=` in it is shown as the characters it is. It
// covers what answers use (paragraphs, headings, bold, italics, lists, block
// quotes, code, GFM tables, incident and document ids, links to pages of this site); an
// external link stays text until `done` brings the server's sanitised HTML
// (incidentdesk/richtext.py), which replaces all of this.

import { el } from "./dom.js";

const FENCE = /^\s*```/;
const HEADING = /^(#{1,6})\s+(.*)$/;
const RULE = /^\s*(?:-\s*){3,}$|^\s*(?:\*\s*){3,}$/;
const QUOTE = /^\s*>\s?(.*)$/;
const ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const DELIMITER_CELL = /^\s*:?-+:?\s*$/;
const DASH = "\\s*[-\\u2010-\\u2015\\u2212\\ufe58\\ufe63\\uff0d\\u00ad]\\s*";
const INLINE = new RegExp([
  "`([^`\\n]+)`", // 1: code
  "\\*\\*(?=\\S)([\\s\\S]+?)\\*\\*", // 2: bold (answers use **; `__` is too often in names)
  "\\*(?=[^\\s*])([^*\\n]+?)\\*", // 3: italics
  "\\[([^\\]\\n]+)\\]\\(([^)\\s]+)\\)", // 4, 5: a link
  `\\b(INC${DASH}\\d{4}${DASH}\\d{2}${DASH}\\d{2}${DASH}\\d{3,})\\b`, // 6: an incident id
  `\\b(KB${DASH}[A-Z]{2}${DASH}\\d{3,})\\b`, // 7: a document id
].join("|"), "gi");

const chat = document.getElementById("chat");

// One streaming answer: its text so far, drawn at most once a frame.
export class LiveMarkdown {
  constructor(body) {
    this.body = body;
    this.text = body.textContent; // a reload mid-answer: the part already written
    this.frame = 0;
    body.classList.add("md-live");
    renderMarkdown(body, this.text);
  }

  append(text, around = (draw) => draw()) {
    this.text += text;
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      around(() => renderMarkdown(this.body, this.text));
    });
  }
}

export function renderMarkdown(target, text) {
  const out = document.createDocumentFragment();
  const lines = text.split("\n");
  const open = { current: null, lists: [] }; // the block still taking lines, the open lists
  for (let i = 0; i < lines.length; i++) {
    if (FENCE.test(lines[i])) {
      endBlock(open, true);
      i = codeBlock(lines, i, out);
    } else if (isTableStart(lines, i)) {
      endBlock(open, true);
      i = table(lines, i, out);
    } else {
      addLine(lines[i], open, out);
    }
  }
  endBlock(open, true);
  target.replaceChildren(out);
}

function addLine(line, open, out) {
  const heading = line.match(HEADING);
  const item = line.match(ITEM);
  const quote = line.match(QUOTE);
  const startsBlock = heading || RULE.test(line) || (quote && open.current?.kind !== "quote");
  if (!line.trim() || startsBlock) endBlock(open, true);
  if (!line.trim()) return;
  if (heading) return out.append(inline(heading[2], el(`h${heading[1].length}`)));
  if (RULE.test(line)) return out.append(el("hr"));
  if (item) {
    endBlock(open, false);
    open.current = { kind: "item", node: listItem(item, open.lists, out), lines: [item[3]] };
  } else if (quote && !open.current) {
    const block = el("blockquote");
    out.append(block);
    open.current = { kind: "quote", node: block.appendChild(el("p")), lines: [quote[1]] };
  } else if (open.current) {
    open.current.lines.push(quote && open.current.kind === "quote" ? quote[1] : line.trim());
  } else {
    open.current = { kind: "paragraph", node: out.appendChild(el("p")), lines: [line] };
  }
}

function endBlock(open, closeLists) {
  if (open.current) inline(open.current.lines.join("\n"), open.current.node);
  open.current = null;
  if (closeLists) open.lists.length = 0;
}

function codeBlock(lines, start, out) {
  // Until the closing fence, or the end of the text while the fence is still streaming.
  let end = start + 1;
  while (end < lines.length && !FENCE.test(lines[end])) end++;
  const pre = el("pre");
  pre.append(el("code", "", lines.slice(start + 1, end).join("\n")));
  out.append(pre);
  return end;
}

// A GFM table: a header row, then a delimiter row with as many cells (`| --- | :-: |`).
// Until the delimiter row has arrived the header is drawn as the paragraph it may be.
function isTableStart(lines, i) {
  if (i + 1 >= lines.length || !lines[i].includes("|") || !lines[i + 1].includes("|")) {
    return false;
  }
  const header = cells(lines[i]);
  const delimiter = cells(lines[i + 1]);
  return (
    header.length > 0 &&
    delimiter.length === header.length &&
    delimiter.every((c) => DELIMITER_CELL.test(c))
  );
}

function table(lines, start, out) {
  // Body rows run to a blank line, a fence or the end of the text (a row still
  // streaming is drawn with the cells it has so far).
  const width = cells(lines[start]).length;
  const node = el("table");
  node.append(el("thead"));
  node.tHead.append(row(cells(lines[start]), "th", width));
  const body = el("tbody");
  let end = start + 2;
  for (; end < lines.length && lines[end].trim() && !FENCE.test(lines[end]); end++) {
    body.append(row(cells(lines[end]), "td", width));
  }
  if (body.rows.length) node.append(body);
  out.append(node);
  return end - 1;
}

function row(texts, tag, width) {
  // GFM: missing cells are empty, extra ones are dropped.
  const tr = el("tr");
  for (let c = 0; c < width; c++) tr.append(inline(texts[c] ?? "", el(tag)));
  return tr;
}

function cells(line) {
  // Split on unescaped pipes outside code spans (as the server's Markdown does);
  // the outer pipes are optional.
  const found = [];
  let cell = "";
  let code = false;
  for (let c = 0; c < line.length; c++) {
    const ch = line[c];
    if (ch === "\\" && line[c + 1] === "|") {
      cell += "|";
      c++;
    } else if (ch === "`") {
      code = !code;
      cell += ch;
    } else if (ch === "|" && !code) {
      found.push(cell);
      cell = "";
    } else {
      cell += ch;
    }
  }
  found.push(cell);
  const trimmed = line.trim();
  if (trimmed.startsWith("|")) found.shift();
  if (trimmed.endsWith("|") && !trimmed.endsWith("\\|") && found.length) found.pop();
  return found.map((c) => c.trim());
}

function listItem(match, lists, out) {
  const indent = match[1].length;
  const tag = /\d/.test(match[2]) ? "ol" : "ul";
  while (lists.length > 1 && indent < lists.at(-1).indent) lists.pop();
  const top = lists.at(-1);
  if (!top || indent > top.indent || top.node.tagName.toLowerCase() !== tag) {
    const list = el(tag);
    if (tag === "ol") list.start = parseInt(match[2], 10);
    if (top && indent > top.indent) top.node.lastElementChild.append(list);
    else if (top) top.node.after(list);
    else out.append(list);
    if (top && indent <= top.indent) lists.pop();
    lists.push({ indent, node: list });
  }
  return lists.at(-1).node.appendChild(el("li"));
}

function inline(text, parent, inLink = false) {
  let at = 0;
  for (const m of text.matchAll(INLINE)) {
    parent.append(text.slice(at, m.index));
    parent.append(inlineNode(m, inLink));
    at = m.index + m[0].length;
  }
  parent.append(text.slice(at));
  return parent;
}

function inlineNode(m, inLink) {
  if (m[1] !== undefined) return el("code", "", m[1]);
  if (m[2] !== undefined) return inline(m[2], el("strong"), inLink);
  if (m[3] !== undefined) return inline(m[3], el("em"), inLink);
  if (m[4] !== undefined) {
    const href = inLink ? null : sameSiteHref(m[5]);
    if (!href) return inline(m[4], document.createDocumentFragment(), inLink); // the label only
    return inline(m[4], link(href, ""), true);
  }
  const id = (m[6] ?? m[7]).replace(new RegExp(DASH, "g"), "-").toUpperCase();
  if (inLink) return id;
  const kind = m[6] !== undefined ? "incident" : "document";
  const template = kind === "incident" ? chat.dataset.incidentUrl : chat.dataset.documentUrl;
  const anchor = link(template.replace("/0/", `/${encodeURIComponent(id)}/`), `ref ref-${kind}`);
  anchor.textContent = id;
  return anchor;
}

function link(href, className) {
  const anchor = el("a", className);
  anchor.href = href;
  return anchor;
}

function sameSiteHref(raw) {
  // Only a path on this site: no scheme (javascript:, data:), no other host ("//evil").
  if (!raw.startsWith("/") || raw.startsWith("//") || raw.startsWith("/\\")) return null;
  try {
    const target = new URL(raw, location.origin);
    return target.origin === location.origin ? target.pathname + target.search + target.hash : null;
  } catch {
    return null;
  }
}
