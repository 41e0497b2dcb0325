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
      document.querySelectorAll('.review[data-uid="' + uid + '"]').forEach(function (el) { el.remove(); });
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
