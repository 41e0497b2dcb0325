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
        "text-valign": "bottom", "text-margin-y": 3, "text-max-width": 110, "text-wrap": "ellipsis",
        "text-background-color": "#fff", "text-background-opacity": 0.7, "text-background-padding": 1,
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
    separate(cy.nodes());
    cy.fit(undefined, 20);
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
  // Both lay nodes out with their labels counted in their size; separate() then moves apart any two nodes whose
  // label boxes still overlap (a force layout does not promise none), so no label covers another.
  function layoutFor(count) {
    if (count <= 120) {
      return {name: "cose", animate: false, nodeRepulsion: 9000, idealEdgeLength: 70, nodeDimensionsIncludeLabels: true,
        randomize: false};
    }
    return {name: "concentric", animate: false, minNodeSpacing: 12, avoidOverlap: true, nodeDimensionsIncludeLabels: true,
      concentric: function (n) { return n.degree(); }, levelWidth: function () { return 2; }};
  }
  const GAP = 4;
  function boxOf(n) { return n.boundingBox({includeNodes: true, includeLabels: true, includeEdges: false}); }
  function separate(nodes) {
    if (nodes.length > 120) { return; }  // rings (larger views) already space nodes by their labelled size
    for (let round = 0; round < 200; round++) {
      let moved = false;
      const boxes = nodes.map(function (n) { return {n: n, b: boxOf(n)}; });
      boxes.sort(function (p, q) { return p.b.x1 - q.b.x1; });
      for (let i = 0; i < boxes.length; i++) {
        for (let j = i + 1; j < boxes.length && boxes[j].b.x1 < boxes[i].b.x2 + GAP; j++) {
          const a = boxes[i].b, b = boxes[j].b;
          const dx = Math.min(a.x2, b.x2) - Math.max(a.x1, b.x1) + GAP;
          const dy = Math.min(a.y2, b.y2) - Math.max(a.y1, b.y1) + GAP;
          if (dx <= 0 || dy <= 0) { continue; }
          const pa = boxes[i].n.position(), pb = boxes[j].n.position();
          if (dy <= dx) {  // move apart along the smaller overlap
            const step = (pa.y <= pb.y ? 1 : -1) * dy / 2;
            boxes[i].n.position({x: pa.x, y: pa.y - step}); boxes[j].n.position({x: pb.x, y: pb.y + step});
          } else {
            const step = (pa.x <= pb.x ? 1 : -1) * dx / 2;
            boxes[i].n.position({x: pa.x - step, y: pa.y}); boxes[j].n.position({x: pb.x + step, y: pb.y});
          }
          boxes[i].b = boxOf(boxes[i].n); boxes[j].b = boxOf(boxes[j].n);
          moved = true;
        }
      }
      if (!moved) { return; }
    }
  }
  window.mabosLabelOverlaps = function () {  // for the browser test: pairs of nodes whose label boxes overlap
    const boxes = cy.nodes().map(function (n) { return {id: n.id(), b: boxOf(n)}; });
    const found = [];
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i].b, b = boxes[j].b;
        if (Math.min(a.x2, b.x2) > Math.max(a.x1, b.x1) && Math.min(a.y2, b.y2) > Math.max(a.y1, b.y1)) {
          found.push([boxes[i].id, boxes[j].id]);
        }
      }
    }
    return found;
  };
  // Everything the panel shows is built as DOM nodes with textContent / setAttribute: no markup is ever made from
  // data, so a label holding quotes, tags or event attributes stays text.
  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (name) { node.setAttribute(name, attrs[name]); });
    (children || []).forEach(function (child) {
      node.append(child instanceof Node ? child : document.createTextNode(child == null ? "" : String(child)));
    });
    return node;
  }
  function para(cls, text) { return el("p", {class: cls}, [text]); }
  async function show(id) {
    panel.replaceChildren(para("note", "loading…"));
    let detail;
    try { detail = await getJSON("/api/graph/node?" + new URLSearchParams({agent: agent, id: id}).toString()); }
    catch (err) { panel.replaceChildren(para("error", "error: " + err.message)); return; }
    const history = detail.history.map(function (h) {
      const item = el("li", {}, [el("span", {class: "when"}, [String(h.at).slice(0, 19)]), " " + h.what]);
      if (h.state === "retracted") { item.append(" ", el("i", {}, ["(retracted)"])); }
      return item;
    });
    const neighbours = detail.nodes.filter(function (n) { return n.id !== id; }).map(function (n) {
      const link = el("a", {href: "#"}, [n.label]);
      link.dataset.id = n.id;
      link.addEventListener("click", function (e) { e.preventDefault(); expand(detail); show(n.id); });
      return el("li", {}, [link, " ", el("small", {}, [n.kind])]);
    });
    const button = el("button", {id: "expand", type: "button"}, ["expand neighbours (" + detail.nodes.length + ")"]);
    button.addEventListener("click", function () { expand(detail); });
    panel.replaceChildren(
      el("h3", {id: "node-title"}, [detail.node.label, " ", el("small", {}, [detail.node.kind])]),
      button,
      el("h4", {}, ["Record"]), el("pre", {}, [JSON.stringify(detail.record, null, 1)]),
      el("h4", {}, ["History"]), el("ol", {class: "timeline"}, history.length ? history : [el("li", {}, ["—"])]),
      el("h4", {}, ["Neighbours"]), el("ul", {}, neighbours.length ? neighbours : [el("li", {}, ["—"])]));
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
