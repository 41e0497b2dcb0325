// mabos console: small progressive enhancement with plain fetch. Every page works without it.
"use strict";
(function () {
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  // Approve / reject without a reload: POST to the JSON twin of the form with the CSRF header.
  document.querySelectorAll("form.act-approve, form.act-reject").forEach(function (form) {
    form.addEventListener("submit", async function (event) {
      event.preventDefault();
      const body = new URLSearchParams(new FormData(form));
      const response = await fetch("/api" + form.getAttribute("action"), {
        method: "POST", headers: {"X-CSRF-Token": csrf}, body: body, credentials: "same-origin"});
      const data = await response.json();
      const holder = form.closest(".review");
      if (!response.ok) { showError(data.error || response.statusText); return; }
      const uid = data.proposal.uid;
      document.querySelectorAll("#row-" + CSS.escape(uid) + " .status, #proposal-status").forEach(function (el) {
        if (el.id !== "proposal-status" || document.querySelector("#proposal-detail code").textContent === uid) {
          el.textContent = data.proposal.status; el.className = "status status-" + data.proposal.status;
        }
      });
      document.querySelectorAll('.review[data-uid="' + CSS.escape(uid) + '"]').forEach(function (el) { el.remove(); });
      showFlash(uid + " " + data.done);
      if (holder) holder.remove();
    });
  });
  function showError(text) { banner("error", "error: " + text); }
  function showFlash(text) { banner("flash", text); }
  function banner(cls, text) {
    let el = document.querySelector("main > p." + cls);
    if (!el) { el = document.createElement("p"); el.className = cls; document.querySelector("main").prepend(el); }
    el.textContent = text;
  }
  window.mabosBanner = banner;
  // The header's agent menu switches at once (no inline handler: the page's CSP allows no inline script).
  document.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
    select.addEventListener("change", function () { select.form.submit(); });
  });
  // The ontology page: filter the class tree and the properties by name (a class stays with its ancestors, which
  // open); an empty filter shows everything as it was.
  const filter = document.getElementById("tree-filter");
  if (filter) {
    const tree = document.getElementById("class-tree");
    const rows = Array.from(document.querySelectorAll("#property-table tr[data-name]"));
    const count = document.getElementById("tree-count");
    filter.addEventListener("input", function () {
      const wanted = filter.value.trim().toLowerCase();
      let shown = 0;
      function visit(item) {  // whether item or one of its descendants matches
        const name = (item.dataset.name || "").toLowerCase();
        let below = false;
        item.querySelectorAll(":scope > details > ul > li, :scope > ul > li").forEach(function (child) {
          below = visit(child) || below;
        });
        const match = !wanted || name.includes(wanted);
        item.hidden = !(match || below);
        const details = item.querySelector(":scope > details");
        if (details && wanted) { details.open = below; }
        if (match && wanted) { shown += 1; }
        return match || below;
      }
      tree.querySelectorAll(":scope > li").forEach(visit);
      rows.forEach(function (row) {
        const match = !wanted || row.dataset.name.toLowerCase().includes(wanted);
        row.hidden = !match;
        if (match && wanted) { shown += 1; }
      });
      count.textContent = wanted ? shown + " matching" : "";
      document.getElementById("properties").open = Boolean(wanted) && rows.some(function (row) { return !row.hidden; });
    });
  }
  // The header's index indicator follows the idle-time build (/api/index never stops a pass).
  const indicator = document.getElementById("index-status");
  async function followIndex() {
    try {
      const response = await fetch("/api/index", {credentials: "same-origin"});
      if (response.ok) {
        const data = await response.json();
        indicator.textContent = "index: " + data.text;
        indicator.dataset.state = data.state;
      }
    } catch (error) { /* the console stopped: keep the last text */ }
    const busy = ["waiting", "indexing", "paused"].includes(indicator.dataset.state);
    setTimeout(followIndex, busy ? 3000 : 30000);
  }
  if (indicator) { setTimeout(followIndex, 3000); }
})();
