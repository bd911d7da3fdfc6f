// The page's frame rate in headless Chromium (SwiftShader): loads URL at
// WIDTH×HEIGHT, waits for the scene, then prints one JSON line with the
// body count and the page's own frames per second (drawing every
// animation frame), sampled each second for SECONDS. Used by
// tools/viewer_fps.sh.
//   node fps.cjs URL [WIDTH HEIGHT SECONDS]
const { chromium } = require('playwright-core');

const [url, width = '1280', height = '720', seconds = '8'] = process.argv.slice(2);
(async () => {
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless=new', '--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
      '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run',
    ],
  });
  try {
    const page = await browser.newPage({ viewport: { width: Number(width), height: Number(height) } });
    await page.goto(url);
    await page.waitForFunction(() => window.tessera?.bodies() > 0, null, { timeout: 60_000 });
    // The page draws only what changed; here it draws every animation
    // frame, to measure the rate it can reach.
    await page.evaluate(() => { tessera.continuous = true; });
    // The first second includes shader compilation.
    await page.waitForTimeout(1500);
    const fps = [];
    for (let i = 0; i < Number(seconds); i += 1) {
      await page.waitForTimeout(1000);
      fps.push(await page.evaluate(() => tessera.fps));
    }
    const bodies = await page.evaluate(() => tessera.bodies());
    const frames = await page.evaluate(() => tessera.frames);
    fps.sort((a, b) => a - b);
    console.log(JSON.stringify({
      width: Number(width), height: Number(height), bodies, frames_received: frames,
      fps_median: Number(fps[Math.floor(fps.length / 2)].toFixed(1)),
      fps_min: Number(fps[0].toFixed(1)),
    }));
  } finally {
    await browser.close();
  }
})().catch((e) => {
  console.error(`FAILED: ${e.message}`);
  process.exit(1);
});
