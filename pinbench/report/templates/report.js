/* pinbench report: draws the figures of a benchmark's page from the page's data file.
 *
 * A benchmark's page loads this script, then its data file (<bench>.js), which calls
 * pinbenchPage(data) (pinbench/report/benchmark_pages.py). Each <figure data-figure="ID"
 * data-kind="times|order"> gets its SVG when it comes near the window: the run times per
 * experiment (a box plot, every run a point) or run time against run order (busy runs ringed,
 * the legend right of the axes). Every text is set as text: nothing from the data is read as
 * markup. A figure's "SVG" link saves it as a file, its title and the campaign's metadata in it.
 */
"use strict";
(function () {
  const NS = "http://www.w3.org/2000/svg";
  const FONT = 12;           // px, every text of a figure
  const CHAR = 0.6 * FONT;   // a character's width, generously (as figures.text_width)
  const HEIGHT = 240;        // px, every figure
  const TOP = 10, BOTTOM = 42, RIGHT = 14;  // margins around the axes
  let page = null;

  function node(parent, name, attrs, text) {
    const element = document.createElementNS(NS, name);
    for (const [key, value] of Object.entries(attrs || {})) element.setAttribute(key, value);
    if (text !== undefined) element.textContent = text;
    if (parent) parent.appendChild(element);
    return element;
  }

  /* Round ticks over [low, high]: steps of 1, 2, 2.5 or 5 times a power of ten. */
  function ticks(low, high) {
    const raw = (high - low) / 5;
    const power = Math.pow(10, Math.floor(Math.log10(raw)));
    const factor = [1, 2, 2.5, 5, 10].find(m => m * power >= raw * (1 - 1e-9));
    const step = factor * power;
    const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9)) +
      (factor === 2.5 && power < 10 ? 1 : 0);
    const values = [];
    for (let k = Math.ceil(low / step - 1e-9); k * step <= high + step * 1e-9; k++) {
      values.push(k * step);
    }
    return values.map(v => ({value: v, text: v.toFixed(decimals)}));
  }

  /* A linear axis' domain around values: 5% of their range (or of their size) each side. */
  function domain(values) {
    let low = Math.min(...values), high = Math.max(...values);
    const pad = (high - low) * 0.05 || Math.abs(low) * 0.05 || 1;
    return [low - pad, high + pad];
  }

  /* The frame of a figure: the svg element, its title and description, the value axis
     (vertical, labelled page.value) and a horizontal axis; returns the scales. */
  function frame(fig, values, plotWidth, extra) {
    const [low, high] = domain(values);
    const yTicks = ticks(low, high);
    const left = 20 + 8 + Math.max(...yTicks.map(t => t.text.length)) * CHAR;
    const width = Math.ceil(left + plotWidth + RIGHT + (extra || 0));
    const svg = node(null, "svg", {xmlns: NS, width: width, height: HEIGHT,
                                   viewBox: `0 0 ${width} ${HEIGHT}`, role: "img",
                                   "font-family": "sans-serif", "font-size": FONT});
    node(svg, "title", {}, fig.title);
    node(svg, "desc", {}, page.meta.Description + "; date: " + page.meta.Date);
    const bottom = HEIGHT - BOTTOM;
    const y = v => bottom - (v - low) / (high - low) * (bottom - TOP);
    const axes = node(svg, "g", {stroke: "#000", "stroke-width": 0.8});
    node(axes, "line", {x1: left, x2: left, y1: TOP, y2: bottom});
    node(axes, "line", {x1: left, x2: left + plotWidth, y1: bottom, y2: bottom});
    for (const t of yTicks) {
      node(axes, "line", {x1: left - 4, x2: left, y1: y(t.value), y2: y(t.value)});
      node(svg, "text", {x: left - 6, y: y(t.value) + FONT * 0.35, "text-anchor": "end"}, t.text);
    }
    const middle = (TOP + bottom) / 2;
    node(svg, "text", {x: 12, y: middle, "text-anchor": "middle",
                       transform: `rotate(-90 12 ${middle})`}, page.value);
    return {svg, axes, left, bottom, y};
  }

  function colour(index) { return page.palette[index % page.palette.length]; }

  /* numpy's default quantile: linear between the sorted values. */
  function quantile(sorted, q) {
    const at = (sorted.length - 1) * q, below = Math.floor(at);
    const above = Math.min(below + 1, sorted.length - 1);
    return sorted[below] + (sorted[above] - sorted[below]) * (at - below);
  }

  /* Run times per experiment: a box plot (whiskers to the furthest run within 1.5 IQR, no
     outliers drawn) with every run as a point, jittered, in the experiment's colour. */
  function times(fig) {
    const series = fig.series;
    const slot = Math.max(64, ...series.map(s => s.label.length * CHAR + 12));
    const values = series.flatMap(s => s.runs.map(r => r[1]));
    const f = frame(fig, values, slot * series.length);
    series.forEach((s, index) => {
      const middle = f.left + slot * (index + 0.5);
      node(f.axes, "line", {x1: middle, x2: middle, y1: f.bottom, y2: f.bottom + 4});
      node(f.svg, "text", {x: middle, y: f.bottom + 6 + FONT, "text-anchor": "middle"}, s.label);
      if (!s.runs.length) return;
      const sorted = s.runs.map(r => r[1]).sort((a, b) => a - b);
      const [q1, median, q3] = [0.25, 0.5, 0.75].map(q => quantile(sorted, q));
      const low = sorted.find(v => v >= q1 - 1.5 * (q3 - q1));
      const high = [...sorted].reverse().find(v => v <= q3 + 1.5 * (q3 - q1));
      const half = slot * 0.25, cap = slot * 0.125;
      const box = node(f.svg, "g", {stroke: "#000", "stroke-width": 1, fill: "none"});
      node(box, "rect", {x: middle - half, width: 2 * half, y: f.y(q3),
                         height: Math.max(0.5, f.y(q1) - f.y(q3))});
      for (const [from, to] of [[q1, low], [q3, high]]) {
        node(box, "line", {x1: middle, x2: middle, y1: f.y(from), y2: f.y(to)});
        node(box, "line", {x1: middle - cap, x2: middle + cap, y1: f.y(to), y2: f.y(to)});
      }
      node(box, "line", {x1: middle - half, x2: middle + half, y1: f.y(median),
                         y2: f.y(median), "stroke-width": 1.6});
      const points = node(f.svg, "g", {fill: colour(index), "fill-opacity": 0.6});
      s.runs.forEach((run, k) => {
        const jitter = ((k * 0.6180339887) % 1 - 0.5) * 0.3 * slot;  // the same each time
        node(points, "circle", {cx: middle + jitter, cy: f.y(run[1]), r: 2.2});
      });
    });
    return f.svg;
  }

  /* Run time against the run's order in its measurement job, a colour per experiment; a run
     during which other processes were busy ringed; the legend right of the axes. */
  function order(fig) {
    const series = fig.series;
    const runs = series.flatMap(s => s.runs);
    const busy = runs.filter(r => r[2]);
    const labels = [...series.map(s => s.label), ...(busy.length ? [page.busy] : [])];
    const legend = 26 + Math.max(...labels.map(l => l.length)) * CHAR;
    const plot = 400;
    const f = frame(fig, runs.map(r => r[1]), plot, legend);
    const [low, high] = domain(runs.map(r => r[0]));
    const x = v => f.left + (v - low) / (high - low) * plot;
    for (const t of ticks(low, high).filter(t => Number.isInteger(t.value))) {
      node(f.axes, "line", {x1: x(t.value), x2: x(t.value), y1: f.bottom, y2: f.bottom + 4});
      node(f.svg, "text", {x: x(t.value), y: f.bottom + 6 + FONT, "text-anchor": "middle"},
           t.text);
    }
    node(f.svg, "text", {x: f.left + plot / 2, y: HEIGHT - 6, "text-anchor": "middle"},
         "order of the run in the measurement job");
    series.forEach((s, index) => {
      const points = node(f.svg, "g", {fill: colour(index), "fill-opacity": 0.8});
      for (const run of s.runs) node(points, "circle", {cx: x(run[0]), cy: f.y(run[1]), r: 2.5});
    });
    const rings = node(f.svg, "g", {fill: "none", stroke: "#000", "stroke-width": 0.8});
    for (const run of busy) node(rings, "circle", {cx: x(run[0]), cy: f.y(run[1]), r: 5});
    const at = f.left + plot + RIGHT;
    labels.forEach((label, index) => {
      const y = TOP + FONT * 0.5 + index * (FONT + 6);
      node(f.svg, "circle", index < series.length
        ? {cx: at + 6, cy: y, r: 3, fill: colour(index)}
        : {cx: at + 6, cy: y, r: 5, fill: "none", stroke: "#000", "stroke-width": 0.8});
      node(f.svg, "text", {x: at + 16, y: y + FONT * 0.35}, label);
    });
    return f.svg;
  }

  const DRAW = {times, order};

  function draw(figure) {
    if (!figure.querySelector("svg")) {
      const fig = page.figures[figure.dataset.figure];
      figure.appendChild(DRAW[figure.dataset.kind](fig));
    }
    return figure.querySelector("svg");
  }

  function save(event) {
    event.preventDefault();
    const link = event.currentTarget;
    const svg = draw(link.closest("figure"));
    const text = '<?xml version="1.0" encoding="utf-8" standalone="no"?>\n' +
      new XMLSerializer().serializeToString(svg);
    const url = URL.createObjectURL(new Blob([text], {type: "image/svg+xml"}));
    const anchor = document.createElement("a");
    anchor.href = url;
    anchor.download = link.dataset.name + ".svg";
    document.body.appendChild(anchor);
    anchor.click();
    anchor.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }

  window.pinbenchPage = function (data) {
    page = data;
    const figures = document.querySelectorAll("figure[data-figure]");
    for (const link of document.querySelectorAll("figure[data-figure] a.save")) {
      link.addEventListener("click", save);
    }
    if (!("IntersectionObserver" in window)) {
      figures.forEach(draw);
      return;
    }
    const observer = new IntersectionObserver(entries => {
      for (const entry of entries) {
        if (entry.isIntersecting) {
          draw(entry.target);
          observer.unobserve(entry.target);
        }
      }
    }, {rootMargin: "800px"});
    figures.forEach(figure => observer.observe(figure));
  };
})();
