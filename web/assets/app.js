// The kanon web console: a page per hash route, each drawn from the JSON
// views of the admin console's own commands (/api/show/<view>, /api/tree,
// /api/run, /api/exports). Every POST carries the session's CSRF token.
'use strict';
(function () {
  const C = window.KanonCharts;
  const state = { user: null, csrf: null, timers: [] };
  const $ = (id) => document.getElementById(id);

  function h(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') e.className = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? '' : v);
    }
    for (const c of children.flat())
      if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
    return e;
  }

  async function api(path, body) {
    const init = { credentials: 'same-origin', headers: {} };
    if (body !== undefined) {
      init.method = 'POST';
      init.headers['Content-Type'] = 'application/json';
      init.headers['X-CSRF-Token'] = state.csrf || '';
      init.body = JSON.stringify(body);
    }
    const response = await fetch(path, init);
    let doc = null;
    try { doc = await response.json(); } catch (e) { doc = { error: response.statusText }; }
    if (response.status === 401 && path !== '/login') { showLogin('Your session has ended; log in again.'); }
    return { ok: response.ok, status: response.status, doc };
  }

  // The first result table of a console answer.
  const first = (doc) => (doc && doc.results && doc.results[0]) || { columns: [], rows: [] };
  const column = (result, name) => result.columns.indexOf(name);
  const records = (result) => result.rows.map((r) => Object.fromEntries(
    result.columns.map((c, i) => [c, r[i]])));

  function table(result, caption, opts) {
    const o = opts || {};
    const t = h('table', {}, h('caption', {}, caption));
    const head = t.createTHead().insertRow();
    for (const c of result.columns) head.append(h('th', { scope: 'col' }, c));
    const body = t.createTBody();
    for (const row of result.rows) {
      const tr = body.insertRow();
      row.forEach((v, i) => {
        const td = tr.insertCell();
        const name = result.columns[i];
        if (v === null) { td.className = 'null'; td.textContent = 'NULL'; }
        else if (o.link && o.link[name]) td.append(o.link[name](v, row));
        else td.textContent = v;
        if (v !== null && /^-?[0-9.]+$/.test(v)) td.classList.add('num');
      });
    }
    return h('div', { class: 'scroll' }, t);
  }

  function problem(doc) {
    return h('p', { class: 'error', role: 'alert' },
      (doc && doc.error) || 'the request failed', doc && doc.sqlstate ? ` (SQLSTATE ${doc.sqlstate})` : '');
  }

  function notices(doc) {
    return doc && doc.notices && doc.notices.length
      ? h('div', { class: 'notices' }, doc.notices.join('\n')) : null;
  }

  // ---- login ------------------------------------------------------------

  function showLogin(message) {
    state.user = null;
    stopTimers();
    $('view').hidden = true;
    $('nav').hidden = true;
    $('logout').hidden = true;
    $('who').textContent = '';
    $('login').hidden = false;
    $('login-error').textContent = message || '';
    $('user').focus();
  }

  async function login(event) {
    event.preventDefault();
    const form = new URLSearchParams({ user: $('user').value, password: $('password').value });
    const response = await fetch('/login', { method: 'POST', credentials: 'same-origin',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: form.toString() });
    const doc = await response.json().catch(() => ({}));
    $('password').value = '';
    if (!response.ok) {
      $('login-error').textContent = doc.error || 'Login failed';
      $('password').focus();
      return;
    }
    state.user = doc.user;
    state.csrf = doc.csrf;
    enter();
  }

  async function logout() {
    await api('/logout', {});
    showLogin('Logged out.');
  }

  function enter() {
    $('login').hidden = true;
    $('nav').hidden = false;
    $('logout').hidden = false;
    $('who').textContent = state.user;
    route();
  }

  // ---- pages ------------------------------------------------------------

  function stopTimers() {
    for (const t of state.timers) clearInterval(t);
    state.timers = [];
  }

  function page(title, ...content) {
    const view = $('view');
    view.hidden = false;
    view.textContent = '';
    view.append(h('h1', {}, title), ...content);
    document.title = title + ' · kanon console';
    for (const a of document.querySelectorAll('#nav a'))
      a.toggleAttribute('aria-current', a.getAttribute('href') === (location.hash || '#/'));
    if (document.querySelector('#nav a[aria-current]'))
      document.querySelector('#nav a[aria-current]').setAttribute('aria-current', 'page');
    return view;
  }

  function figure(label, value) {
    return h('div', { class: 'figure' }, h('div', { class: 'value' }, value),
      h('div', { class: 'label' }, label));
  }

  async function overview() {
    const view = page('Overview', h('p', { class: 'muted' }, 'Loading…'));
    const [stats, policies, catalog, snapshots] = await Promise.all([
      api('/api/show/stats'), api('/api/show/policies'), api('/api/show/catalog'),
      api('/api/show/snapshots')]);
    view.querySelector('p.muted').remove();
    const s = Object.fromEntries((stats.ok ? first(stats.doc).rows : []).map((r) => [r[0], r[1]]));
    view.append(h('div', { class: 'figures', id: 'figures' },
      figure('state', s.state || '?'), figure('clients', s.clients_active || '0'),
      figure('statements passed', s.statements_passed || '0'),
      figure('rewritten', s.statements_rewritten || '0'),
      figure('denied', s.statements_denied || '0'),
      figure('guard retries', s.guard_retries || '0')));
    const total = ['statements_passed', 'statements_rewritten', 'statements_denied']
      .reduce((a, k) => a + Number(s[k] || 0), 0);
    view.append(h('section', { class: 'card' }, C.bars('Statements of restricted sessions', [
      { label: 'passed', value: Number(s.statements_passed || 0) },
      { label: 'rewritten', value: Number(s.statements_rewritten || 0) },
      { label: 'denied', value: Number(s.statements_denied || 0) }],
    { max: Math.max(1, total), format: (v) => String(v), valueHeader: 'statements' })));

    const alerts = h('ul', { class: 'alerts', id: 'alerts' });
    const pol = policies.ok ? first(policies.doc) : { columns: [], rows: [] };
    for (const p of records(pol)) {
      if (p.status && p.status !== 'built')
        alerts.append(h('li', { class: p.status.startsWith('failed') ? 'bad' : 'warn' },
          `${p.table}: ${p.status}`));
      if (p.grants && p.grants.includes('WARNING'))
        alerts.append(h('li', { class: 'warn' }, `${p.table}: ${p.grants}`));
    }
    for (const c of records(catalog.ok ? first(catalog.doc) : { columns: [], rows: [] }))
      if (c.guard && c.guard.startsWith('off'))
        alerts.append(h('li', { class: 'warn' }, `catalog of ${c.database || '(default)'}: ${c.guard}`));
    if (Number(s.audit_lost || 0) > 0)
      alerts.append(h('li', { class: 'bad' }, `audit trail: ${s.audit_lost} records lost (a sink is down)`));
    if (!alerts.children.length) alerts.append(h('li', { class: 'ok' }, 'No alerts.'));
    const exposureItem = h('li', { class: 'muted' }, 'Exposure: checking…');
    alerts.append(exposureItem);
    view.append(h('section', { class: 'card' }, h('h2', {}, 'Alerts'), alerts));
    api('/api/show/exposure').then((r) => {
      const rows = r.ok ? first(r.doc).rows.length : -1;
      exposureItem.className = rows > 0 ? 'bad' : rows === 0 ? 'ok' : 'warn';
      exposureItem.textContent = '';
      exposureItem.append(rows > 0 ? `Exposure: ${rows} paths to protected data outside kanon — `
        : rows === 0 ? 'Exposure: no path to protected data outside kanon. '
          : `Exposure: not checked (${(r.doc && r.doc.error) || 'failed'}) `,
      h('a', { href: '#/exposure' }, 'details'));
    });

    view.append(h('section', { class: 'card' }, h('h2', {}, 'Policies'),
      policies.ok ? table(pol, 'Protected tables (SHOW POLICIES)', { link: {
        table: (v) => h('a', { href: '#/table/' + encodeURIComponent(v) }, v) } })
        : problem(policies.doc)));
    view.append(h('section', { class: 'card' }, h('h2', {}, 'Replicas and snapshot versions'),
      snapshots.ok ? table(first(snapshots.doc), 'Stored snapshots (SHOW SNAPSHOTS)')
        : h('p', { class: 'muted' }, snapshots.doc.error || 'not available'),
      catalog.ok ? table(first(catalog.doc), 'Catalogs (SHOW CATALOG)') : null));
  }

  function cohortSizes(cohorts) {
    const sizes = cohorts.map((c) => c.rows).sort((a, b) => a - b);
    if (!sizes.length) return [];
    const distinct = [...new Set(sizes)];
    if (distinct.length <= 12)
      return distinct.map((v) => ({ label: String(v), count: sizes.filter((s) => s === v).length }));
    const buckets = new Map();
    for (const s of sizes) {
      const lo = 2 ** Math.floor(Math.log2(s));
      const key = `${lo}-${2 * lo - 1}`;
      buckets.set(key, (buckets.get(key) || 0) + 1);
    }
    return [...buckets].map(([label, count]) => ({ label, count }));
  }

  async function tablePage(name) {
    const view = page('Table ' + name, h('p', { class: 'muted' }, 'Loading…'));
    const q = '?table=' + encodeURIComponent(name);
    const [tree, policies, releases, predicates] = await Promise.all([
      api('/api/tree' + q), api('/api/show/policies'), api('/api/show/releases' + q),
      api('/api/show/predicates' + q)]);
    view.querySelector('p.muted').remove();
    if (!tree.ok) { view.append(problem(tree.doc)); return; }
    const doc = tree.doc;
    const policy = records(policies.ok ? first(policies.doc) : { columns: [], rows: [] })
      .find((p) => p.table === doc.table) || {};
    view.append(h('div', { class: 'figures', id: 'table-figures' },
      figure('k', String(doc.k)), figure('rows', String(doc.rows)),
      figure('cohorts', String(doc.cohorts.length)), figure('tree nodes', String(doc.nodes)),
      figure('mode', policy.mode || '?'), figure('snapshot version', policy.version || '?'),
      figure('release version', policy.release_version || '–')));

    const output = h('div', { id: 'action-output', 'aria-live': 'polite' });
    const run = async (command, button) => {
      button.disabled = true;
      output.textContent = `${command} ${doc.table}: running…`;
      const r = await api('/api/run', { command, table: doc.table });
      button.disabled = false;
      output.textContent = '';
      if (!r.ok) { output.append(problem(r.doc), notices(r.doc)); return; }
      output.append(notices(r.doc), table(first(r.doc), `${r.doc.command}`));
      if (command === 'verify') {
        const v = records(first(r.doc))[0] || {};
        const num = (k) => (v[k] === null || v[k] === undefined ? null : Number(v[k]));
        output.append(h('div', { id: 'verify-risk' }, riskBars('Re-identification risk now (VERIFY)', [
          { label: 'prosecutor highest', value: num('prosecutor_max_risk') },
          { label: 'prosecutor average', value: num('prosecutor_avg_risk') },
          { label: `share above ${v.risk_threshold}`, value: num('share_above_threshold') },
          { label: 'journalist highest', value: num('journalist_max_risk') },
          { label: 'journalist average', value: num('journalist_avg_risk') },
          { label: 'marketer', value: num('marketer_risk') }])));
      }
      if (command === 'refresh' || command === 'reanonymize') {
        const p = await api('/api/show/policies');
        const now = records(first(p.doc)).find((x) => x.table === doc.table) || {};
        output.append(h('p', { id: 'version-after' }, `Snapshot version now ${now.version}.`));
      }
    };
    const button = (label, command, cls, confirmText) => {
      const b = h('button', { type: 'button', class: cls || '', id: 'action-' + command });
      b.textContent = label;
      b.addEventListener('click', () => {
        if (confirmText && !window.confirm(confirmText)) return;
        run(command, b);
      });
      return b;
    };
    view.append(h('section', { class: 'card' }, h('h2', {}, 'Actions'),
      h('div', { class: 'actions' },
        button('Refresh', 'refresh'), button('Verify', 'verify', 'secondary'),
        button('Verify history', 'verify-history', 'secondary'),
        button('Reanonymize…', 'reanonymize', 'danger',
          'REANONYMIZE starts a new release baseline: the releases before it are no longer ' +
          'taken into account, so an analyst who kept them can intersect them with this one. ' +
          'Go on?'),
        h('a', { href: '#/exports?table=' + encodeURIComponent(doc.table) }, 'Export…')),
      output));

    const treeSection = h('section', { class: 'card', id: 'tree' },
      h('h2', {}, 'Disclosure tree'));
    view.append(treeSection);
    const treeHost = h('div');
    treeSection.append(treeHost);
    window.KanonTree.render(treeHost, doc);
    treeSection.append(h('details', {}, h('summary', {}, `All ${doc.cohorts.length} cohorts (SHOW TREE)`),
      table({ columns: ['cohort', 'rows', 'released', 'path'], rows: doc.cohorts.map((c) => [
        c.partition, String(c.rows), c.released.join(', '),
        c.path.map((s) => `${s.attribute} ${s.op} '${s.value}'`).join(' AND ') || 'TRUE']) },
      'Cohorts')));

    const attributes = Object.keys(doc.rules || {});
    const released = attributes.map((a) => ({ label: a, value: doc.rows
      ? doc.cohorts.filter((c) => c.released.includes(a)).reduce((s, c) => s + c.rows, 0) / doc.rows
      : 0 }));
    const charts = h('div', { class: 'grid' });
    charts.append(h('section', { class: 'card', id: 'released-bars' },
      C.bars('Released fraction per quasi-identifier, as built', released,
        { labelHeader: 'quasi-identifier', valueHeader: 'rows released' })));
    charts.append(h('section', { class: 'card', id: 'class-sizes' },
      C.histogram('Cohort sizes (rows per cohort; the smallest is the tree\'s k)',
        cohortSizes(doc.cohorts), { xLabel: 'rows in the cohort', yLabel: 'cohorts' })));
    view.append(charts);
    // As restricted users read the table now (a scan of the table each).
    const live = h('div', { class: 'grid', id: 'live-charts' },
      h('p', { class: 'muted' }, 'Reading the masked classes (SHOW CLASSES, SHOW UTILITY)…'));
    view.append(h('section', { class: 'card' }, h('h2', {}, 'As restricted users see it now'), live));
    Promise.all([api('/api/show/classes' + q), api('/api/show/utility' + q)]).then(([cl, ut]) => {
      live.textContent = '';
      if (cl.ok) {
        const rows = records(first(cl.doc));
        live.append(h('div', { id: 'live-classes' }, C.histogram('Class sizes (real k is the smallest)',
          rows.map((r) => ({ label: r.class_size, count: Number(r.classes) })),
          { xLabel: 'rows (or persons) in the class', yLabel: 'classes' })));
      } else live.append(problem(cl.doc));
      if (ut.ok) {
        const rows = records(first(ut.doc));
        live.append(h('div', { id: 'live-utility' }, C.bars('Released fraction per quasi-identifier',
          rows.map((r) => ({ label: r.column, value: Number(r.released_fraction) })),
          { labelHeader: 'quasi-identifier', valueHeader: 'rows released' })));
      } else live.append(problem(ut.doc));
    });

    const rel = releases.ok ? records(first(releases.doc)) : [];
    const history = h('section', { class: 'card', id: 'releases' }, h('h2', {}, 'Releases over time'));
    if (rel.length) {
      const pts = (key) => rel.filter((r) => r[key] !== null)
        .map((r) => ({ x: Number(r.version), y: Number(r[key]) }));
      history.append(h('div', { class: 'grid' },
        C.lines('Real k over the release history (VERIFY HISTORY at each release)',
          [{ name: 'real k', color: '#1f5fa8', points: pts('real_k') },
            { name: 'policy k', color: '#b3261e', points: pts('k') }],
          { xLabel: 'release version', yLabel: 'k' }),
        C.lines('Released fraction at each release', [
          { name: 'released fraction', color: '#1e7b46', points: pts('released_fraction') }],
        { xLabel: 'release version', yLabel: 'fraction' })));
      history.append(h('details', {}, h('summary', {}, 'Stored releases (SHOW RELEASES)'),
        table(first(releases.doc), 'Releases')));
    } else {
      history.append(h('p', { class: 'muted' }, releases.ok
        ? 'No stored releases yet (the release history records each refresh of a table with a row key).'
        : (releases.doc.error || 'not available')));
    }
    view.append(history);
    if (predicates.ok)
      view.append(h('section', { class: 'card' }, h('details', {},
        h('summary', {}, 'Release rules and masks (SHOW PREDICATES)'),
        table(first(predicates.doc), 'Release rules'))));
  }

  async function exportsPage(params) {
    const view = page('Exports');
    const policies = await api('/api/show/policies');
    const tables = policies.ok ? records(first(policies.doc)).map((p) => p.table) : [];
    const select = h('select', { id: 'export-table', name: 'table' },
      tables.map((t) => h('option', { value: t, selected: t === params.get('table') }, t)));
    const field = (id, label, attrs) => [h('label', { for: id }, label),
      h('input', Object.assign({ id, name: id }, attrs || {}))];
    const algorithm = h('select', { id: 'algorithm', name: 'algorithm' },
      ['flash', 'bfs', 'mondrian'].map((a) => h('option', { value: a }, a)));
    const message = h('p', { id: 'export-message', role: 'status' });
    const form = h('form', { id: 'export-form' },
      h('label', { for: 'export-table' }, 'Table'), select,
      ...field('target_table', 'Target table (schema.table; empty: the policy\'s default)',
        { placeholder: 'published.adult' }),
      ...field('csv_path', 'or a CSV file on the kanon host', { placeholder: '/tmp/adult.csv' }),
      ...field('k', 'k (empty: the policy\'s)', { inputmode: 'numeric' }),
      ...field('suppression', 'Suppression limit (fraction of rows)', { placeholder: '0.02' }),
      h('label', { for: 'algorithm' }, 'Algorithm'), algorithm,
      h('label', {}, h('input', { type: 'checkbox', id: 'replace' }), ' Replace an existing target'),
      h('p', { class: 'actions' }, h('button', { type: 'submit', id: 'export-start' }, 'Start export'),
        h('button', { type: 'submit', id: 'export-preview', class: 'secondary' },
          'Preview the cost (dry run)')), message);
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      message.textContent = '';
      delete message.dataset.started;
      const body = { table: select.value };
      // The preview runs the search and the report but writes nothing.
      if (e.submitter && e.submitter.id === 'export-preview') body.dry_run = 'true';
      for (const k of ['target_table', 'csv_path', 'k', 'suppression'])
        if ($(k).value.trim()) body[k] = $(k).value.trim();
      body.algorithm = algorithm.value;
      if ($('replace').checked) body.replace = 'true';
      const r = await api('/api/exports', body);
      message.textContent = r.ok ? `Export ${r.doc.job} started: ${r.doc.command}` : r.doc.error;
      message.className = r.ok ? '' : 'error';
      if (r.ok) message.dataset.started = String(r.doc.job);
      refreshJobs();
    });
    const jobs = h('div', { id: 'jobs' });
    const past = h('div', { id: 'past-exports' });
    view.append(h('div', { class: 'grid' }, h('section', { class: 'card' },
      h('h2', {}, 'Start an export'), form),
    h('section', { class: 'card' }, h('h2', {}, 'Started here'), jobs)),
    h('section', { class: 'card' }, h('h2', {}, 'Published exports (SHOW EXPORTS)'), past));

    // Answers can arrive out of order (a poll and a click's refresh): an
    // older answer than the one drawn would show a finished job running.
    let asked = 0, drawn = 0;
    async function refreshJobs() {
      const mine = ++asked;
      const r = await api('/api/exports/jobs');
      if (!r.ok || mine < drawn) return;
      drawn = mine;
      jobs.textContent = '';
      if (!r.doc.jobs.length) jobs.append(h('p', { class: 'muted' }, 'None yet.'));
      let running = false;
      for (const j of [...r.doc.jobs].reverse()) {
        running = running || j.state === 'running';
        const pct = Math.round(100 * j.progress);
        const cancel = h('button', { type: 'button', class: 'danger', 'data-cancel': j.id }, 'Cancel');
        cancel.addEventListener('click', async () => {
          cancel.disabled = true;
          await api(`/api/exports/jobs/${j.id}/cancel`, {});
          refreshJobs();
        });
        jobs.append(h('div', { class: 'job', 'data-job': j.id, 'data-state': j.state },
          h('div', {}, h('strong', {}, `#${j.id} ${j.table}`), ` — ${j.state}`,
            j.state === 'running' ? h('span', {}, ' ', cancel) : null),
          h('progress', { max: '100', value: String(pct), 'aria-label': `export ${j.id} progress` }),
          h('span', { class: 'muted', 'data-progress': j.id }, `${pct}%`),
          j.notices.length ? h('div', { class: 'notices' }, j.notices[j.notices.length - 1]) : null,
          j.error ? h('p', { class: 'error' }, j.error) : null,
          j.result ? table(j.result, 'Result') : null));
      }
      if (!running) { stopTimers(); loadPast(); }
      else if (!state.timers.length) state.timers.push(setInterval(refreshJobs, 1000));
    }

    async function loadPast() {
      const r = await api('/api/show/exports');
      past.textContent = '';
      if (!r.ok) { past.append(problem(r.doc)); return; }
      const result = first(r.doc);
      const target = column(result, 'target');
      past.append(table(result, 'Exports', { link: {
        id: (v, row) => h('span', {}, v, ' ', h('a', { href: `/exports/${v}/report`, target: '_blank', rel: 'noopener' }, 'report'),
          row[target] && row[target].endsWith('.csv') ? [' ', h('a', { href: `/exports/${v}/csv` }, 'CSV')] : null) } }));
      const rows = records(result);
      if (rows.length) {
        const last = rows.reduce((a, b) => (Number(b.id) > Number(a.id) ? b : a));
        const report = await fetch(`/exports/${last.id}/json`, { credentials: 'same-origin' });
        if (report.ok) past.prepend(reportCharts(await report.json(), last));
      }
    }
    refreshJobs();
  }

  // Risk figures as bars (0 to 1), the same names as VERIFY's columns.
  function riskBars(title, figures) {
    const items = figures.filter((f) => f.value !== null && f.value !== undefined && !Number.isNaN(f.value));
    return C.bars(title, items, { format: (v) => v.toFixed(4), labelHeader: 'figure',
      valueHeader: 'risk (0 to 1)' });
  }

  // The charts of an export's JSON report: utility per column and risk.
  function reportCharts(rep, row) {
    const box = h('div', { class: 'grid', id: 'report-charts' });
    const attrs = rep.attributes || [];
    if (attrs.length) {
      box.append(C.bars(`Export ${row.id}: released fraction per column`,
        attrs.map((a) => ({ label: a.name, value: Number(a.released_fraction || 0) })),
        { labelHeader: 'column', valueHeader: 'values published below the hierarchy top' }));
      if (attrs.some((a) => a.precision !== null && a.precision !== undefined))
        box.append(C.bars(`Export ${row.id}: precision loss per column`,
          attrs.map((a) => ({ label: a.name, value: Number(a.precision || 0) })),
          { labelHeader: 'column', valueHeader: 'generalization height used' }));
    }
    const hist = rep.class_size_histogram || [];
    if (hist.length)
      box.append(C.histogram(`Export ${row.id}: class sizes`, hist.map((b) => ({
        label: String(b.rows !== undefined ? b.rows : b.persons), count: Number(b.classes) })),
      { xLabel: rep.counts === 'persons' ? 'persons in the class' : 'rows in the class',
        yLabel: 'classes' }));
    const r = rep.risk;
    if (r && r.prosecutor) {
      const figures = [
        { label: 'prosecutor highest', value: r.prosecutor.highest },
        { label: 'prosecutor average', value: r.prosecutor.average },
        { label: `share above ${r.threshold}`, value: r.prosecutor.share_above_threshold },
        { label: 'marketer', value: r.marketer }];
      if (r.journalist)
        figures.push({ label: 'journalist highest', value: r.journalist.highest },
          { label: 'journalist average', value: r.journalist.average });
      box.append(riskBars(`Export ${row.id}: re-identification risk (docs/risk.md)`, figures));
    }
    return box;
  }

  async function exposurePage(params) {
    const view = page('Exposure');
    const role = h('input', { id: 'exposure-role', value: params.get('role') || '' });
    const go = h('button', { type: 'submit' }, 'Check');
    const out = h('div', { id: 'exposure-out' }, h('p', { class: 'muted' }, 'Checking…'));
    const form = h('form', { class: 'actions' }, h('label', { for: 'exposure-role' }, 'Role (empty: every restricted role)'), role, go);
    form.addEventListener('submit', (e) => { e.preventDefault(); location.hash = '#/exposure?role=' + encodeURIComponent(role.value.trim()); });
    view.append(h('p', {}, 'Paths by which a restricted login reads protected data through ' +
      'PostgreSQL\'s own privileges, without kanon, with the statement that closes each.'), form, out);
    const r = await api('/api/show/exposure' + (role.value ? '?role=' + encodeURIComponent(role.value) : ''));
    out.textContent = '';
    if (!r.ok) { out.append(problem(r.doc)); return; }
    out.append(notices(r.doc), first(r.doc).rows.length
      ? table(first(r.doc), 'SHOW EXPOSURE') : h('p', { class: 'ok' }, 'No exposure found.'));
  }

  async function auditPage(params) {
    const view = page('Audit trail');
    const r = await api('/api/show/audit');
    if (!r.ok) { view.append(problem(r.doc)); return; }
    const result = first(r.doc);
    const filters = ['user', 'decision', 'rule', 'tables'];
    const inputs = {};
    const form = h('form', { class: 'actions', id: 'audit-filters' });
    for (const f of filters) {
      const values = [...new Set(records(result).map((x) => x[f]).filter((v) => v))].sort();
      inputs[f] = h('select', { id: 'audit-' + f, name: f },
        h('option', { value: '' }, 'any'), values.map((v) => h('option', { value: v, selected: params.get(f) === v }, v)));
      form.append(h('label', { for: 'audit-' + f }, f === 'tables' ? 'table' : f), inputs[f]);
    }
    const out = h('div', { id: 'audit-out' });
    const apply = () => {
      const idx = Object.fromEntries(filters.map((f) => [f, column(result, f)]));
      const rows = result.rows.filter((row) => filters.every((f) => !inputs[f].value ||
        (f === 'tables' ? (row[idx[f]] || '').split(', ').includes(inputs[f].value) : row[idx[f]] === inputs[f].value)));
      out.textContent = '';
      out.append(h('p', { class: 'muted' }, `${rows.length} of ${result.rows.length} latest records`),
        table({ columns: result.columns, rows: rows.slice().reverse() }, 'Latest audit records, newest first'));
    };
    for (const f of filters) inputs[f].addEventListener('change', apply);
    view.append(form, out);
    apply();
  }

  async function route() {
    if (!state.user) return;
    stopTimers();
    const hash = location.hash || '#/';
    const [path, query] = hash.slice(1).split('?');
    const params = new URLSearchParams(query || '');
    try {
      if (path.startsWith('/table/')) await tablePage(decodeURIComponent(path.slice(7)));
      else if (path === '/exports') await exportsPage(params);
      else if (path === '/exposure') await exposurePage(params);
      else if (path === '/audit') await auditPage(params);
      else await overview();
    } catch (e) {
      page('Something went wrong', h('p', { class: 'error' }, String(e)));
    }
    $('main').focus({ preventScroll: true });
  }

  async function start() {
    $('login-form').addEventListener('submit', login);
    $('logout').addEventListener('click', logout);
    window.addEventListener('hashchange', route);
    const r = await api('/api/session');
    if (r.ok && r.doc.user) {
      state.user = r.doc.user;
      state.csrf = r.doc.csrf;
      enter();
    } else {
      showLogin('');
    }
  }

  document.addEventListener('DOMContentLoaded', start);
})();
