// Recording a voice note with the microphone (MediaRecorder). The recording
// becomes the composer's attachment, like an attached audio file.

import { setStatus } from "./dom.js";
import { attach } from "./upload.js";

const button = document.getElementById("record");
const recording = { recorder: null, chunks: [] };

function preferredType() {
  const types = ["audio/webm;codecs=opus", "audio/webm", "audio/ogg;codecs=opus", "audio/mp4"];
  return types.find((type) => MediaRecorder.isTypeSupported(type)) || "";
}

function showRecording(on) {
  button.setAttribute("aria-pressed", String(on));
  button.querySelector(".visually-hidden").textContent = on ? "Stop recording" : "Record a voice note";
  button.title = on ? "Stop recording" : "Record a voice note";
}

async function start() {
  let stream;
  try {
    stream = await navigator.mediaDevices.getUserMedia({ audio: true });
  } catch {
    return setStatus("The microphone is not available; attach an audio file instead.", true);
  }
  const type = preferredType();
  const recorder = new MediaRecorder(stream, type ? { mimeType: type } : {});
  recording.recorder = recorder;
  recording.chunks = [];
  recorder.addEventListener("dataavailable", (e) => e.data.size && recording.chunks.push(e.data));
  recorder.addEventListener("stop", () => finish(recorder, stream));
  recorder.start();
  showRecording(true);
  setStatus("Recording… press the microphone again to stop.");
}

function finish(recorder, stream) {
  stream.getTracks().forEach((track) => track.stop());
  recording.recorder = null;
  showRecording(false);
  const type = (recorder.mimeType || "audio/webm").split(";")[0];
  const extension = { "audio/ogg": "ogg", "audio/mp4": "m4a" }[type] || "webm";
  const blob = new Blob(recording.chunks, { type });
  if (!blob.size) return setStatus("Nothing was recorded.", true);
  attach("voice", new File([blob], `voice-note.${extension}`, { type }), { recorded: true });
  setStatus("Voice note ready: add words if you like, then Send.");
}

if (button && window.MediaRecorder && navigator.mediaDevices?.getUserMedia) {
  button.hidden = false;
  button.addEventListener("click", () => (recording.recorder ? recording.recorder.stop() : start()));
}
