// The composer's attachment: a screenshot or a voice note, sent with the text
// to POST /api/incident. A screenshot is checked here (type by its first bytes,
// size) and again by the server; a voice note is checked by the server, which
// also says when there is no model server to transcribe it.

import { setStatus } from "./dom.js";

const chat = document.getElementById("chat");
const question = document.getElementById("question");
const screenshotInput = document.getElementById("screenshot");
const audioInput = document.getElementById("audio-file");
const attachment = document.getElementById("attachment");
const PNG = [0x89, 0x50, 0x4e, 0x47];
const JPEG = [0xff, 0xd8, 0xff];

// kind: "screenshot" | "voice"; file: the File; recorded: made by the microphone.
export const attached = { kind: "", file: null, recorded: false };

async function screenshotProblem(file) {
  const limit = Number(chat.dataset.maxImageBytes);
  if (file.size > limit) {
    return `The screenshot is ${megabytes(file.size)} MB; the limit is ${megabytes(limit)} MB.`;
  }
  const head = new Uint8Array(await file.slice(0, 4).arrayBuffer());
  const starts = (magic) => magic.every((byte, i) => head[i] === byte);
  return starts(PNG) || starts(JPEG) ? "" : "The screenshot must be a PNG or JPEG image.";
}

function voiceProblem(file) {
  const limit = Number(chat.dataset.maxAudioBytes);
  if (file.size > limit) return `The voice note is ${megabytes(file.size)} MB; the limit is ${megabytes(limit)} MB.`;
  return file.size ? "" : "The voice note is empty.";
}

function megabytes(size) {
  return (size / 1048576).toFixed(1);
}

export function clearAttachment() {
  Object.assign(attached, { kind: "", file: null, recorded: false });
  screenshotInput.value = "";
  if (audioInput) audioInput.value = "";
  attachment.hidden = true;
  question.required = true;
}

export function attach(kind, file, { recorded = false } = {}) {
  Object.assign(attached, { kind, file, recorded });
  const label = kind === "voice" ? (recorded ? "Voice note (recorded)" : "Voice note") : "Screenshot";
  attachment.querySelector(".attachment-name").textContent = `${label}: ${file.name}`;
  attachment.hidden = false;
  question.required = false; // an attachment alone is a report
  setStatus("");
}

async function picked(input, kind, problemOf) {
  const file = input.files[0];
  if (!file) return clearAttachment();
  const problem = await problemOf(file);
  if (problem) {
    clearAttachment();
    return setStatus(problem, true);
  }
  attach(kind, file);
}

screenshotInput.addEventListener("change", () => picked(screenshotInput, "screenshot", screenshotProblem));
audioInput?.addEventListener("change", () => picked(audioInput, "voice", voiceProblem));
attachment.querySelector(".attachment-remove").addEventListener("click", clearAttachment);

export function reportForm(conversationId, text) {
  const form = new FormData();
  form.set("conversation_id", conversationId);
  form.set("text", text);
  form.set(attached.kind === "voice" ? "audio" : "image", attached.file, attached.file.name);
  return form;
}
