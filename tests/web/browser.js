// Drives kanon's web console in Debian's Chromium (playwright-core, headless)
// and asserts what a person would check by looking. Run by
// web_console_test.cc, which starts PostgreSQL and kanon and passes:
//   KANON_WEB_URL, KANON_WEB_USER, KANON_WEB_PASSWORD, KANON_PG_CONNINFO
//   (a direct connection, to hold a lock), KANON_TREE_TABLE and
//   KANON_TREE_COHORTS (a file of SHOW TREE's cohort ids, one per line),
//   KANON_EXPORT_TABLE, KANON_EXPORT_DIR, KANON_SCREENSHOTS.
// Prints "ok: <step>" per step; exits 1 with the reason on the first failure.
'use strict';
const fs = require('fs');
const path = require('path');
const { chromium } = require('playwright-core');
const { Client } = require('pg');

const env = (name) => {
  if (!process.env[name]) throw new Error(`${name} is not set`);
  return process.env[name];
};
const url = env('KANON_WEB_URL');
const shots = env('KANON_SCREENSHOTS');
const exportDir = env('KANON_EXPORT_DIR');
const treeTable = env('KANON_TREE_TABLE');
const exportTable = env('KANON_EXPORT_TABLE');
const expectedCohorts = fs.readFileSync(env('KANON_TREE_COHORTS'), 'utf8').split('\n').filter(Boolean);
const WAIT = { timeout: 120000 };

function check(condition, message) {
  if (!condition) throw new Error(message);
}
function ok(step) { console.log('ok: ' + step); }

// Clicks a button of the export form; the id of the job it started (jobs
// other tests started are listed too, so steps follow their own ids).
async function startJob(page, button) {
  // The message still shows the job started before until the click's answer
  // arrives: wait for a new job id, or an error.
  const before = await page.getAttribute('#export-message', 'data-started');
  await page.click(button);
  await page.waitForFunction((prev) => {
    const m = document.getElementById('export-message');
    return m.className === 'error' || (m.dataset.started && m.dataset.started !== prev);
  }, before, WAIT);
  const id = await page.getAttribute('#export-message', 'data-started');
  check(id, 'the export was not started: ' + await page.textContent('#export-message'));
  return id;
}

async function main() {
  fs.mkdirSync(shots, { recursive: true });
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    let errors = [];
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('pageerror', (e) => errors.push(String(e)));

    await page.goto(url);
    await page.waitForSelector('#login-form', { state: 'visible' });
    check(await page.locator('#view').isHidden(), 'the console shows data before login');
    // Keyboard: the form takes the focus, Tab goes on to the password.
    check(await page.evaluate(() => document.activeElement.id === 'user'),
      'the login form does not take the focus');
    await page.keyboard.press('Tab');
    check(await page.evaluate(() => document.activeElement.id === 'password'),
      'Tab does not go from user to password');
    await page.fill('#user', env('KANON_WEB_USER'));
    await page.fill('#password', 'not-the-password');
    await page.click('#login-form button[type=submit]');
    await page.waitForFunction(() => document.getElementById('login-error').textContent.length > 0);
    const refusal = await page.textContent('#login-error');
    check(refusal.includes('wrong user or password'), 'a wrong password gave: ' + refusal);
    check(await page.locator('#view').isHidden(), 'a wrong password opened the console');
    await page.screenshot({ path: path.join(shots, '01-login-refused.png') });
    ok('a wrong password is refused');

    errors = [];  // the refused login's 401 is expected; from here on nothing may fail
    await page.fill('#password', env('KANON_WEB_PASSWORD'));
    await page.press('#password', 'Enter');
    await page.waitForSelector('#figures', WAIT);
    await page.waitForSelector('#alerts li:not(.muted)', WAIT);
    check((await page.textContent('#who')) === env('KANON_WEB_USER'), 'the page does not say who logged in');
    await page.screenshot({ path: path.join(shots, '02-overview.png'), fullPage: true });
    ok('logged in; overview shown');

    // The tree: one element per SHOW TREE cohort, with the same ids.
    await page.goto(`${url}#/table/${encodeURIComponent(treeTable)}`);
    await page.waitForSelector('#tree [data-cohort]', WAIT);
    const drawn = await page.$$eval('#tree [data-cohort]', (els) => els.map((e) => e.dataset.cohort));
    check(drawn.length === expectedCohorts.length,
      `${drawn.length} cohorts drawn, SHOW TREE has ${expectedCohorts.length}`);
    const missing = expectedCohorts.filter((id) => !drawn.includes(id));
    check(missing.length === 0, 'cohorts of SHOW TREE not drawn: ' + missing.slice(0, 5).join(', '));
    check(await page.locator('#released-bars [data-bar]').count() > 0, 'no released-fraction bars');
    check(await page.locator('#class-sizes [data-bucket]').count() > 0, 'no class-size histogram');
    check(await page.locator('#releases [data-series="policy k"]').count() > 0, 'no release-history line');
    await page.screenshot({ path: path.join(shots, '03-table.png'), fullPage: true });
    ok(`the tree of ${treeTable} draws all ${drawn.length} cohorts of SHOW TREE`);

    // Find, zoom (keyboard) and back.
    const value = await page.$eval('#tree [data-cohort] title', (t) => t.textContent);
    const term = value.split(' = ')[1] ? value.split(' = ')[1].split(' ')[0] : '';
    await page.fill('#tree-find', term || expectedCohorts[0]);
    const hits = await page.locator('#tree .hit').count();
    check(hits > 0, `searching "${term}" marks no cohort`);
    check((await page.textContent('#tree-status')).includes(`${hits} match`), 'the search count is not shown');
    await page.focus('#tree g[role=button]');
    await page.keyboard.press('Enter');
    const zoomed = await page.locator('#tree [data-cohort]').count();
    check(zoomed < drawn.length && zoomed > 0, `zooming in drew ${zoomed} of ${drawn.length} cohorts`);
    await page.click('#tree-root');
    check(await page.locator('#tree [data-cohort]').count() === drawn.length, 'Whole tree did not zoom out');
    ok(`find marks ${hits} cohorts; zoom by keyboard shows ${zoomed}`);

    // REFRESH changes the snapshot version.
    const before = Number(await page.$eval('#table-figures .figure:nth-child(6) .value', (e) => e.textContent));
    await page.click('#action-refresh');
    await page.waitForSelector('#version-after', WAIT);
    const after = Number((await page.textContent('#version-after')).match(/[0-9]+/)[0]);
    check(after > before, `REFRESH left the version at ${after} (was ${before})`);
    await page.click('#action-verify');
    // attached, not visible: a bar of a risk 0 has no width.
    await page.waitForSelector('#verify-risk [data-bar]', { ...WAIT, state: 'attached' });
    await page.waitForSelector('#live-charts svg', WAIT);
    check(await page.locator('#verify-risk [data-bar="prosecutor highest"]').count() === 1,
      'VERIFY drew no prosecutor risk');
    check(await page.locator('#live-classes [data-bucket]').count() > 0, 'no live class-size histogram');
    check(await page.locator('#live-utility [data-bar]').count() > 0, 'no live utility bars');
    // The refresh made a release linked to the one before: its real k is drawn.
    await page.reload();
    await page.waitForSelector('#releases [data-series="real k"]', WAIT);
    ok(`REFRESH moved the version from ${before} to ${after}; VERIFY answered; real k drawn`);

    // An export that runs to 100 %, its report and its CSV.
    await page.goto(`${url}#/exports?table=${encodeURIComponent(exportTable)}`);
    await page.waitForSelector('#export-form');
    // First its cost (a dry run), then the export itself.
    await page.fill('#csv_path', path.join(exportDir, 'done.csv'));
    const preview = await startJob(page, '#export-preview');
    await page.waitForSelector(`[data-job="${preview}"][data-state="done"]`, WAIT);
    check((await page.textContent(`[data-job="${preview}"]`)).includes('dry run, nothing written'),
      'the preview does not say it wrote nothing: ' + await page.textContent(`[data-job="${preview}"]`));
    check(!fs.existsSync(path.join(exportDir, 'done.csv')), 'the preview wrote the CSV');
    const done = await startJob(page, '#export-start');
    await page.waitForSelector(`[data-job="${done}"][data-state="done"]`, WAIT);
    const pct = await page.textContent(`[data-job="${done}"] [data-progress]`);
    check(pct.trim() === '100%', 'a finished export shows ' + pct);
    const csvLink = '#past-exports tr:has-text("done.csv") a[href$="/csv"]';
    await page.waitForSelector(csvLink, WAIT);
    await page.waitForSelector('#report-charts svg', WAIT);
    const csvHref = await page.getAttribute(csvLink, 'href');
    const csv = await page.evaluate(async (h) => (await fetch(h)).text(), csvHref);
    check(csv === fs.readFileSync(path.join(exportDir, 'done.csv'), 'utf8') && csv.split('\n').length > 2,
      'the CSV download is not the file written');
    await page.screenshot({ path: path.join(shots, '04-export-done.png'), fullPage: true });
    ok('a preview wrote nothing; an export reached 100%; report charts and CSV download shown');

    // Another, held at its start by a lock, then cancelled.
    const pg = new Client({ connectionString: env('KANON_PG_CONNINFO') });
    await pg.connect();
    await pg.query('BEGIN');
    await pg.query(`LOCK TABLE ${exportTable} IN ACCESS EXCLUSIVE MODE`);
    await page.fill('#csv_path', path.join(exportDir, 'cancelled.csv'));
    const held = await startJob(page, '#export-start');
    // The lock goes only once kanon has taken the cancel (its answer came
    // back): released on the click alone, the export could finish first.
    const cancelled = page.waitForResponse(
      (r) => r.url().endsWith(`/api/exports/jobs/${held}/cancel`) && r.status() === 200, WAIT);
    await page.click(`[data-job="${held}"][data-state="running"] [data-cancel]`, WAIT);
    await cancelled;
    await pg.query('ROLLBACK');
    await pg.end();
    await page.waitForSelector(`[data-job="${held}"][data-state="cancelled"]`, WAIT);
    check(!fs.existsSync(path.join(exportDir, 'cancelled.csv')), 'a cancelled export left its file');
    ok('a running export was cancelled and wrote nothing');

    await page.goto(`${url}#/exposure`);
    await page.waitForFunction(() => !/Checking/.test(document.getElementById('exposure-out').textContent), null, WAIT);
    await page.screenshot({ path: path.join(shots, '05-exposure.png'), fullPage: true });
    await page.goto(`${url}#/audit`);
    await page.waitForSelector('#audit-out table', WAIT);
    const records = await page.locator('#audit-out tbody tr').count();
    check(records > 0, 'the audit page lists no record');
    await page.selectOption('#audit-decision', { index: 1 });
    const filtered = await page.locator('#audit-out tbody tr').count();
    check(filtered > 0 && filtered <= records, `the decision filter left ${filtered} of ${records}`);
    await page.screenshot({ path: path.join(shots, '06-audit.png'), fullPage: true });
    ok(`exposure and audit pages (${records} records, ${filtered} after a filter)`);

    // A phone-sized screen: nothing wider than the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [name, route, ready] of [['overview', '#/', '#alerts'],
      ['table', `#/table/${encodeURIComponent(treeTable)}`, '#live-charts svg'],
      ['exports', '#/exports', '#past-exports > .scroll > table']]) {
      await page.goto(url + route);
      await page.waitForSelector(ready, WAIT);
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      check(width <= 392, `${route} is ${width}px wide on a 390px screen`);
      await page.screenshot({ path: path.join(shots, `07-phone-${name}.png`), fullPage: true });
    }
    ok('usable at 390px wide');

    await page.setViewportSize({ width: 1280, height: 800 });
    await page.click('#logout');
    await page.waitForSelector('#login-form', { state: 'visible' });
    const status = await page.evaluate(async () => (await fetch('/api/show/stats')).status);
    check(status === 401, 'after logout the API answered ' + status);
    errors = errors.filter((e) => !/status of 401/.test(e));  // the check just above
    check(errors.length === 0, 'console errors: ' + errors.join(' | '));
    ok('logged out; no console errors');
  } catch (e) {
    // What the page showed when a step failed: its address, its status
    // lines and a screenshot, so a failure in CI can be read afterwards.
    const pages = browser.contexts().flatMap((c) => c.pages());
    if (pages.length) {
      const last = pages[pages.length - 1];
      const text = async (sel) => (await last.locator(sel).allTextContents()).join(' | ') || '(none)';
      console.error(`page ${last.url()}`);
      for (const sel of ['#export-message', '#jobs', '.error']) console.error(`${sel}: ${await text(sel)}`);
      await last.screenshot({ path: path.join(shots, 'failure.png'), fullPage: true }).catch(() => {});
    }
    throw e;
  } finally {
    await browser.close();
  }
  console.log('browser test passed');
}

main().catch((e) => {
  console.error('browser test failed: ' + (e && e.stack ? e.stack : e));
  process.exit(1);
});
