// SOLARIA Memory's viewer: adds events to an open page as they are captured. It
// follows the daemon's server-sent events (/ui/live), appends each event to the
// list marked `data-live` when the event belongs to what the list shows, and fills
// a session's summary when the session ends. Everything is set as text, never as
// markup. Without this script every page still reads; a reload shows what arrived.
"use strict";
(function () {
  // Says the script ran (what the tests of a page read without it check).
  document.documentElement.dataset.script = "ran";
  const list = document.querySelector("[data-live]");
  const status = document.querySelector("[data-live-status]");
  if (!list || !window.EventSource) {
    return;
  }
  const session = list.dataset.session || "";
  const project = list.dataset.project || "";
  const newestFirst = list.dataset.order === "newest-first";
  const say = function (text) {
    if (status) {
      status.textContent = text;
    }
  };
  const source = new EventSource("/ui/live?after=" + encodeURIComponent(list.dataset.after || "0"));
  source.addEventListener("open", function () {
    say("Live: events appear here as they are captured.");
  });
  source.addEventListener("error", function () {
    say("Live updates paused: the daemon does not answer; reconnecting.");
  });
  source.addEventListener("capture", function (message) {
    let event;
    try {
      event = JSON.parse(message.data);
    } catch (_) {
      return;
    }
    if ((session && event.session !== session) || (project && event.project_key !== project)) {
      return;
    }
    if (list.querySelector('[data-id="' + CSS.escape(String(event.id)) + '"]')) {
      return;
    }
    const item = document.createElement("li");
    item.dataset.id = event.id;
    if (event.failed) {
      item.className = "failed";
    }
    const link = document.createElement("a");
    link.href = "/ui/record/" + encodeURIComponent(event.id);
    link.textContent = event.line;
    item.appendChild(link);
    if (newestFirst) {
      list.insertBefore(item, list.firstChild);
    } else {
      list.appendChild(item);
    }
  });
  source.addEventListener("summary", function (message) {
    const place = document.querySelector("[data-summary]");
    let summary;
    try {
      summary = JSON.parse(message.data);
    } catch (_) {
      return;
    }
    if (!place || !session || summary.session !== session) {
      return;
    }
    place.querySelector("p").textContent = summary.text;
    place.hidden = false;
  });
})();
