// hensu console: live updates over the server's SSE streams (no polling loop). Every page
// works without this script; it only keeps them current.
(() => {
  "use strict";
  const TYPES = ["execution.started", "execution.step", "execution.paused",
    "execution.completed", "execution.error", "execution.cancelled"];
  const ENDS = new Set(["execution.completed", "execution.error", "execution.cancelled"]);
  const status = document.getElementById("live-status");
  const say = (text) => { if (status) status.textContent = text; };

  // One EventSource; named events (the server sets `event:`) are dispatched by type. When the
  // server closes a stream at a pause, EventSource reconnects with Last-Event-ID by itself.
  function listen(url, onEvent, closeOn, onToken) {
    const source = new EventSource(url);
    source.onopen = () => say("Live updates on");
    source.onerror = () => say(source.readyState === EventSource.CLOSED ? "Live updates off" : "Reconnecting…");
    // The tenant stream could not replay what was missed while disconnected (docs/server.md,
    // *Events*): the page is re-read instead.
    source.addEventListener("stream.reset", () => window.location.reload());
    for (const type of TYPES) {
      source.addEventListener(type, (message) => {
        let event;
        try { event = JSON.parse(message.data); } catch { return; }
        onEvent(event);
        if (closeOn && closeOn(event)) { source.close(); say("Finished"); }
      });
    }
    // The text of the node in flight (docs/server.md, *Token events*): not a log event, so
    // it re-renders nothing; the page's writing region shows it.
    if (onToken) {
      source.addEventListener("execution.token", (message) => {
        try { onToken(JSON.parse(message.data)); } catch { /* a malformed token is skipped */ }
      });
    }
    return source;
  }

  const fetchHtml = (url) => fetch(url, { headers: { Accept: "text/html" }, credentials: "same-origin" });

  // The executions list: re-render the row of an execution that reported an event.
  const table = document.querySelector("[data-live-list]");
  if (table) {
    const body = table.tBodies[0];
    const firstPage = table.dataset.firstPage === "true";
    const inFlight = new Set();
    const again = new Set();
    const refresh = async (id) => {
      if (inFlight.has(id)) { again.add(id); return; }
      inFlight.add(id);
      try {
        const response = await fetchHtml(`/console/executions/${encodeURIComponent(id)}/row${location.search}`);
        const old = document.getElementById(`run-${id}`);
        if (response.status === 204) {
          if (old) {
            old.remove();
            const count = table.querySelector("[data-run-count]");
            if (count) count.textContent = String(Math.max(0, Number(count.textContent) - 1));
          }
          return;
        }
        if (!response.ok) return;
        const template = document.createElement("template");
        template.innerHTML = (await response.text()).trim();
        const row = template.content.querySelector("tr");
        if (!row) return;
        if (old) old.replaceWith(row);
        else if (firstPage) {
          body.prepend(row);
          document.getElementById("no-runs")?.remove();
          // Keep the caption's count true for rows that arrived live.
          const count = table.querySelector("[data-run-count]");
          if (count) count.textContent = String(Number(count.textContent) + 1);
        }
      } finally {
        inFlight.delete(id);
        if (again.delete(id)) refresh(id);
      }
    };
    listen("/console/events", (event) => { if (event.executionId) refresh(event.executionId); });
  }

  // Pages with `data-live` regions: fetch the page again on an event and swap the regions,
  // keeping open <details> open.
  const live = document.querySelector("[data-live-source]");
  if (live) {
    let busy = false;
    let pending = false;
    const swap = async () => {
      if (busy) { pending = true; return; }
      busy = true;
      try {
        const response = await fetchHtml(location.pathname);
        if (!response.ok) return;
        const next = new DOMParser().parseFromString(await response.text(), "text/html");
        for (const region of document.querySelectorAll("[data-live][id]")) {
          const fresh = next.getElementById(region.id);
          if (!fresh) continue;
          for (const d of region.querySelectorAll("details[id]")) {
            const twin = fresh.querySelector(`details[id="${CSS.escape(d.id)}"]`);
            if (twin) twin.open = d.open;
          }
          region.replaceWith(fresh);
        }
      } finally {
        busy = false;
        if (pending) { pending = false; swap(); }
      }
    };
    const endsOn = live.dataset.liveEnds === "true" ? (event) => ENDS.has(event.type) : null;
    // The node being written: its text grows with each token; the node's step (its output is
    // in the page then) or the run's end hides it.
    const writing = document.querySelector("[data-writing]");
    const writingText = writing?.querySelector("[data-writing-text]");
    const writingNode = writing?.querySelector("[data-writing-node]");
    const onToken = writing ? (token) => {
      const who = token.branchId ? `${token.nodeId} (${token.branchId})` : token.nodeId;
      if (writing.dataset.who !== who) {
        writing.dataset.who = who;
        writingNode.textContent = who;
        writingText.textContent = "";
      }
      writingText.textContent += token.text;
      writing.hidden = false;
    } : null;
    const onEvent = (event) => {
      if (writing && (event.type !== "execution.step" || event.executedNodeId === writing.dataset.who?.split(" (")[0])) {
        writing.hidden = true;
        delete writing.dataset.who;
      }
      swap();
    };
    listen(live.dataset.liveSource, onEvent, endsOn, onToken);
  }
})();
