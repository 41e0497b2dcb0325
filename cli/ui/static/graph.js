// The graph page: draws /api/graph with cytoscape.js, shows a node's record, history and neighbours on click,
// and adds the neighbours on "expand".
"use strict";
(function () {
  const COLORS = {belief: "#3b82f6", desire: "#ec4899", goal: "#16a34a", intention: "#f97316", plan: "#8b5cf6",
    plan_step: "#a78bfa", entity: "#0ea5e9", literal: "#9ca3af", memory: "#eab308"};
  const agent = document.body.dataset.agent;
  const form = document.getElementById("graph-filter");
  const note = document.getElementById("graph-note");
  const panel = document.getElementById("node-panel");
  let cy = null;

  function query() {
    const kinds = Array.from(form.querySelectorAll('input[name="kind"]:checked')).map(function (i) { return i.value; });
    const params = new URLSearchParams({agent: agent, types: kinds.join(","), limit: form.limit.value});
    if (form.scope.value.trim()) params.set("scope", form.scope.value.trim());
    return params;
  }
  function elements(nodes, edges) {
    return nodes.map(function (n) { return {group: "nodes", data: {id: n.id, label: n.label, kind: n.kind}}; })
      .concat(edges.map(function (e) {
        return {group: "edges", data: {id: "e:" + e.id, source: e.source, target: e.target, label: e.label, kind: e.kind}};
      }));
  }
  function style() {
    return [
      {selector: "node", style: {"label": "data(label)", "font-size": 9, "width": 18, "height": 18, "color": "#1f2937",
        "text-valign": "bottom", "text-margin-y": 3, "text-max-width": 120, "text-wrap": "ellipsis",
        "min-zoomed-font-size": 6,
        "background-color": function (n) { return COLORS[n.data("kind")] || "#6b7280"; }}},
      {selector: 'node[kind = "entity"], node[kind = "literal"]', style: {"shape": "round-rectangle", "width": 14, "height": 14}},
      {selector: "node:selected", style: {"border-width": 3, "border-color": "#111827"}},
      {selector: "edge", style: {"label": "data(label)", "font-size": 7, "color": "#475569", "curve-style": "bezier",
        "target-arrow-shape": "triangle", "width": 1, "line-color": "#cbd5e1", "target-arrow-color": "#cbd5e1",
        "text-rotation": "autorotate", "text-background-color": "#fff", "text-background-opacity": 0.8,
        "min-zoomed-font-size": 6}},
    ];
  }
  async function getJSON(url) {
    const response = await fetch(url, {credentials: "same-origin"});
    const data = await response.json();
    if (!response.ok) { throw new Error(data.error || response.statusText); }
    return data;
  }
  async function draw() {
    note.textContent = "loading…";
    let view;
    try { view = await getJSON("/api/graph?" + query().toString()); }
    catch (err) { note.textContent = ""; window.mabosBanner("error", "error: " + err.message); return; }
    const parts = Object.keys(view.total).map(function (k) {
      return (view.shown[k] || 0) + " of " + view.total[k] + " " + (k === "bdi" ? "BDI nodes" : k);
    });
    note.textContent = "showing " + parts.join(", ") + (view.capped ? " (capped at " + view.limit + ": raise the cap or filter)" : "")
      + " · " + view.nodes.length + " nodes, " + view.edges.length + " edges";
    note.dataset.nodes = view.nodes.length;
    if (cy) { cy.destroy(); }
    cy = cytoscape({container: document.getElementById("cy"), elements: elements(view.nodes, view.edges), style: style(),
      layout: layoutFor(view.nodes.length), wheelSensitivity: 0.3});
    cy.on("tap", "node", function (event) { show(event.target.id()); });
    window.mabosGraph = cy;
    cy.one("render", function () {
      window.mabosPaintMs = performance.now();
      document.body.dataset.graphReady = "1";
    });
    cy.forceRender();
  }
  // A force-directed layout reads best for small views; past ~120 nodes it costs seconds on a slow machine, so
  // larger views are placed in rings by degree (hubs in the middle), which is linear and still readable.
  function layoutFor(count) {
    if (count <= 120) { return {name: "cose", animate: false, nodeRepulsion: 6000, idealEdgeLength: 60}; }
    return {name: "concentric", animate: false, minNodeSpacing: 8, avoidOverlap: true,
      concentric: function (n) { return n.degree(); }, levelWidth: function () { return 2; }};
  }
  function esc(text) { const d = document.createElement("div"); d.textContent = text == null ? "" : String(text); return d.innerHTML; }
  async function show(id) {
    panel.innerHTML = "<p class='note'>loading…</p>";
    let detail;
    try { detail = await getJSON("/api/graph/node?" + new URLSearchParams({agent: agent, id: id}).toString()); }
    catch (err) { panel.innerHTML = "<p class='error'>error: " + esc(err.message) + "</p>"; return; }
    const history = detail.history.map(function (h) {
      return "<li><span class='when'>" + esc(String(h.at).slice(0, 19)) + "</span> " + esc(h.what) + (h.state === "retracted" ? " <i>(retracted)</i>" : "") + "</li>";
    }).join("");
    const neighbours = detail.nodes.filter(function (n) { return n.id !== id; }).map(function (n) {
      return "<li><a href='#' data-id='" + esc(n.id) + "'>" + esc(n.label) + "</a> <small>" + esc(n.kind) + "</small></li>";
    }).join("");
    panel.innerHTML = "<h3 id='node-title'>" + esc(detail.node.label) + " <small>" + esc(detail.node.kind) + "</small></h3>"
      + "<button id='expand'>expand neighbours (" + detail.nodes.length + ")</button>"
      + "<h4>Record</h4><pre>" + esc(JSON.stringify(detail.record, null, 1)) + "</pre>"
      + "<h4>History</h4><ol class='timeline'>" + (history || "<li>—</li>") + "</ol>"
      + "<h4>Neighbours</h4><ul>" + (neighbours || "<li>—</li>") + "</ul>";
    document.getElementById("expand").addEventListener("click", function () { expand(detail); });
    panel.querySelectorAll("a[data-id]").forEach(function (a) {
      a.addEventListener("click", function (e) { e.preventDefault(); expand(detail); show(a.dataset.id); });
    });
  }
  function expand(detail) {
    const fresh = elements(detail.nodes, detail.edges).filter(function (el) { return cy.getElementById(el.data.id).empty(); });
    fresh.sort(function (a, b) { return a.group === "nodes" ? -1 : 1; });
    if (!cy.getElementById(detail.node.id).empty() || fresh.length) {
      if (cy.getElementById(detail.node.id).empty()) { cy.add(elements([detail.node], [])); }
      const added = cy.add(fresh).nodes();
      const centre = cy.getElementById(detail.node.id).position();
      added.forEach(function (n, i) {  // new neighbours in a ring around the expanded node
        const angle = 2 * Math.PI * i / Math.max(added.length, 1);
        n.position({x: centre.x + 90 * Math.cos(angle), y: centre.y + 90 * Math.sin(angle)});
      });
    }
  }
  form.addEventListener("submit", function (event) { event.preventDefault(); draw(); });
  draw();
})();
