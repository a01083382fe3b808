// End-to-end test of the web console in headless Chromium against a real Tidemark server.
//
//   cd e2e && npm ci && node console.mjs [path/to/tidemark]
//
// Starts `tidemark serve` on a fresh SQLite database with a new API key, then, finding
// things by their accessible names as a screen reader would: signs in with a wrong key
// (refused) and the right one, tracks a number, sees it on the board, opens the shipment
// page (containers, timeline, and its route map drawn over the offline basemap), creates a
// webhook, sends it a test delivery and sees the tracking notification in its delivery log,
// defines custom fields (one a list with an option), edits the shipment's references, tags and
// a custom field, filters the board by tag and orders it by ETA, stops and resumes tracking,
// drops a PDF on the Documents page, finds its text preview (never the PDF in a frame) and
// download and links it to the shipment, tracks a number whose carrier must be chosen and a
// CSV file of numbers, creates and revokes a read-only API key, reads the carriers' health,
// reads the API docs at /docs, and signs out. Fails on any page script error, on any
// Content-Security-Policy violation (every page is sent with one) and on any request to a
// host other than the server. With SCREENSHOTS=dir set, saves PNGs there.
// Skips (exit 0, says so) when Chromium is absent.

import { spawn, execFileSync } from "node:child_process";
import { createServer } from "node:http";
import { existsSync, mkdtempSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium } from "playwright-core";

const chromiumPath = process.env.CHROMIUM ?? "/usr/bin/chromium";
if (!existsSync(chromiumPath)) {
  console.log(`skipped: no Chromium at ${chromiumPath} (apt-get install chromium)`);
  process.exit(0);
}
const target = process.env.CARGO_TARGET_DIR ?? resolve("../target");
const binary = resolve(process.argv[2] || join(target, "debug", "tidemark"));
const screenshots = process.env.SCREENSHOTS ? resolve(process.env.SCREENSHOTS) : null;

const dir = mkdtempSync(join(tmpdir(), "tidemark-e2e-"));
const port = 20000 + Math.floor(Math.random() * 20000);
const origin = `http://127.0.0.1:${port}`;
const env = {
  ...process.env,
  TIDEMARK_DATABASE_URL: `sqlite://${dir}/tidemark.db`,
  TIDEMARK_LISTEN: `127.0.0.1:${port}`,
  TIDEMARK_STORAGE_URL: `file://${dir}/documents`,
  // The sandbox voyage moves fast enough to have events at once.
  TIDEMARK_DEMO_TIME_SCALE: "600",
  // The webhook receiver below listens on loopback.
  TIDEMARK_WEBHOOKS_ALLOW_PRIVATE: "true",
};

// A webhook receiver: answers 200 and counts what it gets.
const received = [];
const receiver = createServer((request, response) => {
  let body = "";
  request.on("data", (chunk) => (body += chunk));
  request.on("end", () => {
    received.push(body);
    response.writeHead(200, { "content-type": "text/plain" }).end("received");
  });
});
await new Promise((resolve) => receiver.listen(0, "127.0.0.1", resolve));
const hookUrl = `http://127.0.0.1:${receiver.address().port}/hook`;
const key = execFileSync(binary, ["api-keys", "create", "--account", "e2e"], { env })
  .toString()
  .trim();
const server = spawn(binary, ["serve"], { env, stdio: ["ignore", "ignore", process.env.E2E_SERVER_LOG ? "inherit" : "ignore"] });

const failures = [];
let browser;
try {
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${origin}/healthz`)).ok) break;
    } catch {}
    if (i > 100) throw new Error("the server did not start");
    await new Promise((r) => setTimeout(r, 200));
  }
  browser = await chromium.launch({
    executablePath: chromiumPath,
    args: [
      "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
    ],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  await context.route("**/*", (route) => {
    const url = new URL(route.request().url());
    // Chromium's own PDF viewer loads its parts from inside the browser, not a network.
    if (["chrome:", "chrome-extension:", "data:", "blob:"].includes(url.protocol)) return route.continue();
    if (url.origin !== origin) {
      failures.push(`request to another host: ${url}`);
      return route.abort();
    }
    return route.continue();
  });
  // Every page runs under a CSP: anything it refuses (an inline script or style, an eval,
  // a load from elsewhere) is a failure, reported both by the page's own event and by
  // Chromium's console message.
  await context.exposeBinding("__tidemarkCspViolation", ({ page }, violation) => {
    failures.push(`CSP violation on ${page.url()}: ${violation}`);
  });
  await context.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (event) => {
      window.__tidemarkCspViolation(
        `${event.effectiveDirective} refused ${event.blockedURI || "inline"} (${event.sourceFile || ""}:${event.lineNumber})`,
      );
    });
  });
  const page = await context.newPage();
  page.on("pageerror", (error) => failures.push(`page script error: ${error.message}`));
  page.on("console", (message) => {
    if (/Content Security Policy|securitypolicyviolation/i.test(message.text()))
      failures.push(`CSP violation (console): ${message.text()}`);
    // A refused sign-in answers 401 on purpose; Chromium logs every non-2xx load.
    else if (message.type() === "error" && !message.text().startsWith("Failed to load resource"))
      failures.push(`console error: ${message.text()}`);
  });

  const step = (name) => console.log(`- ${name}`);
  const heading = (name) => page.getByRole("heading", { name, exact: true });

  step("a visitor is sent to sign in (a page under a CSP, framed nowhere); a wrong key is refused");
  const first = await page.goto(`${origin}/`);
  await heading("Sign in").waitFor();
  const policy = first.headers()["content-security-policy"] ?? "";
  if (!/script-src 'self'(;|$)/.test(policy) || !policy.includes("frame-ancestors 'none'"))
    failures.push(`the sign-in page's CSP is ${JSON.stringify(policy)}`);
  await page.getByLabel("API key").fill("tmk_wrong");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("alert").filter({ hasText: "not accepted" }).waitFor();

  step("the right key signs in to the board");
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await heading("Shipments").waitFor();
  for (const name of ["Shipments", "Track", "Documents", "Webhooks", "Custom fields", "API keys", "Carriers"]) {
    await page.getByRole("link", { name, exact: true }).waitFor();
  }

  step("creating a webhook and sending it a test delivery");
  await page.getByRole("link", { name: "Webhooks", exact: true }).click();
  await heading("Webhooks").waitFor();
  await page.getByLabel("URL", { exact: true }).fill(hookUrl);
  await page.getByLabel("tracking_request.succeeded").check();
  await page.getByRole("button", { name: "Create webhook" }).click();
  await heading("Webhook").waitFor();
  await page.getByRole("button", { name: "Send test" }).click();
  await page.getByRole("status").filter({ hasText: "Delivered: tracking_request.succeeded → HTTP 200" }).waitFor();
  const webhookPage = page.url().replace(/\/test$/, "");

  step("defining custom fields, one a list with an option");
  await page.getByRole("link", { name: "Custom fields", exact: true }).click();
  await heading("Custom fields").waitFor();
  await page.getByLabel("Name", { exact: true }).fill("Desk");
  await page.getByLabel("API slug").fill("desk");
  await page.getByRole("button", { name: "Create custom field" }).click();
  await heading("Custom field Desk").waitFor();
  await page.getByRole("link", { name: "All custom fields" }).click();
  await page.getByLabel("Name", { exact: true }).fill("Incoterm");
  await page.getByLabel("API slug").fill("incoterm");
  await page.getByLabel("Type", { exact: true }).selectOption("enum");
  await page.getByRole("button", { name: "Create custom field" }).click();
  await heading("Custom field Incoterm").waitFor();
  await page.getByLabel("Option value").fill("FOB");
  await page.getByLabel("Option label").fill("Free on board");
  await page.getByRole("button", { name: "Add option" }).click();
  await page.getByRole("cell", { name: "FOB", exact: true }).waitFor();
  await page.getByLabel("Label of FOB").waitFor();

  step("tracking a number");
  await page.getByRole("link", { name: "Track", exact: true }).click();
  await heading("Track").waitFor();
  await page.getByLabel("Number", { exact: true }).fill("TEST-TR-SUCCEEDED");
  await page.getByRole("button", { name: "Track", exact: true }).click();
  await page.getByRole("cell", { name: "accepted (TEST)" }).waitFor();

  step("the board shows it (it refreshes itself)");
  await page.getByRole("link", { name: "Shipments", exact: true }).click();
  const link = page.getByRole("link", { name: "TEST-TR-SUCCEEDED" });
  await link.waitFor({ timeout: 45_000 });
  if (screenshots) {
    mkdirSync(screenshots, { recursive: true });
    await page.screenshot({ path: join(screenshots, "board.png") });
  }

  step("the shipment page has containers and a timeline");
  await link.click();
  await heading("Containers").waitFor();
  await heading("Timeline").waitFor();

  step("its route map draws the land, the ports and the route, from Tidemark alone");
  const map = page.getByRole("region", { name: /map/i });
  await map.waitFor();
  const land = map.locator("path.land");
  await land.first().waitFor({ state: "attached", timeout: 20_000 });
  await map.locator("path.route-port").first().waitFor({ state: "attached", timeout: 20_000 });
  await map.locator("path.route-line").first().waitFor({ state: "attached", timeout: 20_000 });
  // The sandbox vessel is at sea: its position shows, at the latest at the map's next
  // refresh (every 15 s) once its first AIS report is in.
  await map.locator("path.route-vessel").waitFor({ state: "attached", timeout: 40_000 });
  const drawn = {
    land: await land.count(),
    ports: await map.locator("path.route-port").count(),
    lines: await map.locator("path.route-line").count(),
    vessel: await map.locator("path.route-vessel").count(),
  };
  console.log(`  drawn: ${JSON.stringify(drawn)}`);
  if (drawn.land < 3) failures.push(`the basemap drew ${drawn.land} land paths`);
  if (drawn.ports < 2) failures.push(`the map drew ${drawn.ports} ports`);
  // No line runs the long way round the world: along the route the page draws,
  // consecutive longitudes are never half a world apart (Pacific voyages cross ±180°).
  const jump = await page.evaluate(async () => {
    const src = document.getElementById("route-map").dataset.src;
    const collection = await (await fetch(src)).json();
    const lons = collection.features.flatMap((f) =>
      f.geometry.type === "Point" ? [f.geometry.coordinates[0]] : f.geometry.coordinates.map((c) => c[0]),
    );
    return Math.max(0, ...lons.slice(1).map((lon, i) => Math.abs(lon - lons[i])));
  });
  if (jump >= 180) failures.push(`the route jumps ${jump}° of longitude between two points`);
  await page.getByText(/between .* and .*, position of/).waitFor();
  // Tooltips are text set on elements (a name is never parsed as HTML): the ports' labels
  // are always shown, the vessel's shows on hover.
  const portLabels = await map.locator(".leaflet-tooltip.port-label").allTextContents();
  if (!portLabels.some((label) => label.startsWith("POL · ")) || !portLabels.some((label) => label.startsWith("POD · ")))
    failures.push(`the port labels are ${JSON.stringify(portLabels)}`);
  await map.locator("path.route-vessel").hover({ force: true });
  const vesselTip = map.locator(".leaflet-tooltip:not(.port-label)");
  await vesselTip.waitFor({ timeout: 5_000 });
  if (!/ · .*UTC$/.test(await vesselTip.textContent())) failures.push(`the vessel tooltip reads ${await vesselTip.textContent()}`);
  if (screenshots) await page.screenshot({ path: join(screenshots, "shipment.png"), fullPage: true });

  const shipmentPage = page.url();

  step("the shipment page edits references, tags and custom fields");
  await page.getByLabel("Reference numbers (one per line)").fill("PO-4711");
  await page.getByLabel("Tags (comma-separated)").fill("reefer");
  await page.getByRole("button", { name: "Save references and tags" }).click();
  await page.getByRole("status").filter({ hasText: "Reference numbers and tags saved." }).waitFor();
  await page.getByLabel("Desk", { exact: true }).fill("Rotterdam");
  await page.getByRole("button", { name: "Save Desk" }).click();
  await page.getByText("Now: Rotterdam").waitFor();
  await page.getByLabel("Incoterm", { exact: true }).selectOption("FOB");
  await page.getByRole("button", { name: "Save Incoterm" }).click();
  await page.getByText("Now: Free on board").waitFor();

  step("tracking is stopped and resumed; a refresh is queued");
  await page.getByRole("button", { name: "Stop tracking" }).click();
  await page.getByRole("status").filter({ hasText: "Tracking stopped." }).waitFor();
  await page.getByRole("button", { name: "Resume tracking" }).click();
  await page.getByRole("status").filter({ hasText: "Tracking resumed" }).waitFor();
  await page.getByRole("button", { name: "Refresh", exact: true }).click();
  await page.getByRole("status").filter({ hasText: "Refresh queued" }).waitFor();

  step("the board filters by tag and custom field and orders by ETA");
  await page.getByRole("link", { name: "Shipments", exact: true }).click();
  await page.getByLabel("Tag", { exact: true }).fill("reefer");
  await page.getByLabel("Custom field", { exact: true }).selectOption("desk");
  await page.getByLabel("Field value").fill("Rotterdam");
  await page.getByLabel("Order").selectOption("pod_eta_at");
  await page.getByRole("button", { name: "Apply" }).click();
  await page.getByRole("link", { name: "TEST-TR-SUCCEEDED" }).waitFor();
  await page.getByRole("columnheader", { name: "ETA (port time)" }).and(page.locator("[aria-sort=ascending]")).waitFor();
  await page.getByLabel("Tag", { exact: true }).fill("no-such-tag");
  await page.getByRole("button", { name: "Apply" }).click();
  await page.getByRole("cell", { name: "No shipments match." }).waitFor();
  await page.getByLabel("Arriving within (days)").fill("soon");
  await page.getByRole("button", { name: "Apply" }).click();
  await page.getByRole("alert").filter({ hasText: "whole number of days" }).waitFor();

  step("the webhook's delivery log shows the tracking request's notification");
  await page.goto(webhookPage);
  await heading("Delivery log").waitFor();
  for (let i = 0; ; i++) {
    if ((await page.getByRole("cell", { name: "tracking_request.succeeded", exact: true }).count()) > 0) break;
    if (i > 30) throw new Error("no notification in the delivery log");
    await new Promise((r) => setTimeout(r, 500));
    await page.reload();
  }
  await page.getByText(/Attempt 1 at .*HTTP 200/).first().waitFor();
  if (received.length < 2) failures.push(`the receiver got ${received.length} deliveries`);
  if (screenshots) await page.screenshot({ path: join(screenshots, "webhook.png"), fullPage: true });

  step("dropping a PDF on the Documents page uploads it; its page previews and downloads it");
  await page.getByRole("link", { name: "Documents", exact: true }).click();
  await heading("Documents").waitFor();
  // The drop handler is a deferred script: the heading shows before it has run.
  await page.waitForLoadState("load");
  await page.locator("form#upload").evaluate((form) => {
    // A one-page PDF, as a file dragged from the desktop would arrive.
    const pdf = [
      "%PDF-1.4",
      "1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj",
      "2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj",
      "3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >> endobj",
      "4 0 obj << /Length 58 >> stream",
      "BT /F1 24 Tf 72 700 Td (BILL OF LADING E2ETEST01) Tj ET",
      "endstream endobj",
      "5 0 obj << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> endobj",
      "trailer << /Root 1 0 R >>",
      "%%EOF",
    ].join("\n");
    const transfer = new DataTransfer();
    transfer.items.add(new File([pdf], "bl-E2ETEST01.pdf", { type: "application/pdf" }));
    for (const type of ["dragenter", "dragover", "drop"]) {
      form.dispatchEvent(new DragEvent(type, { dataTransfer: transfer, bubbles: true, cancelable: true }));
    }
  });
  await heading("Document").waitFor();
  await page.getByText("bl-E2ETEST01.pdf").first().waitFor();
  // The preview is the text read from the PDF (by the background job), never the PDF: a
  // PDF's own script would run in a frame of Tidemark's origin.
  const documentPage = page.url();
  const previewText = page.locator("pre.preview-text");
  for (let i = 0; (await previewText.count()) === 0; i++) {
    if (i > 30) throw new Error("no text preview on the document page");
    await new Promise((r) => setTimeout(r, 500));
    await page.goto(documentPage);
  }
  if (!(await previewText.textContent()).includes("BILL OF LADING E2ETEST01"))
    failures.push(`the preview reads ${await previewText.textContent()}`);
  if ((await page.locator("iframe, object, embed").count()) > 0) failures.push("the document page frames the file");
  const download = await page.getByRole("link", { name: "Download" }).getAttribute("href");
  const fetched = await page.evaluate(async (href) => {
    const answers = [];
    for (const url of [href, `${href}?inline=1`]) {
      const response = await fetch(url);
      answers.push([
        response.status,
        response.headers.get("content-type"),
        (response.headers.get("content-disposition") || "").split(";")[0],
        (await response.text()).slice(0, 5),
      ].join(" "));
    }
    return answers;
  }, download);
  for (const answer of fetched)
    if (answer !== "200 application/pdf attachment %PDF-") failures.push(`the download answered ${answer}`);
  if (screenshots) await page.screenshot({ path: join(screenshots, "document.png"), fullPage: true });
  step("the document is linked to the shipment and listed on its page");
  await page.getByLabel("Bill of lading").fill("TEST-TR-SUCCEEDED");
  await page.getByRole("button", { name: "Link to shipment" }).click();
  await page.getByRole("link", { name: "TEST-TR-SUCCEEDED" }).click();
  await heading("Documents").waitFor();
  await page.getByRole("link", { name: "bl-E2ETEST01.pdf" }).waitFor();
  await page.locator("#route-map path.land").first().waitFor({ state: "attached", timeout: 20_000 });
  if (screenshots) await page.screenshot({ path: join(screenshots, "shipment-edit.png"), fullPage: true });
  await page.getByRole("link", { name: "Documents", exact: true }).click();
  await page.getByRole("link", { name: "bl-E2ETEST01.pdf" }).waitFor();

  step("a number whose carrier is not certain offers the candidates; a CSV file is tracked row by row");
  await page.getByRole("link", { name: "Track", exact: true }).click();
  await page.getByLabel("Number", { exact: true }).fill("221234567");
  await page.getByRole("button", { name: "Track", exact: true }).click();
  await page.getByRole("button", { name: /^Track with MAEU/ }).waitFor();
  if (screenshots) await page.screenshot({ path: join(screenshots, "track.png"), fullPage: true });
  await page.getByRole("button", { name: /^Track with MAEU/ }).click();
  await page.getByRole("cell", { name: "accepted (MAEU)" }).waitFor();
  await page.getByLabel("File of numbers (CSV or XLSX)").setInputFiles({
    name: "numbers.csv",
    mimeType: "text/csv",
    buffer: Buffer.from("number,carrier\nTEST-TR-SUCCEEDED-2,TEST\nTEST-TR-SUCCEEDED,TEST\n"),
  });
  await page.getByRole("button", { name: "Upload numbers" }).click();
  await page.getByRole("cell", { name: "accepted (TEST)" }).waitFor();
  await page.getByRole("cell", { name: /refused: .*already exists/ }).waitFor();

  step("a read-only API key is created (shown once) and revoked");
  await page.getByRole("link", { name: "API keys", exact: true }).click();
  await heading("API keys").waitFor();
  const revokeButtons = page.getByRole("button", { name: /^Revoke key/ });
  const before = await revokeButtons.count();
  await page.getByLabel("Read-only").check();
  await page.getByRole("button", { name: "Create API key" }).click();
  await page.getByRole("status").filter({ hasText: "Created a read-only key" }).waitFor();
  const secret = await page.getByLabel("Key", { exact: true }).inputValue();
  const status = async () =>
    (await fetch(`${origin}/v2/shipments`, { headers: { authorization: `Token ${secret}` } })).status;
  if ((await status()) !== 200) failures.push("the new read-only key did not work");
  if ((await revokeButtons.count()) !== before + 1) failures.push("the new key is not listed");
  await revokeButtons.first().click();
  await heading("API keys").waitFor();
  if ((await revokeButtons.count()) !== before) failures.push("the key was not revoked");
  if ((await status()) !== 401) failures.push("the revoked key still works");

  step("the carriers page shows the sandbox line's health");
  await page.getByRole("link", { name: "Carriers", exact: true }).click();
  await heading("Carriers").waitFor();
  await page.getByRole("cell", { name: "working" }).first().waitFor();
  step("the carriers page lists the terminals asked about discharged containers");
  await page.getByRole("heading", { name: "Terminals" }).waitFor();
  await page.getByRole("cell", { name: "built in (TEST voyages)" }).waitFor();
  if (screenshots) await page.screenshot({ path: join(screenshots, "carriers.png"), fullPage: true });

  step("the API docs render from the OpenAPI document under the same policy");
  await page.goto(`${origin}/docs`);
  await page.getByRole("heading", { name: "Documents", exact: true }).waitFor();
  if ((await page.locator("details").count()) < 10) failures.push("the docs list few operations");
  await page.goBack();

  step("signing out");
  await page.getByRole("button", { name: "Sign out" }).click();
  await heading("Sign in").waitFor();
  await page.goto(`${origin}/`);
  await heading("Sign in").waitFor();
} catch (error) {
  failures.push(String(error?.stack ?? error));
} finally {
  await browser?.close();
  server.kill();
  receiver.close();
}
if (failures.length) {
  console.error(`FAILED:\n${failures.join("\n")}`);
  process.exit(1);
}
console.log("console e2e: ok");
