// Small SVG charts for the kanon console. Every chart comes with a table of
// its numbers (the text alternative) and an aria-label saying what it shows.
'use strict';
(function () {
  const SVG = 'http://www.w3.org/2000/svg';

  function el(name, attrs, text) {
    const e = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function figureTable(caption, headers, rows) {
    const details = document.createElement('details');
    const summary = document.createElement('summary');
    summary.textContent = 'Numbers: ' + caption;
    details.append(summary);
    const table = document.createElement('table');
    const cap = document.createElement('caption');
    cap.textContent = caption;
    table.append(cap);
    const head = table.createTHead().insertRow();
    for (const h of headers) {
      const th = document.createElement('th');
      th.scope = 'col';
      th.textContent = h;
      head.append(th);
    }
    const body = table.createTBody();
    for (const r of rows) {
      const tr = body.insertRow();
      r.forEach((v, i) => {
        const td = tr.insertCell();
        td.textContent = String(v);
        if (i > 0) td.className = 'num';
      });
    }
    details.append(table);
    return details;
  }

  function box(title, svg, table) {
    const div = document.createElement('div');
    div.className = 'chart';
    const h = document.createElement('h3');
    h.textContent = title;
    div.append(h, svg, table);
    return div;
  }

  // items: [{label, value}] with value in [0, max]; format(value) -> text.
  function bars(title, items, opts) {
    const o = Object.assign({ max: 1, format: (v) => (100 * v).toFixed(1) + '%' }, opts || {});
    const rowH = 26, labelW = 160, width = 640, barW = width - labelW - 70;
    const svg = el('svg', { viewBox: `0 0 ${width} ${items.length * rowH + 6}`, role: 'img',
      'aria-label': title + ': ' + items.map((i) => `${i.label} ${o.format(i.value)}`).join(', ') });
    items.forEach((item, i) => {
      const y = i * rowH + 4;
      const w = o.max > 0 ? Math.max(0, Math.min(1, item.value / o.max)) * barW : 0;
      svg.append(el('text', { x: labelW - 6, y: y + 15, 'text-anchor': 'end' }, item.label));
      svg.append(el('rect', { x: labelW, y, width: barW, height: rowH - 8, fill: '#eef1f5' }));
      svg.append(el('rect', { x: labelW, y, width: w, height: rowH - 8, fill: '#1f5fa8',
        'data-bar': item.label }));
      svg.append(el('text', { x: labelW + barW + 6, y: y + 15 }, o.format(item.value)));
    });
    return box(title, svg, figureTable(title, [o.labelHeader || 'item', o.valueHeader || 'value'],
      items.map((i) => [i.label, o.format(i.value)])));
  }

  // buckets: [{label, count}] drawn as columns.
  function histogram(title, buckets, opts) {
    const o = Object.assign({ xLabel: 'size', yLabel: 'count' }, opts || {});
    const width = 640, height = 220, left = 50, bottom = 40;
    const max = Math.max(1, ...buckets.map((b) => b.count));
    const colW = (width - left - 10) / Math.max(1, buckets.length);
    const svg = el('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img',
      'aria-label': title + ': ' + buckets.map((b) => `${b.label}: ${b.count}`).join(', ') });
    svg.append(el('line', { x1: left, y1: height - bottom, x2: width, y2: height - bottom,
      stroke: '#5b6472' }));
    svg.append(el('text', { x: 4, y: 14 }, String(max)));
    svg.append(el('text', { x: 4, y: height - bottom }, '0'));
    buckets.forEach((b, i) => {
      const h = (b.count / max) * (height - bottom - 20);
      const x = left + i * colW;
      svg.append(el('rect', { x: x + 2, y: height - bottom - h, width: Math.max(1, colW - 4),
        height: h, fill: '#1e7b46', 'data-bucket': b.label }));
      if (buckets.length <= 24 || i % Math.ceil(buckets.length / 24) === 0)
        svg.append(el('text', { x: x + colW / 2, y: height - bottom + 14, 'text-anchor': 'middle' },
          b.label));
    });
    svg.append(el('text', { x: width / 2, y: height - 6, 'text-anchor': 'middle' }, o.xLabel));
    return box(title, svg, figureTable(title, [o.xLabel, o.yLabel],
      buckets.map((b) => [b.label, b.count])));
  }

  // series: [{name, color, points: [{x, y}]}] over shared x values.
  function lines(title, series, opts) {
    const o = Object.assign({ xLabel: 'x', yLabel: 'y' }, opts || {});
    const width = 640, height = 240, left = 56, bottom = 40, top = 24;
    const all = series.flatMap((s) => s.points);
    const xs = all.map((p) => p.x), ys = all.map((p) => p.y);
    const x0 = Math.min(...xs), x1 = Math.max(...xs);
    const y0 = Math.min(0, ...ys), y1 = Math.max(1e-9, ...ys);
    const sx = (x) => left + (x1 === x0 ? 0.5 : (x - x0) / (x1 - x0)) * (width - left - 16);
    const sy = (y) => height - bottom - ((y - y0) / (y1 - y0)) * (height - bottom - top);
    const svg = el('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': title });
    svg.append(el('line', { x1: left, y1: height - bottom, x2: width, y2: height - bottom,
      stroke: '#5b6472' }));
    svg.append(el('text', { x: 4, y: top }, String(+y1.toFixed(4))));
    svg.append(el('text', { x: 4, y: height - bottom }, String(+y0.toFixed(4))));
    svg.append(el('text', { x: width / 2, y: height - 6, 'text-anchor': 'middle' }, o.xLabel));
    series.forEach((s, si) => {
      if (!s.points.length) return;
      svg.append(el('polyline', { fill: 'none', stroke: s.color, 'stroke-width': 2,
        points: s.points.map((p) => `${sx(p.x)},${sy(p.y)}`).join(' ') }));
      for (const p of s.points)
        svg.append(el('circle', { cx: sx(p.x), cy: sy(p.y), r: 3, fill: s.color,
          'data-series': s.name, 'data-x': p.x }));
      svg.append(el('text', { x: left + 8 + si * 180, y: 14, fill: s.color }, '— ' + s.name));
    });
    const xsSorted = [...new Set(xs)].sort((a, b) => a - b);
    const rows = xsSorted.map((x) => [x, ...series.map((s) => {
      const p = s.points.find((q) => q.x === x);
      return p ? p.y : '';
    })]);
    return box(title, svg, figureTable(title, [o.xLabel, ...series.map((s) => s.name)], rows));
  }

  window.KanonCharts = { bars, histogram, lines, figureTable };
})();
