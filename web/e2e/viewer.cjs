// The viewer page end to end, in Debian's Chromium driven by playwright-core
// (run by tests/browser.rs against `tessera replay LOG --paused --hold
// --speed 1`):
// the canvas draws the tile, the stress toggle changes pixels, after the
// break the page's body count equals the server's, and seeking back in the
// replay restores the whole tile. Saves a screenshot after the break.
//   node viewer.cjs URL SCREENSHOT.png
const { chromium } = require('playwright-core');

const [url, screenshotPath] = process.argv.slice(2);
const CHROMIUM_ARGS = [
  '--headless=new', '--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
  '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run',
];
const TIMEOUT_MS = 60_000;
// A lockstep replay waits at a break for its fragments' modal analyses
// (each tens of seconds in a test build on two busy cores), so the waits
// across a break allow for several.
const BREAK_TIMEOUT_MS = 600_000;

function check(condition, message) {
  if (!condition) throw new Error(message);
  console.log(`ok: ${message}`);
}

// Fraction of the canvas's pixels brighter than `luminance` (0–255), and
// the raw pixels, read from a screenshot decoded in the page.
async function canvasPixels(page) {
  const png = await page.locator('#scene canvas').screenshot();
  return page.evaluate(async (base64) => {
    const image = new Image();
    image.src = `data:image/png;base64,${base64}`;
    await image.decode();
    const canvas = document.createElement('canvas');
    canvas.width = image.width;
    canvas.height = image.height;
    const context = canvas.getContext('2d');
    context.drawImage(image, 0, 0);
    return Array.from(context.getImageData(0, 0, image.width, image.height).data);
  }, png.toString('base64'));
}

function brightFraction(pixels, luminance) {
  let bright = 0;
  for (let i = 0; i < pixels.length; i += 4) {
    if (0.2126 * pixels[i] + 0.7152 * pixels[i + 1] + 0.0722 * pixels[i + 2] > luminance) bright += 1;
  }
  return bright / (pixels.length / 4);
}

function changedFraction(a, b) {
  let changed = 0;
  for (let i = 0; i < a.length; i += 4) {
    if (Math.abs(a[i] - b[i]) + Math.abs(a[i + 1] - b[i + 1]) + Math.abs(a[i + 2] - b[i + 2]) > 24) changed += 1;
  }
  return changed / (a.length / 4);
}

async function serverState(page) {
  return page.evaluate(async () => (await fetch('api/state')).json());
}

async function settle(page) {
  // Paused at a sync: the last frame arrives within a few pump rounds.
  await page.waitForTimeout(400);
}

(async () => {
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  const page = await browser.newPage({ viewport: { width: 1280, height: 760 } });
  page.setDefaultTimeout(TIMEOUT_MS);
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  try {
    await page.goto(url);
    await page.waitForFunction(() => window.tessera?.bodies() > 0);
    await page.waitForTimeout(300);
    const intact = await page.evaluate(() => tessera.bodies());
    const start = await serverState(page);
    check(intact === start.bodies.length, `the page shows the server's ${start.bodies.length} bodies`);
    // The tile is the brightest thing in the scene.
    const tile = brightFraction(await canvasPixels(page), 200);
    check(tile > 0.01, `the canvas draws the tile (${(100 * tile).toFixed(1)} % bright pixels)`);
    check(start.status.paused && start.time_s === 0, 'the replay waits at its start');
    await page.click('#play');
    await page.waitForFunction(() => tessera.status?.paused === false);

    // After the first strike: the stress map of the tile.
    await page.waitForFunction(() => tessera.stressBodies() > 0);
    await page.click('#play');
    await page.waitForFunction(() => tessera.status?.paused === true);
    await settle(page);
    const plain = await canvasPixels(page);
    await page.check('#show-stress');
    await page.waitForTimeout(300);
    const stressed = await canvasPixels(page);
    const changed = changedFraction(plain, stressed);
    check(changed > 0.01, `the stress toggle changes ${(100 * changed).toFixed(1)} % of the pixels`);
    await page.uncheck('#show-stress');
    await page.click('#play');
    await page.waitForFunction(() => tessera.status?.paused === false);

    // The break (the first fracture that leaves pieces; an earlier strike
    // may only crack the tile): the page's bodies are the server's.
    await page.waitForFunction(
      () => tessera.fractures.some((f) => f.fragments.length > 0), null, { timeout: BREAK_TIMEOUT_MS },
    );
    const breakTime = await page.evaluate(
      () => tessera.fractures.find((f) => f.fragments.length > 0).time_s,
    );
    await page.waitForFunction((t) => tessera.time_s > t + 0.3, breakTime, { timeout: BREAK_TIMEOUT_MS });
    await page.click('#play');
    await page.waitForFunction(() => tessera.status?.paused === true);
    await settle(page);
    const broken = await serverState(page);
    const shown = await page.evaluate(() => tessera.bodyIds());
    check(
      JSON.stringify(shown) === JSON.stringify(broken.bodies.map((b) => b.id).sort((a, b) => a - b)),
      `after the break at ${breakTime.toFixed(3)} s the page shows the server's ${broken.bodies.length} bodies`,
    );
    check(shown.length > intact, 'the fragments are in the scene');
    await page.screenshot({ path: screenshotPath });

    // Seek back before the break: the tile is whole again, still paused.
    const scenes = await page.evaluate(() => tessera.scenes);
    await page.evaluate(() => {
      const timeline = document.getElementById('timeline');
      timeline.value = '1';
      timeline.dispatchEvent(new Event('change'));
    });
    await page.waitForFunction((n) => tessera.scenes > n && tessera.time_s === 1, scenes);
    await settle(page);
    const sought = await serverState(page);
    check(sought.time_s === 1 && sought.bodies.length === intact, `seeking back to 1 s restores the ${intact} bodies`);
    check(await page.evaluate(() => tessera.bodies()) === intact, 'and the page shows them');
    check(errors.length === 0, `no page errors${errors.length ? `: ${errors.join('; ')}` : ''}`);
  } catch (e) {
    const state = await page.evaluate(() => JSON.stringify({
      time_s: tessera.time_s, bodies: tessera.bodies(), fractures: tessera.fractures.length,
      status: tessera.status, scenes: tessera.scenes, frames: tessera.frames, error: tessera.lastError,
    })).catch(() => 'unavailable');
    throw new Error(`${e.message}\npage state: ${state}`);
  } finally {
    await browser.close();
  }
})().catch((e) => {
  console.error(`FAILED: ${e.message}`);
  process.exit(1);
});
