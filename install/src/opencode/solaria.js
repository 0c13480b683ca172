// solaria-managed: opencode plugin. Written by "solaria install opencode" and removed
// by "solaria uninstall opencode"; a reinstall overwrites edits.
//
// SOLARIA Memory for OpenCode (plugin API of OpenCode 1.18): forwards the session's
// events to `solaria-hook opencode <event>` (JSON on its stdin; the running daemon
// captures them, or else `solaria hook opencode`), and gives the model the project's
// memory and what a prompt recalls as recorded data: each in a message of its own,
// marked synthetic, before the user's message of the turn. Never in the system
// prompt (which the model obeys) and never inside what the user wrote. No
// dependencies. It never throws into OpenCode and never holds it for long: bus
// events are fire-and-forget, the awaited hooks wait at most HOOK_WAIT_MS, the
// context at most CONTEXT_WAIT_MS once per session.
import { spawn } from "node:child_process";

// The hook command's words before `opencode <event>`.
const HOOK = ["__SOLARIA_EXE__", "hook"];
const HOOK_WAIT_MS = 1500;
const CONTEXT_WAIT_MS = 3000;
// A solaria process that outlives this is left to its own watchdog; the queue moves on.
const RUN_CAP_MS = 10000;
// Recalled memory is kept per user message (the transform re-adds it to every model
// request of the turn); the oldest entries go past this many.
const RECALLS_KEPT = 200;
const BUS_EVENTS = new Set([
  "session.created",
  "session.idle",
  "session.compacted",
  "session.deleted",
  "session.error",
]);

export const SolariaMemory = async (ctx) => {
  const cwd = (ctx && (ctx.directory || ctx.worktree)) || process.cwd();
  let queue = Promise.resolve("");
  const contexts = new Map();
  const lastText = new Map();
  const recalls = new Map();

  // A timer that resolves to "" after `ms`; `hold` keeps the runtime alive meanwhile
  // (only while someone awaits it).
  const later = (ms, hold) => {
    let timer;
    const promise = new Promise((resolve) => {
      timer = setTimeout(() => resolve(""), ms);
      if (!hold && timer && typeof timer.unref === "function") timer.unref();
    });
    return { promise, cancel: () => clearTimeout(timer) };
  };

  // Runs the hook command for `event` with `payload`; resolves to its stdout
  // (mode "output") or "", never rejects. Mode "detach" is fire-and-forget: the
  // process outlives OpenCode if need be and keeps nothing waiting.
  const run = (event, payload, mode) =>
    new Promise((resolve) => {
      const detach = mode === "detach";
      const cap = later(RUN_CAP_MS, false);
      let out = "";
      let done = false;
      const finish = () => {
        if (!done) {
          done = true;
          cap.cancel();
          resolve(out);
        }
      };
      cap.promise.then(finish);
      try {
        const body = JSON.stringify(payload);
        const child = spawn(HOOK[0], [...HOOK.slice(1), "opencode", event], {
          cwd,
          env: process.env,
          stdio: ["pipe", mode === "output" ? "pipe" : "ignore", "ignore"],
          detached: detach,
        });
        child.on("error", finish);
        child.on("close", finish);
        if (mode === "output" && child.stdout) {
          child.stdout.setEncoding("utf8");
          child.stdout.on("data", (d) => {
            out += d;
          });
        }
        child.stdin.on("error", () => {});
        child.stdin.end(body);
        if (detach) child.unref();
      } catch {
        finish();
      }
    });

  // Forwards run one after another so the store sees them in OpenCode's order.
  const forward = (event, payload, mode) => {
    const next = queue.then(() => run(event, payload, mode));
    queue = next;
    return next;
  };

  // Waits for `promise`, at most `ms`.
  const atMost = async (promise, ms) => {
    const timeout = later(ms, true);
    try {
      return await Promise.race([promise, timeout.promise]);
    } finally {
      timeout.cancel();
    }
  };

  return {
    event: async (input) => {
      try {
        const event = input && input.event;
        const type = event && event.type;
        const props = (event && event.properties) || {};
        if (BUS_EVENTS.has(type)) {
          const payload = { cwd, properties: props };
          const id = props.sessionID || (props.info && props.info.id);
          if (type === "session.idle" && lastText.has(id)) {
            payload.last_assistant_message = lastText.get(id);
          }
          if (type === "session.deleted") {
            contexts.delete(id);
            lastText.delete(id);
            for (const [key, recall] of recalls) {
              if (recall.sessionID === id) recalls.delete(key);
            }
          }
          forward(type, payload, "detach");
        } else if (
          type === "message.part.updated" &&
          props.part &&
          props.part.type === "tool" &&
          props.part.state &&
          props.part.state.status === "error"
        ) {
          forward(type, { cwd, properties: { part: props.part } }, "detach");
        }
      } catch {
        // Never into OpenCode.
      }
    },

    "chat.message": async (input, output) => {
      try {
        const parts = ((output && output.parts) || [])
          .filter((p) => p && p.type === "text")
          .map((p) => ({
            type: "text",
            text: p.text,
            synthetic: p.synthetic,
            ignored: p.ignored,
          }));
        const messageID = output && output.message && output.message.id;
        const text = await atMost(
          forward("chat.message", { cwd, input, output: { parts } }, "output"),
          HOOK_WAIT_MS,
        );
        if (messageID && typeof text === "string" && text.trim()) {
          recalls.set(messageID, {
            text: text.trim(),
            sessionID: input && input.sessionID,
          });
          if (recalls.size > RECALLS_KEPT) recalls.delete(recalls.keys().next().value);
        }
      } catch {}
    },

    // The memory goes to the model as messages of SOLARIA's own, seen by the model
    // only (added to the request, never saved): the project's context before the
    // session's first user message, what a prompt recalled before that prompt.
    "experimental.chat.messages.transform": async (_input, output) => {
      try {
        if (!output || !Array.isArray(output.messages)) return;
        const messages = output.messages;
        const users = messages.filter((m) => m && m.info && m.info.role === "user");
        if (!users.length) return;
        const sessionID = users[0].info.sessionID;
        const memory = (info, key, text) => ({
          info: { ...info, id: info.id + key },
          parts: [{
            id: info.id + key + "-part",
            sessionID: info.sessionID,
            messageID: info.id + key,
            type: "text",
            text,
            synthetic: true,
            solariaMemory: true,
          }],
        });
        const own = (m) => m && Array.isArray(m.parts) && m.parts.some((p) => p && p.solariaMemory);
        const added = [];
        for (const message of messages) {
          const info = message && message.info;
          if (own(message)) return;
          if (info && info.role === "user") {
            if (message === users[0] && sessionID) {
              if (!contexts.has(sessionID)) {
                contexts.set(sessionID, run("context", { cwd, session_id: sessionID }, "output"));
              }
              const text = await atMost(contexts.get(sessionID), CONTEXT_WAIT_MS);
              if (typeof text === "string" && text.trim()) {
                added.push(memory(info, "-solaria-context", text.trim()));
              }
            }
            const recall = recalls.get(info.id);
            if (recall) added.push(memory(info, "-solaria-recall", recall.text));
          }
          added.push(message);
        }
        messages.splice(0, messages.length, ...added);
      } catch {}
    },

    "tool.execute.after": async (input, output) => {
      try {
        const o = output || {};
        await atMost(
          forward("tool.execute.after", {
            cwd,
            input,
            output: { title: o.title, output: o.output, metadata: o.metadata },
          }, "wait"),
          HOOK_WAIT_MS,
        );
      } catch {}
    },

    "experimental.text.complete": async (input, output) => {
      try {
        if (input && input.sessionID && output && typeof output.text === "string") {
          lastText.set(input.sessionID, output.text);
        }
      } catch {}
    },
  };
};
