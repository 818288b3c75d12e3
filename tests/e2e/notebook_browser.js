// SPDX-License-Identifier: Apache-2.0
// A real browser on a Jupyter Notebook server: Debian's chromium, headless, driven by
// puppeteer-core (tests/tools). Opens NOTEBOOK on the server at $NB_URL (the URL envpin printed,
// token included: from the environment, never an argument), creating the notebook first through
// the contents API, runs each CELL in the page as a user would (the page's own notebook code,
// over its websocket to the kernel) and prints what the page shows under the last one.
//   NB_URL=http://127.0.0.1:PORT/?token=... node notebook_browser.js NOTEBOOK CELL...
'use strict';
const path = require('path');
const puppeteer = require(path.join(__dirname, '../tools/node_modules/puppeteer-core'));

async function main() {
  const [notebook, ...cells] = process.argv.slice(2);
  const url = new URL(process.env.NB_URL);
  const token = url.searchParams.get('token');
  const api = `${url.origin}/api/contents/${notebook}`;
  const headers = {Authorization: `token ${token}`};
  if ((await fetch(api, {headers})).status === 404) {
    const made = await fetch(api, {
      method: 'PUT',
      headers: {...headers, 'Content-Type': 'application/json'},
      body: JSON.stringify({type: 'notebook', content: {cells: [], metadata: {}, nbformat: 4, nbformat_minor: 5}}),
    });
    if (made.status !== 201) throw new Error(`creating ${notebook}: HTTP ${made.status}`);
  }
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
  try {
    const page = await browser.newPage();
    page.setDefaultTimeout(60000);
    await page.goto(`${url.origin}/notebooks/${notebook}?token=${token}`, {waitUntil: 'load'});
    await page.waitForFunction(
        () => window.Jupyter && Jupyter.notebook && Jupyter.notebook.kernel && Jupyter.notebook.kernel.is_connected());
    let shown = '';
    for (const code of cells) {
      const index = await page.evaluate((text) => {
        const cell = Jupyter.notebook.insert_cell_at_bottom('code');
        cell.set_text(text);
        cell.execute();
        return Jupyter.notebook.find_cell_index(cell);
      }, code);
      // Done when the kernel has answered the cell: its prompt shows a number instead of '*'.
      await page.waitForFunction((i) => {
        const prompt = document.querySelectorAll('.cell')[i].querySelector('.input_prompt');
        return prompt && /\[\d+\]/.test(prompt.textContent);
      }, {}, index);
      shown = await page.evaluate((i) => {
        const out = document.querySelectorAll('.cell')[i].querySelector('.output_subarea');
        return out ? out.innerText : '';
      }, index);
    }
    process.stdout.write(shown.trim() + '\n');
  } finally {
    await browser.close();
  }
}

main().catch((e) => {
  process.stderr.write(`notebook_browser: ${e.message}\n`);
  process.exit(1);
});
