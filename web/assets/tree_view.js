// The disclosure tree drawn as an icicle: the root on the left, each split
// one column further right, every node as tall as its share of the rows.
// Each cohort (leaf) is one <g data-cohort="<id>"> with the ids SHOW TREE
// uses, coloured by how many quasi-identifiers it releases. Click (or Enter
// on) a split to zoom into it; "Depth" collapses deeper splits; "Find"
// marks the cohorts whose path mentions a value.
'use strict';
(function () {
  const SVG = 'http://www.w3.org/2000/svg';
  const H = 560;

  function el(name, attrs, text) {
    const e = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function condText(step) {
    return `${step.attribute} ${step.op === '=' ? '=' : '≠'} ${step.value}`;
  }

  // The tree from the cohorts' paths (each step: attribute, op, value).
  function build(doc) {
    const root = { key: '', cond: null, children: [], rows: 0, depth: 0, parent: null,
      cohort: null, height: 0 };
    for (const c of doc.cohorts) {
      let node = root;
      for (const step of c.path) {
        const key = step.attribute + '\u0000' + step.op + '\u0000' + step.value;
        let child = node.children.find((n) => n.key === key);
        if (!child) {
          child = { key, cond: step, children: [], rows: 0, depth: node.depth + 1, parent: node,
            cohort: null, height: 0 };
          node.children.push(child);
        }
        node = child;
      }
      node.cohort = c;
    }
    (function sum(n) {
      if (!n.children.length) {
        n.rows = n.cohort ? n.cohort.rows : 0;
        n.height = 0;
        n.cohorts = n.cohort ? 1 : 0;
        return;
      }
      n.children.forEach(sum);
      n.rows = n.children.reduce((a, c) => a + c.rows, 0);
      n.height = 1 + Math.max(...n.children.map((c) => c.height));
      n.cohorts = n.children.reduce((a, c) => a + c.cohorts, 0);
    })(root);
    return root;
  }

  function colour(released, total) {
    // From pale (releases nothing) to dark green (releases every column).
    const t = total ? released / total : 0;
    const mix = (a, b) => Math.round(a + (b - a) * t);
    return `rgb(${mix(235, 30)},${mix(236, 123)},${mix(239, 70)})`;
  }

  function render(container, doc, options) {
    const attributes = Object.keys(doc.rules || {});
    const root = build(doc);
    const state = { zoom: root, depth: Infinity, query: '' };
    container.textContent = '';

    const tools = document.createElement('div');
    tools.className = 'tree-tools';
    const find = document.createElement('input');
    find.type = 'search';
    find.id = 'tree-find';
    find.placeholder = 'a value, or a cohort id';
    const findLabel = document.createElement('label');
    findLabel.append('Find', find);
    const depth = document.createElement('select');
    depth.id = 'tree-depth';
    depth.append(new Option('all splits', 'all'));
    for (let d = 1; d <= Math.min(root.height, 30); d++) depth.append(new Option(String(d), d));
    const depthLabel = document.createElement('label');
    depthLabel.append('Depth', depth);
    const up = document.createElement('button');
    up.type = 'button';
    up.className = 'secondary';
    up.textContent = 'Whole tree';
    up.id = 'tree-root';
    const status = document.createElement('p');
    status.className = 'muted';
    status.id = 'tree-status';
    status.setAttribute('aria-live', 'polite');
    tools.append(findLabel, depthLabel, up);

    const boxEl = document.createElement('div');
    boxEl.className = 'tree-box';
    const svg = el('svg', { preserveAspectRatio: 'none',
      role: 'group', 'aria-label': `Disclosure tree of ${doc.table}: ${doc.cohorts.length} ` +
        `cohorts over ${doc.rows} rows; the table of cohorts below lists the same` });
    boxEl.append(svg);
    const legend = document.createElement('p');
    legend.className = 'legend';
    legend.textContent = 'Cohorts are coloured from pale (releases no quasi-identifier) to dark ' +
      `green (releases all ${attributes.length}); height is the share of rows. Blue boxes are ` +
      'splits: select one to zoom in.';
    container.append(tools, status, boxEl, legend);

    function matches(node) {
      if (!state.query || !node.cohort) return false;
      const q = state.query.toLowerCase();
      if (node.cohort.partition.toLowerCase() === q) return true;
      return node.cohort.path.some((s) => s.value.toLowerCase().includes(q));
    }

    let W = 1000;
    function draw() {
      // One drawing unit per pixel of the box, so text is never stretched.
      W = Math.max(320, boxEl.clientWidth || 1000);
      svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
      svg.textContent = '';
      const z = state.zoom;
      const levels = Math.min(z.height, state.depth) + 1;
      const colW = W / levels;
      let hits = 0, drawn = 0;
      const place = (n, y, h) => {
        const rel = n.depth - z.depth;
        const collapsed = n.children.length && rel >= state.depth;
        const leaf = !n.children.length || collapsed;
        const x = rel * colW;
        const g = el('g', { class: 'node ' + (leaf && n.cohort ? 'leaf' : 'internal') });
        const rect = el('rect', { x, y, width: leaf ? W - x : colW, height: Math.max(h, 0.2) });
        let label;
        if (n.cohort && !n.children.length) {
          drawn++;
          g.setAttribute('data-cohort', n.cohort.partition);
          rect.setAttribute('fill', colour(n.cohort.released.length, attributes.length));
          label = `${n.cohort.partition}: ${n.rows} rows, releases ` +
            (n.cohort.released.length ? n.cohort.released.join(', ') : 'nothing');
          if (matches(n)) {
            g.classList.add('hit');
            hits++;
          }
        } else {
          label = `${n.cond ? condText(n.cond) : 'all rows'}: ${n.rows} rows in ${n.cohorts} ` +
            'cohorts' + (collapsed ? ' (collapsed)' : '');
          if (n !== z) {
            g.setAttribute('tabindex', '0');
            g.setAttribute('role', 'button');
            g.setAttribute('aria-label', 'Zoom into ' + label);
            const zoom = () => { state.zoom = n; draw(); };
            g.addEventListener('click', zoom);
            g.addEventListener('keydown', (e) => {
              if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); zoom(); }
            });
          }
        }
        g.append(el('title', {}, n.cond ? condText(n.cond) + ' — ' + label : label));
        g.append(rect);
        if (h >= 13) {
          const text = n.cohort && !n.children.length
            ? `${n.cohort.partition} (${n.rows}) ${n.cohort.released.join(', ')}`
            : `${n.cond ? condText(n.cond) : 'all rows'} (${n.rows})`;
          const max = Math.floor((leaf ? W - x : colW) / 6.5);
          g.append(el('text', { x: x + 4, y: y + Math.min(h / 2 + 4, 14) },
            text.length > max ? text.slice(0, Math.max(1, max - 1)) + '…' : text));
        }
        svg.append(g);
        if (leaf) return;
        let yy = y;
        for (const c of n.children) {
          const ch = n.rows ? (c.rows / n.rows) * h : h / n.children.length;
          place(c, yy, ch);
          yy += ch;
        }
      };
      place(z, 0, H);
      const path = [];
      for (let n = z; n && n.cond; n = n.parent) path.unshift(condText(n.cond));
      status.textContent = `${drawn} cohorts drawn` +
        (path.length ? ` inside ${path.join(' and ')}` : '') +
        (state.query ? `; ${hits} match “${state.query}”` : '');
      up.disabled = z === root;
    }

    find.addEventListener('input', () => { state.query = find.value.trim(); draw(); });
    depth.addEventListener('change', () => {
      state.depth = depth.value === 'all' ? Infinity : Number(depth.value);
      draw();
    });
    up.addEventListener('click', () => { state.zoom = root; draw(); });
    draw();
    return root;
  }

  window.KanonTree = { render, build };
})();
