// firstfault dashboard: plain JavaScript, no build step, nothing from the network.
// The timeline is drawn from the JSON the server embeds in the verdict page.
"use strict";

(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const STEPS = [0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400]
    .map(function (s) { return s * 1000; });

  function el(name, attrs, parent) {
    const e = document.createElementNS(SVG, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  function clock(ms, withMs) {
    const iso = new Date(ms).toISOString(); // UTC, like the rest of the page
    return withMs ? iso.slice(11, 23) : iso.slice(11, 19);
  }

  function niceStep(span, maxTicks) {
    for (const s of STEPS) { if (span / s <= Math.max(maxTicks, 1)) return s; }
    return STEPS[STEPS.length - 1];
  }

  function duration(ms) {
    const s = Math.round(ms / 1000);
    if (s < 60) return s + " s";
    if (s < 3600) return Math.floor(s / 60) + " min " + (s % 60 ? (s % 60) + " s" : "");
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
    return h + " h" + (m ? " " + m + " min" : "");
  }

  // A time scale that keeps bursts of evidence readable: stretches of events are
  // laid out linearly, and a quiet gap longer than a tenth of the whole span is
  // cut to a fixed-width break (labelled with the time it skips).
  function makeScale(times, x0, width) {
    const ts = Array.from(new Set(times)).sort(function (a, b) { return a - b; });
    const span = ts[ts.length - 1] - ts[0];
    const minGap = Math.max(span * 0.1, 5000);
    const groups = [];
    let cur = { a: ts[0], b: ts[0] };
    for (let i = 1; i < ts.length; i++) {
      if (ts[i] - cur.b > minGap) { groups.push(cur); cur = { a: ts[i], b: ts[i] }; } else { cur.b = ts[i]; }
    }
    groups.push(cur);
    const breakW = groups.length > 1 ? 44 : 0;
    const avail = width - breakW * (groups.length - 1);
    const weights = groups.map(function (g) { return Math.max(g.b - g.a, span * 0.15, 1000); });
    const total = weights.reduce(function (p, w) { return p + w; }, 0);
    const parts = [];
    const breaks = [];
    let px = x0;
    groups.forEach(function (g, i) {
      const w = avail * weights[i] / total;
      const pad = Math.max((g.b - g.a) * 0.06, 400);
      parts.push({ t0: g.a - pad, t1: g.b + pad, x0: px, w: w });
      px += w;
      if (i < groups.length - 1) {
        breaks.push({ x0: px + 6, x1: px + breakW - 6, skipped: groups[i + 1].a - g.b });
        px += breakW;
      }
    });
    function x(t) {
      let p = parts[0];
      for (const c of parts) { if (t >= c.t0) p = c; }
      return p.x0 + (Math.min(Math.max(t, p.t0), p.t1) - p.t0) / (p.t1 - p.t0) * p.w;
    }
    return { x: x, parts: parts, breaks: breaks };
  }

  function highlight(i) {
    document.querySelectorAll(".hl").forEach(function (n) { n.classList.remove("hl"); });
    const row = document.getElementById("ev-" + i);
    if (row) {
      row.classList.add("hl");
      row.scrollIntoView({ block: "center", behavior: "smooth" });
    }
    const mark = document.querySelector('.mark[data-i="' + i + '"]');
    if (mark) mark.classList.add("hl");
  }

  function drawTimeline(box, data) {
    box.textContent = "";
    const events = data.events;
    if (!events.length) {
      const p = document.createElement("p");
      p.className = "empty";
      p.textContent = "No timed evidence to place on a timeline.";
      box.appendChild(p);
      return;
    }
    const width = Math.max(box.clientWidth - 12, 480);
    const labelW = Math.min(170, Math.max(90, 7.2 * Math.max.apply(null, data.lanes.map(function (l) { return l.length; }))));
    const laneH = 34, top = 24, right = 16;
    const height = top + laneH * data.lanes.length + 20;
    const plotW = width - labelW - right;
    const scale = makeScale(events.map(function (e) { return e.t; }), labelW, plotW);
    const x = scale.x;
    const svg = el("svg", { width: width, height: height, viewBox: "0 0 " + width + " " + height, role: "img",
      "aria-label": "evidence timeline, one lane per node" }, box);

    const affected = new Set(data.affected);
    const laggards = new Set(data.laggards || []);
    const laneY = {};
    data.lanes.forEach(function (lane, k) {
      const y = top + k * laneH;
      laneY[lane] = y + laneH / 2;
      const hit = (affected.has(lane) ? " affected" : "") + (laggards.has(lane) ? " laggard" : "");
      el("rect", { x: labelW, y: y + 2, width: plotW, height: laneH - 4, rx: 3, "class": "lane" + hit }, svg);
      const label = el("text", { x: labelW - 8, y: y + laneH / 2 + 4, "text-anchor": "end", "class": "lane-label" + hit }, svg);
      label.textContent = (laggards.has(lane) ? "\u29d7 " : "") + lane;
      if (laggards.has(lane)) el("title", {}, label).textContent = lane + ": a laggard rank's node (lead)";
    });

    // Ticks per stretch of time; the quiet gaps between stretches are drawn as breaks.
    let lastLabel = -Infinity;
    scale.parts.forEach(function (c) {
      const step = niceStep(c.t1 - c.t0, c.w / 95);
      for (let t = Math.ceil(c.t0 / step) * step; t <= c.t1; t += step) {
        const tx = x(t);
        el("line", { x1: tx, x2: tx, y1: top - 4, y2: height - 16, "class": "tick" }, svg);
        // Labels never collide with the previous one nor run off the right edge.
        if (tx - lastLabel < 88 || tx > width - 40) continue;
        lastLabel = tx;
        const lbl = el("text", { x: tx, y: top - 8, "text-anchor": "middle", "class": "tick-label" }, svg);
        lbl.textContent = clock(t, step < 1000);
      }
    });
    scale.breaks.forEach(function (b) {
      el("rect", { x: b.x0, y: top - 2, width: b.x1 - b.x0, height: height - top - 14, "class": "gap" }, svg);
      const lbl = el("text", { x: (b.x0 + b.x1) / 2, y: height - 5, "text-anchor": "middle", "class": "gap-label" }, svg);
      lbl.textContent = "+" + duration(b.skipped);
      const t = el("title", {}, lbl);
      t.textContent = duration(b.skipped) + " without evidence, not to scale";
    });

    // Marks on the same lane closer than a few pixels are fanned out vertically.
    const pos = {};
    const offsets = [0, -9, 9, -4.5, 4.5, -13, 13];
    const levels = {};
    events.slice().sort(function (a, b) { return a.t - b.t; }).forEach(function (e) {
      const px = x(e.t);
      const key = e.lane;
      levels[key] = levels[key] || [];
      let lvl = 0;
      while (lvl < offsets.length - 1 && levels[key][lvl] !== undefined && px - levels[key][lvl] < 8) lvl++;
      levels[key][lvl] = px;
      pos[e.i] = { x: px, y: laneY[e.lane] + offsets[lvl] };
    });

    const links = el("g", { "class": "links" }, svg);
    data.links.forEach(function (l) {
      const a = pos[l.from], b = pos[l.to];
      if (!a || !b) return;
      const mx = (a.x + b.x) / 2, my = Math.min(a.y, b.y) - 14;
      el("path", { d: "M" + a.x + "," + a.y + " Q" + mx + "," + my + " " + b.x + "," + b.y, "class": "link" }, links);
    });

    const marks = el("g", { "class": "marks" }, svg);
    // Causes last, so they sit on top of their symptoms.
    events.slice().sort(function (a, b) { return (a.cause ? 1 : 0) - (b.cause ? 1 : 0); }).forEach(function (e) {
      const p = pos[e.i];
      let m;
      if (e.cause) {
        const r = 7;
        m = el("path", { d: "M" + p.x + "," + (p.y - r) + " L" + (p.x + r) + "," + p.y + " L" + p.x + "," + (p.y + r) +
          " L" + (p.x - r) + "," + p.y + " Z" }, marks);
      } else {
        m = el("circle", { cx: p.x, cy: p.y, r: 4.5 }, marks);
      }
      m.setAttribute("class", "mark " + e.role + (e.cause ? " cause" : ""));
      m.setAttribute("data-i", e.i);
      m.setAttribute("data-lane", e.lane);
      m.setAttribute("data-role", e.role);
      const title = el("title", {}, m);
      title.textContent = clock(e.t, true) + "  " + e.lane + (e.rank !== null ? " rank " + e.rank : "") + "\n" +
        e.role + ": " + e.category + "\n" + e.where + "\n" + e.text;
      m.addEventListener("click", function () { highlight(e.i); });
      if (e.cause) {
        const lbl = el("text", { x: Math.min(p.x + 10, width - right - 4), y: p.y - 9, "class": "cause-label",
          "text-anchor": p.x > width - 180 ? "end" : "start" }, marks);
        lbl.textContent = e.category;
      }
    });
  }

  function initTimeline() {
    const box = document.getElementById("timeline");
    const src = document.getElementById("timeline-data");
    if (!box || !src) return;
    const data = JSON.parse(src.textContent);
    drawTimeline(box, data);
    let pending = null;
    window.addEventListener("resize", function () {
      clearTimeout(pending);
      pending = setTimeout(function () { drawTimeline(box, data); }, 150);
    });
    document.querySelectorAll("#evidence tbody tr").forEach(function (row) {
      row.addEventListener("click", function () { highlight(row.getAttribute("data-i")); });
    });
  }

  function initList() {
    // A whole row opens its verdict; selects filter as soon as they change.
    document.querySelectorAll("tr.row-link").forEach(function (row) {
      row.addEventListener("click", function (ev) {
        if (ev.target.closest("a")) return;
        const a = row.querySelector("a.wl");
        if (a) window.location.href = a.href;
      });
    });
    document.querySelectorAll("form.filters select").forEach(function (s) {
      s.addEventListener("change", function () { s.form.submit(); });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    initTimeline();
    initList();
  });
})();
