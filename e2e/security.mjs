// Security suite of the web console, in headless Chromium against a real Tidemark server.
//
//   cd e2e && npm ci && node security.mjs [path/to/tidemark]
//
// A corpus of hostile strings (script tags, attribute breakers, `javascript:` URLs, SVG,
// htmx attributes, `<base>`, template and format strings, a 10 kB string, bidi and
// zero-width characters) goes into every field that someone outside can set:
//
// - a user, through the API (`/v2`): tracking request numbers, shipment reference numbers
//   and tags, custom field definitions (name, description, pattern, list options) and
//   values, initial custom fields, parties, webhooks (URL, headers), documents (name, file
//   name, text), and through the console's own forms (search, Track, uploads, links);
// - a carrier: a DCSA 2.2 server run here, configured as Hapag-Lloyd's base URL, whose
//   answers put the corpus in vessel names, locations, facilities, voyages, services,
//   container numbers and equipment codes, and in a repeated `Next-Page-Cursor` (which
//   ends up in the carrier's last error);
// - a webhook receiver: its answers' headers and bodies, shown in delivery logs;
// - an email: the built-in SMTP receiver gets a message with a hostile sender, subject,
//   body and attachment file names, spoken over a raw socket;
// - an AIS feed: type 5 static reports (encoded here in AIS's 6-bit alphabet) name the
//   vessels of tracked shipments `<BASE HREF=//E.CO>` and `<STYLE ONLOAD=P(51)>`, with
//   positions so they are drawn on the route map.
// - terminals: an X12 322 posted to `/v2/edi_messages` puts the corpus in a hold's
//   description and place, shown in the shipment page's pick-up panel; the carrier's
//   facility names stand for the terminals' own names.
//
// Then every console page (board, each shipment page, hovering the map's vessel and port
// markers, documents and each document, webhooks and each webhook with a test delivery,
// custom fields and each definition, API keys, carriers, track) is visited twice: with the
// page's Content-Security-Policy switched off (`bypassCSP`, so escaping is tested on its
// own) and with it on. A run fails when any hostile script ran (every payload calls
// `P(marker)`, which the test installs and records), a dialog opened, a page script
// failed, a request went to another host or fetched a `/pwned…` path (markup was
// injected even where nothing ran), `document.baseURI` left the server, or injected
// markup is in the DOM (event-handler attributes, `<base>`, `javascript:` links, hostile
// htmx attributes, `srcdoc`). Each source's hostile text must also be visible, as text,
// on the pages that show it (so the data did get there). CSP violation reports are fine.
// Skips (exit 0, says so) when Chromium is absent. SECURITY_VERBOSE=1 prints where each
// marker was seen.

import { spawn, execFileSync } from "node:child_process";
import { createServer } from "node:http";
import { createServer as createTcpServer, connect } from "node:net";
import { createSocket } from "node:dgram";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const chromiumPath = process.env.CHROMIUM ?? "/usr/bin/chromium";
if (!existsSync(chromiumPath)) {
  console.log(`skipped: no Chromium at ${chromiumPath} (apt-get install chromium)`);
  process.exit(0);
}
const here = dirname(fileURLToPath(import.meta.url));
const target = process.env.CARGO_TARGET_DIR ?? resolve(here, "../target");
const binary = resolve(process.argv[2] || join(target, "debug", "tidemark"));
if (!existsSync(binary)) {
  console.error(`no Tidemark binary at ${binary}: cargo build -p tidemark-server --bin tidemark (with CARGO_TARGET_DIR as here)`);
  process.exit(1);
}
const verbose = Boolean(process.env.SECURITY_VERBOSE);
const started = Date.now();

// ---------------------------------------------------------------------------------------
// The corpus. Every payload that would run calls P('<marker>'); P is installed by the test
// (uppercase, so payloads survive the upper-casing of numbers and AIS's alphabet). Paths
// that an injected element would fetch start with /pwned.

const CORPUS = [
  { id: "m1", text: `<img src=/pwned/m1 onerror="P('m1')">` },
  { id: "m2", text: `"><svg onload=P('m2')>` },
  { id: "m3", text: `'><script>P('m3')</script>` },
  { id: "m4", text: `javascript:P('m4')//` },
  { id: "m5", text: `<a href="javascript:P('m5')" id=pwned-m5>m5</a>` },
  {
    id: "m6",
    text: `<div hx-get="/pwned/m6" hx-trigger="load" hx-on:htmx:before-request="P('m6')" hx-on::before-request="P('m6')">m6</div>`,
  },
  { id: "m7", text: `<BASE HREF=//E.CO>` },
  { id: "m8", text: "{{7*7}} ${7*7} <%= 7*7 %> #{7*7} %s%n%x%d %(m8)s {0} m8" },
  { id: "m9", text: `<img src=/pwned/m9 onerror=P('m9')>` + "A".repeat(10_000) },
  { id: "m10", text: "\u202Em10\u200B<img src=/pwned/m10 onerror=P('m10')>\u200D\u2066\uFEFF\u200F" },
  { id: "m11", text: `</textarea></title></pre></noscript></style><img src=/pwned/m11 onerror=P('m11')>` },
  { id: "m12", text: `<iframe srcdoc="<script>parent.P('m12')</script>"></iframe><svg><script>P('m12')</script></svg>` },
];
// Short ones for fields with length limits (a number is at most 64 characters).
const SHORT = CORPUS.filter((c) => c.text.length <= 64);

// A hostile string for a named place, with its own marker (so a failure says where).
const hostile = (marker) => `<img src=/pwned/${marker} onerror=P('${marker}')>`;

const failures = [];
const notes = [];
const fail = (message) => failures.push(message);
const note = (message) => notes.push(message);

// ---------------------------------------------------------------------------------------
// AIS: a 6-bit NMEA encoder (and the reader that checks it against reference sentences).

const SIXBIT_TEXT = ` !"#$%&'()*+,-./0123456789:;<=>?`;
function sixbitChar(c) {
  const code = c.charCodeAt(0);
  if (code >= 64 && code <= 95) return code - 64; // @A-Z[\]^_
  if (SIXBIT_TEXT.includes(c)) return code; // space to ?
  throw new Error(`${JSON.stringify(c)} is not in AIS's 6-bit alphabet`);
}
class Bits {
  constructor() {
    this.bits = [];
  }
  uint(width, value) {
    const v = BigInt(value);
    for (let i = width - 1; i >= 0; i--) this.bits.push(Number((v >> BigInt(i)) & 1n));
    return this;
  }
  int(width, value) {
    const v = BigInt(value);
    return this.uint(width, v < 0n ? (1n << BigInt(width)) + v : v);
  }
  text(chars, value) {
    const padded = (value ?? "").padEnd(chars, "@").slice(0, chars);
    for (const c of padded) this.uint(6, sixbitChar(c));
    return this;
  }
  armor() {
    const fill = (6 - (this.bits.length % 6)) % 6;
    const bits = [...this.bits, ...Array(fill).fill(0)];
    let payload = "";
    for (let i = 0; i < bits.length; i += 6) {
      const v = bits.slice(i, i + 6).reduce((a, b) => a * 2 + b, 0);
      payload += String.fromCharCode(v < 40 ? v + 48 : v + 56);
    }
    return { payload, fill };
  }
}
function unarmor(payload, fill) {
  const bits = [];
  for (const ch of payload) {
    let v = ch.charCodeAt(0) - 48;
    if (v > 40) v -= 8;
    for (let i = 5; i >= 0; i--) bits.push((v >> i) & 1);
  }
  return bits.slice(0, bits.length - fill);
}
class BitReader {
  constructor(bits) {
    this.bits = bits;
    this.at = 0;
  }
  uint(width) {
    let v = 0n;
    for (let i = 0; i < width; i++) v = v * 2n + BigInt(this.bits[this.at++] ?? 0);
    return Number(v);
  }
  int(width) {
    const v = this.uint(width);
    return v >= 2 ** (width - 1) ? v - 2 ** width : v;
  }
  text(chars) {
    let out = "";
    for (let i = 0; i < chars; i++) {
      const v = this.uint(6);
      out += String.fromCharCode(v < 32 ? v + 64 : v);
    }
    return out;
  }
}
const nmeaChecksum = (body) =>
  [...body].reduce((x, c) => x ^ c.charCodeAt(0), 0).toString(16).toUpperCase().padStart(2, "0");
function sentences(bits, sequence) {
  const { payload, fill } = bits.armor();
  const parts = [];
  for (let i = 0; i < payload.length; i += 60) parts.push(payload.slice(i, i + 60));
  return parts.map((part, i) => {
    const last = i === parts.length - 1;
    const body = `AIVDM,${parts.length},${i + 1},${parts.length > 1 ? sequence : ""},A,${part},${last ? fill : 0}`;
    return `!${body}*${nmeaChecksum(body)}`;
  });
}
// Type 5 fields, in order: [name, width, kind].
const TYPE5 = [
  ["type", 6], ["repeat", 2], ["mmsi", 30], ["ais_version", 2], ["imo", 30], ["callsign", 7, "text"],
  ["shipname", 20, "text"], ["shiptype", 8], ["to_bow", 9], ["to_stern", 9], ["to_port", 6],
  ["to_starboard", 6], ["epfd", 4], ["month", 4], ["day", 5], ["hour", 5], ["minute", 6],
  ["draught", 8], ["destination", 20, "text"], ["dte", 1], ["spare", 1],
];
const TYPE1 = [
  ["type", 6], ["repeat", 2], ["mmsi", 30], ["status", 4], ["turn", 8, "int"], ["speed", 10],
  ["accuracy", 1], ["lon", 28, "int"], ["lat", 27, "int"], ["course", 12], ["heading", 9],
  ["second", 6], ["maneuver", 2], ["spare", 3], ["raim", 1], ["radio", 19],
];
function encodeFields(layout, values) {
  const bits = new Bits();
  for (const [name, width, kind] of layout) {
    const v = values[name] ?? 0;
    if (kind === "text") bits.text(width, v || "");
    else if (kind === "int") bits.int(width, v);
    else bits.uint(width, v);
  }
  return bits;
}
function decodeFields(layout, bits) {
  const reader = new BitReader(bits);
  const out = {};
  for (const [name, width, kind] of layout) {
    out[name] = kind === "text" ? reader.text(width) : kind === "int" ? reader.int(width) : reader.uint(width);
  }
  return out;
}
function staticReport({ mmsi, imo, name, callsign = "", destination = "" }, sequence) {
  const values = { type: 5, mmsi, imo, callsign, shipname: name, shiptype: 70, to_bow: 100, to_stern: 20, to_port: 10, to_starboard: 10, epfd: 1, draught: 100, destination };
  return sentences(encodeFields(TYPE5, values), sequence);
}
function positionReport({ mmsi, lat, lon, speed = 14.2, course = 300 }) {
  const values = {
    type: 1, mmsi, status: 0, turn: -128, speed: Math.round(speed * 10), accuracy: 1,
    lon: Math.round(lon * 600_000), lat: Math.round(lat * 600_000), course: Math.round(course * 10),
    heading: Math.round(course), second: 60,
  };
  return sentences(encodeFields(TYPE1, values), 0);
}
// The encoder against reference sentences (libais's type examples, with their expected
// decodes): the reader gives the expected fields, and encoding what it read gives back the
// very payload.
function checkAisEncoder() {
  const referenceDir = resolve(here, "../../shared/reference/ais");
  const nmea = join(referenceDir, "libais_typeexamples.nmea");
  const json = join(referenceDir, "libais_typeexamples.json");
  const fixed = [
    // Used when the reference files are absent: the same two sentences.
    ["!AIVDM,1,1,,A,15N1u<PP1FJuvSRHOE6QIwwh0HQ6,0*30", { type: 1, mmsi: 367033650, lat: 42.79854965209961, lon: -70.34690856933594, speed: 8.6, course: 35.9 }],
    ["!AIVDM,1,1,1,B,53eaFL02?;fwTPm7V219E@R1@PE8E<622222221@9hG1A7?@NCPSlm3kc5DhH8888888880,2*7F", { type: 5, mmsi: 249190000, imo: "9383663", shipname: "RUTH THERESA", callsign: "9HMQ9", destination: "BOSTON,USA" }],
  ];
  let cases = fixed;
  if (existsSync(nmea) && existsSync(json)) {
    const lines = readFileSync(nmea, "utf8").split("\n").filter(Boolean);
    const decodes = readFileSync(json, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    cases = lines.map((line, i) => [line, decodes[i]]).filter(([line, d]) => d && [1, 5].includes(d.type) && line.startsWith("!AIVDM,1,1"));
  }
  let checked = 0;
  for (const [line, expected] of cases) {
    const fields = line.split("*")[0].split(",");
    const [payload, fill] = [fields[5], Number(fields[6])];
    const layout = expected.type === 5 ? TYPE5 : TYPE1;
    const decoded = decodeFields(layout, unarmor(payload, fill));
    const clean = (t) => t.split("@")[0].trim();
    const got =
      expected.type === 5
        ? { mmsi: decoded.mmsi, imo: String(decoded.imo).padStart(7, "0"), shipname: clean(decoded.shipname), callsign: clean(decoded.callsign), destination: clean(decoded.destination) }
        : { mmsi: decoded.mmsi, lat: decoded.lat / 600_000, lon: decoded.lon / 600_000, speed: decoded.speed / 10, course: decoded.course / 10 };
    for (const [key, value] of Object.entries(got)) {
      const want = expected[key];
      const same = typeof want === "number" ? Math.abs(want - value) < 1e-4 : String(want) === String(value);
      if (!same) throw new Error(`AIS reader: ${line} field ${key} read ${value}, expected ${want}`);
    }
    const again = encodeFields(layout, decoded).armor();
    if (again.payload !== payload || again.fill !== fill)
      throw new Error(`AIS encoder: ${line} re-encodes as ${again.payload},${again.fill}`);
    const body = line.slice(1).split("*")[0];
    if (nmeaChecksum(body) !== line.split("*")[1].slice(0, 2)) throw new Error(`NMEA checksum of ${line}`);
    checked++;
  }
  if (checked < 2) throw new Error("no AIS reference sentence was checked");
  return checked;
}

// ---------------------------------------------------------------------------------------
// Identifiers.

function containerNumber(owner, serial) {
  const values = {};
  let v = 10;
  for (const letter of "ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
    if (v % 11 === 0) v++;
    values[letter] = v++;
  }
  const code = owner + "U" + String(serial).padStart(6, "0");
  const sum = [...code].reduce((s, c, i) => s + (values[c] ?? Number(c)) * 2 ** i, 0);
  return code + ((sum % 11) % 10);
}
function imoNumber(six) {
  const digits = String(six).padStart(6, "0");
  const sum = [...digits].reduce((s, d, i) => s + Number(d) * (7 - i), 0);
  return digits + (sum % 10);
}

// ---------------------------------------------------------------------------------------
// The carrier: a DCSA Track & Trace 2.2 server. Every bill of lading gets a voyage from
// Singapore to Rotterdam, its vessel at sea; some numbers get hostile data.

const now = Date.now();
const iso = (ms) => new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

// Voyages by number (in any case: Tidemark sends a bill of lading as the user wrote it).
// The rest get a plain voyage.
const voyages = new Map();
let voyageSerial = 0;
function voyageFor(number) {
  const key = number.toUpperCase();
  if (!voyages.has(key)) {
    voyageSerial += 1;
    voyages.set(key, {
      pol: "SGSIN",
      pod: "NLRTM",
      imo: imoNumber(900000 + voyageSerial),
      vesselName: `PLAIN VESSEL ${voyageSerial}`,
      containers: [containerNumber("TMS", 100 + voyageSerial)],
      voyageNumber: `${100 + voyageSerial}W`,
      service: "AE1",
      facility: null,
      iso: "45G1",
      locationName: null,
    });
  }
  return voyages.get(key);
}
// The shipment whose every carrier field is hostile (its port of lading too, so it has no
// map but shows the place as text); the one whose vessel name from the carrier is drawn on
// the map; two whose vessels' names come from AIS; one whose container number is hostile.
const NUM = {
  carrier: "SECCARRIER01",
  mapCarrier: "SECMAPCARRIER01",
  aisBase: "SECAISBASE01",
  aisStyle: "SECAISSTYLE01",
  container: "SECCONTAINER01",
  cursor: "SECCURSOR01",
};
Object.assign(voyageFor(NUM.carrier), {
  pol: hostile("c-pol"),
  vesselName: hostile("c-vessel"),
  voyageNumber: hostile("c-voyage"),
  service: hostile("c-service"),
  facility: hostile("c-facility"),
  iso: hostile("c-iso"),
  locationName: hostile("c-locname"),
});
Object.assign(voyageFor(NUM.mapCarrier), {
  vesselName: `<img src=/pwned/c-map onerror=P('c-map')><b>C-MAP</b>`,
  facility: hostile("c-map-facility"),
  voyageNumber: `"><svg onload=P('c-map-voyage')>`,
});
Object.assign(voyageFor(NUM.aisBase), { vesselName: "CARRIER NAME BEFORE AIS" });
Object.assign(voyageFor(NUM.aisStyle), { vesselName: "CARRIER NAME BEFORE AIS 2" });
Object.assign(voyageFor(NUM.container), { containers: [hostile("c-ctr").slice(0, 35), containerNumber("TMS", 999)] });
const AIS_VESSELS = [
  // The carrier's hostile name stays: the static report names no ship.
  { number: NUM.mapCarrier, mmsi: 566000101, name: "", lat: 6.5, lon: 78.0 },
  { number: NUM.aisBase, mmsi: 566000102, name: "<BASE HREF=//E.CO>", lat: 7.0, lon: 75.0 },
  // 20 characters, all AIS can carry: a style element's load runs even when inserted by
  // innerHTML (an <svg onload> would not).
  { number: NUM.aisStyle, mmsi: 566000103, name: "<STYLE ONLOAD=P(51)>", lat: 7.5, lon: 72.0 },
];

function events(number) {
  const v = voyageFor(number);
  const call = (locode, at) => ({
    transportCallID: `${number}-${locode}-${at}`.slice(0, 100),
    transportCallSequenceNumber: at === "pol" ? 1 : 2,
    carrierServiceCode: v.service,
    exportVoyageNumber: v.voyageNumber,
    importVoyageNumber: v.voyageNumber,
    UNLocationCode: locode,
    facilityTypeCode: "POTE",
    ...(v.facility ? { otherFacility: v.facility, facilityCode: v.facility.slice(0, 20) } : {}),
    modeOfTransport: "VESSEL",
    vessel: { vesselIMONumber: v.imo, vesselName: v.vesselName },
  });
  const documents = [{ documentReferenceType: "TRD", documentReferenceValue: number }];
  const location = (locode) => ({ UNLocationCode: locode, ...(v.locationName ? { locationName: v.locationName } : {}) });
  const list = [];
  let n = 0;
  const id = () => `${number}-E${++n}`;
  for (const container of v.containers) {
    list.push({
      eventID: id(), eventCreatedDateTime: iso(now - 3 * DAY), eventType: "EQUIPMENT", eventClassifierCode: "ACT",
      eventDateTime: iso(now - 3 * DAY), equipmentEventTypeCode: "LOAD", equipmentReference: container,
      ISOEquipmentCode: v.iso, emptyIndicatorCode: "LADEN", eventLocation: location(v.pol),
      transportCall: call(v.pol, "pol"), documentReferences: documents,
    });
    list.push({
      eventID: id(), eventCreatedDateTime: iso(now - 2 * DAY), eventType: "EQUIPMENT", eventClassifierCode: "EST",
      eventDateTime: iso(now + 15 * DAY), equipmentEventTypeCode: "DISC", equipmentReference: container,
      ISOEquipmentCode: v.iso, emptyIndicatorCode: "LADEN", eventLocation: location(v.pod),
      transportCall: call(v.pod, "pod"), documentReferences: documents,
    });
  }
  list.push({
    eventID: id(), eventCreatedDateTime: iso(now - 3 * DAY), eventType: "TRANSPORT", eventClassifierCode: "ACT",
    eventDateTime: iso(now - 3 * DAY + 2 * HOUR), transportEventTypeCode: "DEPA", eventLocation: location(v.pol),
    transportCall: call(v.pol, "pol"), documentReferences: documents,
  });
  list.push({
    eventID: id(), eventCreatedDateTime: iso(now - 2 * DAY), eventType: "TRANSPORT", eventClassifierCode: "EST",
    eventDateTime: iso(now + 15 * DAY), transportEventTypeCode: "ARRI", eventLocation: location(v.pod),
    transportCall: call(v.pod, "pod"), documentReferences: documents,
  });
  if (number === NUM.carrier) {
    // An event whose type is unknown (skipped by Tidemark, kept as drift).
    list.push({ eventID: hostile("c-eventid"), eventType: hostile("c-eventtype"), eventClassifierCode: "ACT", eventDateTime: iso(now) });
  }
  return list;
}

const CARRIER_ID = "tidemark-security-client";
const CARRIER_SECRET = "tidemark-security-secret";
const carrierCalls = [];
const carrier = createServer((request, response) => {
  const url = new URL(request.url, "http://carrier");
  carrierCalls.push(url.pathname + url.search);
  if (request.headers["x-ibm-client-id"] !== CARRIER_ID || request.headers["x-ibm-client-secret"] !== CARRIER_SECRET) {
    response.writeHead(401, { "content-type": "application/json" }).end("{}");
    return;
  }
  if (url.pathname !== "/v2/events") {
    response.writeHead(404).end();
    return;
  }
  const number =
    url.searchParams.get("transportDocumentReference") ??
    url.searchParams.get("carrierBookingReference") ??
    url.searchParams.get("equipmentReference") ??
    "";
  const headers = { "content-type": "application/json" };
  if (number.toUpperCase() === NUM.cursor) {
    // The same cursor again and again: Tidemark gives up, saying which.
    headers["next-page-cursor"] = hostile("c-cursor");
  }
  response.writeHead(200, headers).end(JSON.stringify(events(number)));
});

// ---------------------------------------------------------------------------------------
// A webhook receiver whose answers are hostile: headers and body.

// Its own marker first: a delivery log may keep only the start of a long answer.
const receiverBody = hostile("w-body") + "\n" + CORPUS.map((c) => c.text).join("\n");
const received = [];
const receiver = createServer((request, response) => {
  let body = "";
  request.on("data", (chunk) => (body += chunk));
  request.on("end", () => {
    received.push(body);
    response
      .writeHead(200, {
        "content-type": "text/html",
        "x-hostile": hostile("w-header"),
        "x-breaker": `"><svg onload=P('w-header2')>`,
      })
      .end(receiverBody);
  });
});

// ---------------------------------------------------------------------------------------
// Documents: small PDFs (a text layer with hostile text; one with JavaScript actions).

function pdf(text, extra = "") {
  const stream = `BT /F1 12 Tf 72 700 Td (${text.replace(/[()\\]/g, (c) => "\\" + c)}) Tj ET`;
  return Buffer.from(
    [
      "%PDF-1.4",
      `1 0 obj << /Type /Catalog /Pages 2 0 R ${extra ? "/OpenAction 6 0 R" : ""} >> endobj`,
      "2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj",
      "3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >> endobj",
      `4 0 obj << /Length ${stream.length} >> stream`,
      stream,
      "endstream endobj",
      "5 0 obj << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> endobj",
      extra ? `6 0 obj << /S /JavaScript /JS (${extra}) >> endobj` : "",
      "trailer << /Root 1 0 R >>",
      "%%EOF",
    ].join("\n"),
  );
}
// A PDF's standard encoding turns ' into a typographic quote, so the text's payload needs
// none; file names lose what Windows forbids (<>:"/\|?*), so theirs breaks attributes with '.
const DOC_TEXT = "<img src=/pwned/doc-text onerror=P(/doc-text/)>";
const DOC_FILE = "bl' autofocus onfocus='P(`doc-file`)' x='.pdf";
const PDF_JS = "app.alert('pdf-js'); app.launchURL('http://pdf.pwned.invalid/pdf-js', true); this.submitForm('http://pdf.pwned.invalid/pdf-form');";

// ---------------------------------------------------------------------------------------
// The server.

const freePort = () =>
  new Promise((resolveP) => {
    const probe = createTcpServer();
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolveP(port));
    });
  });
const listen = (server) => new Promise((r) => server.listen(0, "127.0.0.1", () => r(server.address().port)));

const dir = mkdtempSync(join(tmpdir(), "tidemark-security-"));
const [port, smtpPort, aisPort, carrierPort, receiverPort] = [
  await freePort(), await freePort(), await freePort(), await listen(carrier), await listen(receiver),
];
const origin = `http://127.0.0.1:${port}`;
const hookUrl = `http://127.0.0.1:${receiverPort}/hook`;
// Only these settings (none inherited from the caller's shell) reach the server.
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("TIDEMARK_")));
Object.assign(env, {
  TIDEMARK_DATABASE_URL: `sqlite://${dir}/tidemark.db`,
  TIDEMARK_LISTEN: `127.0.0.1:${port}`,
  TIDEMARK_STORAGE_URL: `file://${dir}/documents`,
  TIDEMARK_WEBHOOKS_ALLOW_PRIVATE: "true",
  TIDEMARK_RATE_LIMIT_PER_MINUTE: "100000",
  // The carrier: Hapag-Lloyd's profile (DCSA 2.2, two credential headers) at our server.
  TIDEMARK_CARRIERS__HLCU__BASE_URL: `http://127.0.0.1:${carrierPort}`,
  TIDEMARK_CARRIERS__HLCU__CLIENT_ID: CARRIER_ID,
  TIDEMARK_CARRIERS__HLCU__CLIENT_SECRET: CARRIER_SECRET,
  TIDEMARK_CARRIERS__HLCU__REQUESTS_PER_MINUTE: "100000",
  TIDEMARK_CARRIERS__HLCU__REQUESTS_PER_DAY: "1000000",
  // AIS: Tidemark listens for sentences on UDP; the sandbox's own vessels stay quiet.
  TIDEMARK_AIS_SOURCES: `udp://127.0.0.1:${aisPort}`,
  TIDEMARK_SANDBOX_AIS_SECONDS: "0",
  // Email: the built-in SMTP receiver files mail under the test's account.
  TIDEMARK_EMAIL__SMTP_LISTEN: `127.0.0.1:${smtpPort}`,
  TIDEMARK_EMAIL__ACCOUNT: "e2e",
});

const aisChecked = checkAisEncoder();
const key = execFileSync(binary, ["api-keys", "create", "--account", "e2e"], { env, stdio: ["ignore", "pipe", "ignore"] })
  .toString()
  .trim();
const server = spawn(binary, ["serve"], {
  env,
  stdio: ["ignore", "ignore", process.env.E2E_SERVER_LOG ? "inherit" : "ignore"],
});

// ---------------------------------------------------------------------------------------
// Helpers.

async function until(what, check, { timeout = 30_000, every = 250 } = {}) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, every));
  }
}
async function api(method, path, body, { contentType = "application/vnd.api+json" } = {}) {
  const headers = { authorization: `Token ${key}`, accept: "application/vnd.api+json" };
  let payload;
  if (body instanceof FormData) payload = body;
  else if (body !== undefined) {
    headers["content-type"] = contentType;
    payload = JSON.stringify(body);
  }
  const response = await fetch(origin + path, { method, headers, body: payload });
  const text = await response.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: response.status, json, text };
}
const ok = (r) => r.status >= 200 && r.status < 300;
const errorsOf = (r) => (r.json?.errors ?? []).map((e) => e.detail ?? e.title).join("; ") || r.text.slice(0, 200);

// What was accepted where: field -> {accepted: [ids], refused: [ids]}.
const coverage = {};
function covered(field, id, accepted) {
  coverage[field] ??= { accepted: new Set(), refused: new Set() };
  coverage[field][accepted ? "accepted" : "refused"].add(id);
}
// Texts that must be visible, as text, on a page: [pathname pattern, text, what].
const expectations = [];
const expect = (where, text, what) => expectations.push({ where, text, what });

// ---------------------------------------------------------------------------------------
// Seeding through every intake.

const seeded = { shipments: {}, requests: [], webhooks: [], definitions: [], documents: [] };

async function seedApi() {
  // Parties (customers of tracking requests).
  const parties = [];
  for (const c of CORPUS) {
    const r = await api("POST", "/v2/parties", { data: { type: "party", attributes: { company_name: c.text } } });
    covered("party company_name", c.id, ok(r));
    if (ok(r)) parties.push(r.json.data.id);
  }

  // Custom field definitions: names, descriptions, patterns; a list with hostile options.
  const text = await api("POST", "/v2/custom_field_definitions", {
    data: { type: "custom_field_definition", attributes: { api_slug: "sec_text", display_name: hostile("cf-name"), description: hostile("cf-desc"), entity_type: "Shipment", data_type: "short_text" } },
  });
  if (!ok(text)) fail(`the custom field definition was refused: ${errorsOf(text)}`);
  else seeded.definitions.push(text.json.data.id);
  expect(/^\/custom-fields$/, hostile("cf-name"), "custom field name (API)");
  expect(/^\/custom-fields\/[^/]+$/, hostile("cf-desc"), "custom field description (API)");
  expect(/^\/custom-fields\/[^/]+$/, CORPUS[0].text, "custom field option label (API)");
  for (const c of CORPUS) {
    const r = await api("POST", "/v2/custom_field_definitions", {
      data: { type: "custom_field_definition", attributes: { api_slug: `sec_${c.id}`, display_name: c.text, description: c.text, entity_type: "Shipment", data_type: "long_text" } },
    });
    covered("custom field definition (name, description)", c.id, ok(r));
    if (ok(r)) seeded.definitions.push(r.json.data.id);
  }
  // A hostile rule: a pattern (which must still be a valid expression).
  for (const c of [CORPUS[0], CORPUS[1], CORPUS[2], CORPUS[5]]) {
    const r = await api("POST", "/v2/custom_field_definitions", {
      data: { type: "custom_field_definition", attributes: { api_slug: `sec_rule_${c.id}`, display_name: `Rules ${c.id}`, entity_type: "Shipment", data_type: "short_text", validation: { pattern: c.text } } },
    });
    covered("custom field definition (pattern)", c.id, ok(r));
    if (ok(r)) seeded.definitions.push(r.json.data.id);
    else note(`custom field rules ${c.id} refused: ${errorsOf(r)}`);
  }
  const list = await api("POST", "/v2/custom_field_definitions", {
    data: { type: "custom_field_definition", attributes: { api_slug: "sec_list", display_name: "Security list", entity_type: "Shipment", data_type: "enum" } },
  });
  if (ok(list)) {
    seeded.definitions.push(list.json.data.id);
    seeded.listDefinition = list.json.data.id;
    for (const c of CORPUS) {
      const r = await api("POST", `/v2/custom_field_definitions/${list.json.data.id}/options`, {
        data: { type: "custom_field_option", attributes: { value: c.text.slice(0, 200), label: c.text } },
      });
      covered("custom field list option (value, label)", c.id, ok(r));
      if (!ok(r)) {
        const again = await api("POST", `/v2/custom_field_definitions/${list.json.data.id}/options`, {
          data: { type: "custom_field_option", attributes: { value: `opt_${c.id}`, label: c.text } },
        });
        covered("custom field list option (label)", c.id, ok(again));
      }
    }
  } else fail(`the list custom field was refused: ${errorsOf(list)}`);

  // Tracking requests: hostile numbers (at the carrier, which answers every number).
  for (const c of SHORT) {
    const r = await api("POST", "/v2/tracking_requests", {
      data: { type: "tracking_request", attributes: { request_type: "bill_of_lading", request_number: c.text, scac: "HLCU" } },
    });
    covered("tracking request number", c.id, ok(r));
    if (ok(r)) seeded.requests.push({ id: r.json.data.id, number: c.text.trim(), marker: c.id });
    else note(`tracking request number ${c.id} refused: ${errorsOf(r)}`);
  }
  // The special numbers, with hostile references, tags, customer and initial custom fields.
  for (const [name, number] of Object.entries(NUM)) {
    const attributes = { request_type: "bill_of_lading", request_number: number, scac: "HLCU" };
    const r = await api("POST", "/v2/tracking_requests", {
      data: {
        type: "tracking_request",
        attributes: { ...attributes, ref_numbers: [hostile("tr-ref")], shipment_tags: [hostile("tr-tag")], initial_custom_fields: { shipment: [{ api_slug: "sec_text", value: hostile("tr-cf") }] } },
        relationships: parties.length ? { customer: { data: { type: "party", id: parties[0] } } } : undefined,
      },
    });
    if (ok(r)) {
      seeded.requests.push({ id: r.json.data.id, number, name });
      continue;
    }
    note(`tracking request ${number} with hostile references refused (${errorsOf(r)}); tracked plainly`);
    const plain = await api("POST", "/v2/tracking_requests", { data: { type: "tracking_request", attributes } });
    if (!ok(plain)) throw new Error(`cannot track ${number}: ${errorsOf(plain)}`);
    seeded.requests.push({ id: plain.json.data.id, number, name });
  }
  expect(/^\/track$/, SHORT[0].text.trim(), "tracking request number (API)");

  // Webhooks: hostile URLs (each where a URL can carry it) and header values.
  const urls = [
    ["path", `${hookUrl}/"><svg onload=P('wh-url1')>`],
    ["query", `${hookUrl}?a='><img src=/pwned/wh-url2 onerror=P('wh-url2')>`],
    ["fragment", `${hookUrl}#"><img src=/pwned/wh-url3 onerror=P('wh-url3')>`],
    ["javascript", `javascript:P('wh-url4')//http://127.0.0.1/`],
    ["plain", hookUrl],
  ];
  for (const [kind, url] of urls) {
    const r = await api("POST", "/v2/webhooks", {
      data: {
        type: "webhook",
        attributes: {
          url,
          events: ["tracking_request.succeeded", "container.transport.vessel_departed"],
          headers: [{ name: "X-Hostile", value: hostile("wh-hdr") }, { name: "X-Breaker", value: `"><svg onload=P('wh-hdr2')>` }],
        },
      },
    });
    covered("webhook URL", kind, ok(r));
    if (!ok(r)) {
      covered("webhook header value", kind, false);
      note(`webhook URL (${kind}) refused: ${errorsOf(r)}`);
      const plain = await api("POST", "/v2/webhooks", { data: { type: "webhook", attributes: { url, events: ["tracking_request.succeeded"] } } });
      if (ok(plain)) seeded.webhooks.push({ id: plain.json.data.id, kind });
      continue;
    }
    covered("webhook header value", kind, true);
    // Stored as parsed (WHATWG URL rules: quotes and angle brackets percent-encoded).
    if (kind !== "plain") expect(/^\/webhooks$/, r.json.data.attributes.url, `webhook URL (${kind})`);
    seeded.webhooks.push({ id: r.json.data.id, kind });
  }

  // Documents: hostile names and file names, a hostile text layer, JavaScript in a PDF;
  // markup is refused by the upload's sniffing (and listed as refused).
  const uploads = [
    ["name and file name", pdf("BILL OF LADING SECCARRIER01 " + DOC_TEXT), DOC_FILE, hostile("doc-name")],
    ["rtl file name", pdf("PACKING LIST 2"), "\u202Efdp.exe\u200B" + `"><svg onload=P('doc-file2')>.pdf`, CORPUS[9].text],
    ["javascript in a PDF", pdf("ARRIVAL NOTICE 3", PDF_JS), "pdf-with-javascript.pdf", "PDF with JavaScript"],
    ["long name", pdf("INVOICE 4"), `${"N".repeat(300)}.pdf`, CORPUS[8].text],
    ["svg", Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" onload="P('doc-svg')"/>`), "image.png", "svg"],
    ["html", Buffer.from(`<!doctype html><script>P('doc-html')</script>`), "page.pdf", "html"],
  ];
  for (const [what, bytes, fileName, name] of uploads) {
    const form = new FormData();
    form.append("file", new Blob([bytes], { type: "application/pdf" }), fileName);
    form.append("name", name);
    const r = await api("POST", "/v2/documents", form);
    covered("document upload", what, ok(r));
    if (ok(r)) seeded.documents.push({ id: r.json.data.id, what });
    else note(`document (${what}) refused: ${errorsOf(r)}`);
    if (!ok(r) && ["name and file name", "javascript in a PDF"].includes(what)) fail(`the ${what} document was refused: ${errorsOf(r)}`);
  }
  expect(/^\/documents$/, hostile("doc-name"), "document name (API)");
  expect(/^\/documents\/[^/]+$/, DOC_FILE, "document file name (API)");
  expect(/^\/documents\/[^/]+$/, DOC_TEXT, "document text (its preview)");
}

// Waits for every tracking request to be polled, then puts the corpus in each shipment's
// reference numbers, tags and custom fields.
async function seedShipments() {
  const shipments = await until(
    "the carrier's answers to become shipments",
    async () => {
      const all = [];
      // The carrier never gives the repeated cursor's number a shipment.
      for (const request of seeded.requests.filter((r) => r.name !== "cursor")) {
        const r = await api("GET", `/v2/tracking_requests/${request.id}`);
        const status = r.json?.data?.attributes?.status;
        const shipment = r.json?.data?.relationships?.tracked_object?.data?.id;
        if (status !== "created" || !shipment) return null;
        all.push({ ...request, shipment });
      }
      return all;
    },
    { timeout: 60_000, every: 500 },
  ).catch(async (error) => {
    const states = [];
    for (const request of seeded.requests) {
      const r = await api("GET", `/v2/tracking_requests/${request.id}`);
      const a = r.json?.data?.attributes ?? {};
      states.push(`${request.number}: ${a.status} ${a.failed_reason ?? ""}`);
    }
    throw new Error(`${error.message}; ${states.join(", ")}; carrier calls: ${carrierCalls.length}`);
  });
  for (const s of shipments) seeded.shipments[s.name ?? s.marker] = s.shipment;
  for (const s of shipments.filter((s) => s.marker)) expect(/^\/$/, s.number, `bill of lading ${s.marker} (API)`);

  for (const s of shipments) {
    // Added to what the tracking request gave.
    const current = (await api("GET", `/v2/shipments/${s.shipment}`)).json?.data?.attributes ?? {};
    const refs = CORPUS.map((c) => c.text);
    const r = await api("PATCH", `/v2/shipments/${s.shipment}`, {
      data: { type: "shipment", id: s.shipment, attributes: { ref_numbers: [...(current.ref_numbers ?? []), ...refs], tags: [...(current.tags ?? []), ...refs] } },
    });
    if (ok(r)) {
      for (const c of CORPUS) covered("shipment ref_numbers and tags", c.id, true);
    } else {
      for (const c of CORPUS) {
        const one = await api("PATCH", `/v2/shipments/${s.shipment}`, {
          data: { type: "shipment", id: s.shipment, attributes: { ref_numbers: [c.text, hostile("sh-ref")], tags: [c.text.slice(0, 60), hostile("sh-tag")] } },
        });
        covered("shipment ref_numbers and tags", c.id, ok(one));
        if (ok(one)) break;
      }
    }
    for (const c of CORPUS) {
      const value = await api("POST", `/v2/shipments/${s.shipment}/custom_fields`, { data: { type: "custom_field", attributes: { api_slug: `sec_${c.id}`, value: c.text } } });
      covered("shipment custom field value", c.id, ok(value));
    }
    const list = await api("POST", `/v2/shipments/${s.shipment}/custom_fields`, { data: { type: "custom_field", attributes: { api_slug: "sec_list", value: CORPUS[1].text } } });
    covered("shipment list custom field value", "m2", ok(list));
  }
  expect(/^\/shipments\//, hostile("c-vessel"), "carrier vessel name");
  expect(/^\/shipments\//, hostile("c-pol"), "carrier UN/LOCODE");
  expect(/^\/shipments\//, CORPUS[1].text, "shipment reference number or tag (API)");
  expect(/^\/shipments\//, hostile("tr-ref"), "tracking request reference number (API)");
  expect(/^\/shipments\//, hostile("tr-cf"), "initial custom field value (API)");
  expect(/^\/webhooks\/[^/]+(\/test)?$/, hostile("w-body"), "webhook receiver's answer body");
  expect(/^\/webhooks\/[^/]+(\/test)?$/, hostile("w-header"), "webhook receiver's answer header");
  expect(/^\/webhooks\/[^/]+(\/test)?$/, hostile("wh-hdr"), "webhook header value (API)");
  expect(/^\/$/, hostile("c-vessel"), "carrier vessel name on the board");
  expect(/^\/$/, hostile("c-pol"), "carrier port of lading (UN/LOCODE) on the board");
}

// AIS: static reports and positions for the map shipments' vessels, sent until Tidemark
// has them (UDP may be dropped, and the listener may start after the API).
async function seedAis() {
  const socket = createSocket("udp4");
  const lines = [];
  let sequence = 1;
  for (const vessel of AIS_VESSELS) {
    const imo = Number(voyageFor(vessel.number).imo);
    lines.push(...staticReport({ mmsi: vessel.mmsi, imo, name: vessel.name, callsign: "<B>", destination: "<SVG ONLOAD=P('A2')>" }, (sequence++ % 9) + 1));
    lines.push(...positionReport(vessel));
  }
  try {
    await until(
      "the AIS reports to reach the vessels",
      async () => {
        await new Promise((r) => socket.send(lines.join("\r\n") + "\r\n", aisPort, "127.0.0.1", r));
        for (const vessel of AIS_VESSELS) {
          const r = await api("GET", `/v2/vessels/${voyageFor(vessel.number).imo}`);
          const a = r.json?.data?.attributes;
          if (!a || a.latitude == null) return false;
          if (vessel.name && a.name !== vessel.name) return false;
        }
        return true;
      },
      { timeout: 30_000, every: 1_000 },
    );
  } finally {
    socket.close();
  }
  for (const vessel of AIS_VESSELS) covered("AIS ship name (type 5) on a tracked vessel", vessel.name || "(carrier's name kept)", true);
}

// Email: a message to the SMTP receiver, over a raw socket.
// EDI: a terminal's X12 322 for the hostile carrier shipment's first container, whose hold
// description and place are hostile (the console's pick-up panel shows both).
async function seedEdi() {
  const shipment = seeded.shipments.carrier;
  const r = await api("GET", `/v2/shipments/${shipment}?include=containers`);
  const number = r.json?.included?.find((i) => i.type === "container")?.attributes?.number;
  if (!number) throw new Error(`no container on the carrier's shipment: ${r.text.slice(0, 200)}`);
  const stamp = iso(now).replace(/[-:]/g, "");
  const [day, time] = [stamp.slice(0, 8), stamp.slice(9, 13)];
  const segments = [
    `ISA*00*          *00*          *ZZ*SECTERMINAL    *ZZ*TIDEMARK       *${day.slice(2)}*${time}*U*00401*000000777*0*P*|`,
    `GS*SO*SECTERMINAL*TIDEMARK*${day}*${time}*777*X*004010`,
    "ST*322*0001",
    `Q5*PA*${day}*${time}*LT*${hostile("edi-hold")}*${hostile("edi-city")}**US`,
    `N7*${number.slice(0, 4)}*${number.slice(4)}`,
    `N9*BM*${NUM.carrier}`,
    "SE*5*0001",
    "GE*1*777",
    "IEA*1*000000777",
  ];
  const response = await fetch(`${origin}/v2/edi_messages`, {
    method: "POST",
    headers: { authorization: `Token ${key}`, "content-type": "application/edi-x12", accept: "application/vnd.api+json" },
    body: segments.join("~") + "~",
  });
  const text = await response.text();
  if (response.status !== 201) throw new Error(`EDI refused (${response.status}): ${text.slice(0, 300)}`);
  covered("EDI 322 hold description", "edi-hold", true);
  expect(/^\/shipments\//, hostile("edi-hold"), "EDI hold description (X12 322)");
}

async function seedEmail() {
  const boundary = "tidemark-security-boundary";
  const b64 = (buffer) => buffer.toString("base64").replace(/.{76}/g, "$&\r\n");
  const word = (text) => `=?UTF-8?B?${Buffer.from(text).toString("base64")}?=`;
  const rfc2231 = (text) => `UTF-8''${encodeURIComponent(text).replace(/['()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase())}`;
  const message = [
    `From: "${hostile("e-from").replace(/"/g, "'")}" <ops@forwarder.example>`,
    `To: "${`"><svg onload=P('e-to')>`.replace(/"/g, "'")}" <docs@tidemark.local>`,
    `Subject: ${word(hostile("e-subject") + " " + CORPUS[9].text + " SECMAIL01")}`,
    `Date: ${new Date().toUTCString()}`,
    `Message-ID: <${"pwned-e-msgid"}@forwarder.example>`,
    "MIME-Version: 1.0",
    `Content-Type: multipart/mixed; boundary="${boundary}"`,
    "",
    `--${boundary}`,
    "Content-Type: text/plain; charset=utf-8",
    "Content-Transfer-Encoding: base64",
    "",
    b64(Buffer.from(CORPUS.map((c) => c.text).join("\n") + "\n" + hostile("e-body"))),
    `--${boundary}`,
    `Content-Type: application/pdf; name="${hostile("e-file1").replace(/"/g, "'")}.pdf"`,
    `Content-Disposition: attachment; filename="${hostile("e-file1").replace(/"/g, "'")}.pdf"`,
    "Content-Transfer-Encoding: base64",
    "",
    b64(pdf("DELIVERY ORDER e-file1")),
    `--${boundary}`,
    "Content-Type: application/pdf",
    `Content-Disposition: attachment; filename*=${rfc2231(`"><svg onload=P('e-file2')>.pdf`)}`,
    "Content-Transfer-Encoding: base64",
    "",
    b64(pdf("DELIVERY ORDER e-file2")),
    `--${boundary}`,
    "Content-Type: application/pdf",
    `Content-Disposition: attachment; filename="${word(hostile("e-file3") + ".pdf")}"`,
    "Content-Transfer-Encoding: base64",
    "",
    b64(pdf("DELIVERY ORDER e-file3")),
    `--${boundary}--`,
    "",
  ].join("\r\n");
  const socket = connect(smtpPort, "127.0.0.1");
  socket.setEncoding("utf8");
  let buffer = "";
  const waiting = [];
  socket.on("data", (chunk) => {
    buffer += chunk;
    for (;;) {
      // A complete reply: lines until one whose fourth character is a space.
      const match = buffer.match(/^(?:\d{3}-[^\r\n]*\r\n)*\d{3}(?: [^\r\n]*)?\r\n/);
      if (!match) break;
      buffer = buffer.slice(match[0].length);
      waiting.shift()?.(match[0]);
    }
  });
  const reply = () => new Promise((r, reject) => {
    waiting.push(r);
    socket.once("error", reject);
  });
  const say = async (line, expectCode) => {
    const answer = reply();
    socket.write(line + "\r\n");
    const text = await answer;
    if (expectCode && !text.startsWith(expectCode)) throw new Error(`SMTP: ${line.slice(0, 40)} answered ${text.trim()}`);
    return text;
  };
  await new Promise((r, reject) => {
    socket.once("connect", r);
    socket.once("error", reject);
  });
  const greeting = await reply();
  if (!greeting.startsWith("220")) throw new Error(`SMTP greeting: ${greeting}`);
  await say("EHLO security.test", "250");
  await say("MAIL FROM:<ops@forwarder.example>", "250");
  await say("RCPT TO:<docs@tidemark.local>", "250");
  await say("DATA", "354");
  const stuffed = message.split("\r\n").map((l) => (l.startsWith(".") ? "." + l : l)).join("\r\n");
  const answer = await say(stuffed + "\r\n.", null);
  await say("QUIT", null).catch(() => {});
  socket.destroy();
  covered("email (sender, recipient, subject, body, attachment names)", "e-*", answer.startsWith("250"));
  if (!answer.startsWith("250")) fail(`the SMTP receiver refused the hostile email: ${answer.trim()}`);
  const submissions = await until("the email submission", async () => {
    const r = await api("GET", "/v2/email_submissions");
    return r.json?.data?.length ? r.json.data : null;
  });
  const documents = submissions.flatMap((s) => s.relationships?.documents?.data ?? []);
  for (const d of documents) seeded.documents.push({ id: d.id, what: "email attachment" });
  note(`email: ${submissions[0].attributes.status}, ${documents.length} documents; ${submissions[0].attributes.status_reason ?? ""}`);
  expect(/^\/documents$/, "e-file1", "email attachment file name");
}

// ---------------------------------------------------------------------------------------
// Visiting the console.

async function visit(browser, bypassCSP) {
  const run = bypassCSP ? "CSP off" : "CSP on";
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, bypassCSP });
  await context.addInitScript(() => {
    window.__pwned = [];
    window.P = (marker) => {
      window.__pwned.push(String(marker));
    };
  });
  let where = "(start)";
  const fired = [];
  const issue = (message) => {
    const line = `[${run}] ${where}: ${message}`;
    fired.push(line);
    fail(line);
  };
  await context.route("**/*", (route) => {
    const url = new URL(route.request().url());
    if (["chrome:", "chrome-extension:", "data:", "blob:", "about:"].includes(url.protocol)) return route.continue();
    if (url.origin !== origin) {
      issue(`request to another host: ${url}`);
      return route.abort();
    }
    if (/^\/pwned/i.test(decodeURIComponent(url.pathname))) {
      issue(`injected markup fetched ${url.pathname}`);
      return route.fulfill({ status: 404, body: "" });
    }
    return route.continue();
  });
  // Pages the test opens itself; any other (a popup) is a failure.
  const own = new Set();
  const watch = (page) => {
    own.add(page);
    page.on("pageerror", (error) => issue(`page script error: ${error.message}`));
    page.on("dialog", (dialog) => {
      issue(`a dialog opened: ${dialog.type()} ${dialog.message()}`);
      dialog.dismiss().catch(() => {});
    });
    page.on("console", (message) => {
      const text = message.text();
      if (message.type() !== "error") return;
      if (text.startsWith("Failed to load resource")) return;
      // With CSP on, a blocked script is reported, and that is the policy working.
      if (!bypassCSP && /Content Security Policy|Content-Security-Policy/i.test(text)) {
        note(`[${run}] ${where}: CSP report: ${text.slice(0, 160)}`);
        return;
      }
      issue(`console error: ${text.slice(0, 300)}`);
    });
    return page;
  };
  let opening = 0;
  const openPage = async () => {
    opening += 1;
    const page = await context.newPage();
    return watch(page);
  };
  context.on("page", (other) => {
    if (opening > 0) opening -= 1;
    else issue(`a new page opened: ${other.url()}`);
  });
  const page = await openPage();

  const seen = {}; // marker -> pages where its text was visible
  const texts = {}; // pathname -> text
  async function inspect(label) {
    await page.waitForLoadState("networkidle").catch(() => {});
    const state = await page.evaluate(() => {
      const injected = [];
      for (const element of document.querySelectorAll("*")) {
        for (const attribute of element.attributes) {
          const name = attribute.name.toLowerCase();
          if (name.startsWith("on") || name.startsWith("hx-on")) injected.push(`${element.tagName} ${name}=${attribute.value.slice(0, 60)}`);
          let path = "";
          try {
            path = new URL(attribute.value, location.href).pathname;
          } catch {}
          if (name.startsWith("hx-") && /^\/pwned/i.test(path)) injected.push(`${element.tagName} ${name}=${attribute.value.slice(0, 60)}`);
          if (name === "srcdoc") injected.push(`${element.tagName} srcdoc`);
          if (["href", "src", "action", "formaction"].includes(name) && /^\s*javascript:/i.test(attribute.value)) injected.push(`${element.tagName} ${name}=${attribute.value.slice(0, 60)}`);
        }
        if (["BASE", "IFRAME", "OBJECT", "EMBED"].includes(element.tagName) && !element.matches("iframe.preview")) injected.push(`<${element.tagName.toLowerCase()}>`);
        if (element.tagName === "SCRIPT" && !/^\/assets\//.test(element.getAttribute("src") ?? "")) injected.push("<script> not from /assets/");
        if (element.tagName === "svg" && element.closest(".leaflet-pane") === null && element.closest("main")) injected.push("<svg> outside the map");
      }
      const values = [...document.querySelectorAll("input, textarea, select option")].map((e) => e.value ?? "");
      const tooltips = [...document.querySelectorAll(".leaflet-tooltip")].map((e) => e.textContent);
      return {
        pwned: window.__pwned.slice(),
        base: document.baseURI,
        injected,
        // textContent too: a delivery log's attempts sit in collapsed <details>.
        text: [document.title, document.body.innerText, document.body.textContent, ...values, ...tooltips].join("\n"),
      };
    });
    if (state.pwned.length) issue(`hostile script ran: ${state.pwned.join(", ")}`);
    if (!state.base.startsWith(origin + "/")) issue(`document.baseURI is ${state.base}`);
    for (const i of [...new Set(state.injected)]) issue(`injected markup in the DOM: ${i}`);
    const path = new URL(page.url()).pathname;
    texts[path] = (texts[path] ?? "") + "\n" + state.text;
    const markers = [...CORPUS.map((c) => [c.id, c.text]), ...allHostileMarkers()];
    for (const [marker, text] of markers) {
      if (state.text.includes(text) || state.text.includes(text.toUpperCase())) (seen[marker] ??= new Set()).add(label);
    }
    return state;
  }

  const heading = (name) => page.getByRole("heading", { name, exact: true });
  const go = async (path, label, name) => {
    where = label;
    await page.goto(origin + path);
    if (name) await heading(name).first().waitFor();
    return inspect(label);
  };

  // Sign in.
  where = "sign in";
  await page.goto(`${origin}/sign-in`);
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await heading("Shipments").waitFor();

  // Each step on its own: one that cannot finish is a failure, and the others still run.
  const step = async (label, body) => {
    where = label;
    try {
      await body();
    } catch (error) {
      issue(`could not finish: ${String(error?.message ?? error).split("\n")[0]}`);
      if (verbose) console.log(`  ${label}: ${page.url()}\n  ${(await page.locator("main").innerText().catch(() => "")).slice(0, 600).replace(/\n/g, "\n  ")}`);
    }
  };

  await step("board", () => go("/", "board", "Shipments"));
  // Reflected: the board's filters echo what was typed.
  await step("board with hostile filters", async () => {
    const query = new URLSearchParams({ q: CORPUS[1].text, carrier: CORPUS[0].text.slice(0, 40), pol: CORPUS[2].text, tag: CORPUS[5].text, arriving: CORPUS[10].text, value: CORPUS[6].text, field: "sec_m1", sort: CORPUS[3].text });
    await go(`/?${query}`, "board with hostile filters", "Shipments");
  });
  await step("board rows (htmx)", async () => {
    await page.goto(`${origin}/board/rows?${new URLSearchParams({ q: CORPUS[0].text })}`);
    await inspect("board rows");
  });

  // Shipment pages, each with its map: every port marker hovered, then the vessel.
  for (const [name, id] of Object.entries(seeded.shipments)) {
    const label = `shipment ${name}`;
    await step(label, async () => {
      await go(`/shipments/${id}`, label, "Containers");
      const map = page.getByRole("region", { name: /map/i });
      await map.locator("path.land").first().waitFor({ state: "attached", timeout: 20_000 });
      const withVessel = AIS_VESSELS.find((v) => v.number === NUM[name]);
      if (name !== "carrier") await map.locator("path.route-port").first().waitFor({ state: "attached", timeout: 20_000 });
      for (const port of await map.locator("path.route-port").all()) await port.hover({ force: true });
      if (withVessel) {
        const vessel = map.locator("path.route-vessel");
        await vessel.waitFor({ state: "attached", timeout: 20_000 });
        await vessel.hover({ force: true });
        const expected = withVessel.name || voyageFor(withVessel.number).vesselName;
        const tooltip = await until(
          "the vessel's tooltip",
          async () => (await page.locator(".leaflet-tooltip").allTextContents()).find((t) => !/^(POL|POD|TS\d*) · /.test(t)) ?? null,
          { timeout: 5_000 },
        ).catch(() => null);
        if (tooltip === null) issue("the vessel's tooltip did not open on hover");
        else if (!tooltip.includes(expected))
          issue(`the vessel's tooltip reads ${JSON.stringify(tooltip.slice(0, 120))}, not the name ${JSON.stringify(expected)} as text`);
        await page.getByText(/between .* and .*, position of/).waitFor({ timeout: 10_000 });
      }
      await inspect(`${label} (map hovered)`);
    });
  }

  // Documents.
  await step("documents", () => go("/documents", "documents", "Documents"));
  await step("documents search", () => go(`/documents?${new URLSearchParams({ q: CORPUS[0].text, reference: CORPUS[1].text })}`, "documents search", "Documents"));
  for (const document of seeded.documents) {
    await step(`document (${document.what})`, async () => {
      await go(`/documents/${document.id}`, `document (${document.what})`, "Document");
      const preview = page.locator("iframe.preview");
      if (await preview.count()) {
        // The browser's PDF viewer runs a PDF's script in the frame; a script's alert is
        // a dialog (watched). It has a few seconds to come.
        await page.waitForEvent("dialog", { timeout: 5_000 }).catch(() => null);
        await inspect(`document (${document.what}) preview`);
      }
    });
  }
  // Each PDF's file as the preview would ask for it: a download (nothing runs), or shown in
  // the browser's viewer, where its script must not run either.
  for (const document of seeded.documents.filter((d) => d.what === "javascript in a PDF")) {
    await step(`document file inline (${document.what})`, async () => {
      const viewer = await openPage();
      try {
        const response = await viewer.goto(`${origin}/documents/${document.id}/file?inline=1`).catch((error) => {
          if (/Download is starting|ERR_ABORTED/.test(error.message)) return null;
          throw error;
        });
        if (response && /pdf/.test(response.headers()["content-type"] ?? "")) {
          await viewer.waitForEvent("dialog", { timeout: 5_000 }).catch(() => null);
        }
      } finally {
        await viewer.close();
      }
    });
  }
  // Reflected: linking a document to a hostile bill of lading says it is unknown.
  await step("document link refused (reflected number)", async () => {
    await page.goto(`${origin}/documents/${seeded.documents[0].id}`);
    await page.getByLabel("Bill of lading").fill(hostile("link-bl"));
    await page.getByRole("button", { name: "Link to shipment" }).click();
    await page.getByText("No shipment has the bill of lading").waitFor();
    await inspect("document link refused (reflected number)");
  });
  // Reflected: an upload through the console with a hostile file name, refused.
  await step("documents upload refused (hostile file name)", async () => {
    await page.goto(`${origin}/documents`);
    await page.getByLabel("File", { exact: true }).setInputFiles({ name: `${hostile("up-file")}.pdf`, mimeType: "application/pdf", buffer: Buffer.from(`<html><script>P('up-html')</script>`) });
    await page.getByLabel("Name (optional)").fill(CORPUS[2].text);
    await page.getByRole("button", { name: "Upload" }).click();
    await page.getByText("The file was not uploaded").waitFor();
    await inspect("documents upload refused");
  });

  // Webhooks, and a test delivery to the hostile receiver.
  await step("webhooks", () => go("/webhooks", "webhooks", "Webhooks"));
  for (const webhook of seeded.webhooks) {
    await step(`webhook (${webhook.kind})`, async () => {
      await go(`/webhooks/${webhook.id}`, `webhook (${webhook.kind})`, "Webhook");
      if (webhook.kind !== "plain") return;
      await page.getByRole("button", { name: "Send test" }).click();
      await page.getByRole("status").filter({ hasText: "Delivered" }).waitFor({ timeout: 20_000 });
      await inspect(`webhook test delivery (${webhook.kind})`);
    });
  }
  // Reflected: the webhook form with a URL that cannot be read.
  await step("webhooks form refused", async () => {
    await page.goto(`${origin}/webhooks`);
    await page.getByLabel("URL", { exact: true }).fill(`http://"><svg onload=P('wf-url')>/`);
    // As a crafted request would: the browser's own URL check is no defence.
    await page.locator("form:has(#url)").evaluate((form) => (form.noValidate = true));
    await page.getByRole("button", { name: "Create webhook" }).click();
    await page.getByRole("alert").first().waitFor();
    await inspect("webhooks form refused");
  });

  // Custom fields.
  await step("custom fields", () => go("/custom-fields", "custom fields", "Custom fields"));
  for (const id of seeded.definitions) {
    await step(`custom field ${id}`, async () => {
      await page.goto(`${origin}/custom-fields/${id}`);
      await page.getByRole("heading", { name: /^Custom field/ }).first().waitFor();
      await inspect(`custom field ${id}`);
    });
  }
  // Reflected: a definition with a hostile name, slug and pattern, refused with its problems.
  await step("custom fields form refused", async () => {
    await page.goto(`${origin}/custom-fields`);
    await page.getByLabel("Name", { exact: true }).fill(CORPUS[0].text);
    await page.getByLabel("API slug").fill(CORPUS[1].text);
    await page.getByLabel("Pattern").fill(`(${CORPUS[2].text}`);
    await page.getByRole("button", { name: "Create custom field" }).click();
    await page.getByRole("alert").first().waitFor();
    await inspect("custom fields form refused");
  });

  // Track: the latest requests, and numbers typed in and uploaded.
  await step("track", () => go("/track", "track", "Track"));
  await step("track form", async () => {
    await page.getByLabel("Number", { exact: true }).fill(CORPUS[5].text.slice(0, 64));
    await page.getByRole("button", { name: "Track", exact: true }).click();
    await heading("Track").waitFor();
    await inspect("track form result");
  });
  await step("track upload", async () => {
    await page.getByLabel("File of numbers (CSV or XLSX)").setInputFiles({
      name: `${hostile("csv-file")}.csv`,
      mimeType: "text/csv",
      buffer: Buffer.from(`number,carrier\n"${CORPUS[1].text.replace(/"/g, '""')}",HLCU\n"${CORPUS[0].text.replace(/"/g, '""')}","${CORPUS[2].text.replace(/"/g, '""')}"\n`),
    });
    await page.getByRole("button", { name: "Upload numbers" }).click();
    await heading("Track").waitFor();
    await inspect("track upload result");
  });

  // Paths with hostile ids: pages that say what was not found.
  for (const path of ["/shipments/", "/documents/", "/webhooks/", "/custom-fields/"]) {
    await step(`not found: ${path}`, async () => {
      await page.goto(origin + path + encodeURIComponent(hostile("nf")));
      await inspect(`not found: ${path}`);
    });
  }

  await step("API keys", () => go("/api-keys", "API keys", "API keys"));
  await step("carriers", () => go("/carriers", "carriers", "Carriers"));

  // Every page's text; what had to be visible.
  for (const { where: pattern, text, what } of expectations) {
    const pages = Object.entries(texts).filter(([path]) => pattern.test(path));
    if (!pages.some(([, t]) => t.includes(text) || t.includes(text.toUpperCase())))
      fail(`[${run}] ${what}: ${JSON.stringify(text.slice(0, 80))} is not visible as text on ${pattern} (${pages.map(([p]) => p).join(", ") || "no such page visited"})`);
  }
  await context.close();
  return { fired, seen };
}

function allHostileMarkers() {
  const names = [
    "c-pol", "c-vessel", "c-voyage", "c-service", "c-facility", "c-iso", "c-locname", "c-eventid", "c-eventtype", "c-ctr", "c-cursor", "c-map-facility",
    "w-body", "w-header", "wh-hdr", "cf-name", "cf-desc", "tr-ref", "tr-tag", "tr-cf", "doc-name",
    "e-from", "e-subject", "e-body", "e-file1", "e-file3", "up-file", "csv-file", "link-bl", "wf-url",
    "edi-hold", "edi-city",
  ];
  return [
    ...names.map((n) => [n, hostile(n)]),
    ["c-map", voyageFor(NUM.mapCarrier).vesselName],
    ["doc-text", DOC_TEXT],
    ["doc-file", DOC_FILE],
    ["ais-base", "<BASE HREF=//E.CO>"],
    ["ais-style", "<STYLE ONLOAD=P(51)>"],
    ["c-ctr", hostile("c-ctr").slice(0, 35)],
  ];
}

// ---------------------------------------------------------------------------------------

let browser;
const runs = [];
try {
  await until("the server to start", async () => {
    try {
      return (await fetch(`${origin}/healthz`)).ok;
    } catch {
      return false;
    }
  }, { timeout: 30_000, every: 200 });
  console.log(`- AIS encoder checked against ${aisChecked} reference sentences`);
  console.log("- seeding hostile data through the API");
  await seedApi();
  console.log("- seeding through the carrier (polls) and the shipments' references, tags and fields");
  await seedShipments();
  console.log("- seeding through AIS (type 5 and type 1 over UDP)");
  await seedAis();
  console.log("- seeding through EDI (an X12 322 over HTTP)");
  await seedEdi();
  console.log("- seeding through email (SMTP)");
  await seedEmail();
  // The carrier whose cursor repeats is on the carriers page once it was tried.
  await until("the carrier's error with the repeated cursor", async () => {
    const r = await api("GET", `/v2/tracking_requests/${seeded.requests.find((r) => r.name === "cursor")?.id}`);
    return r.json?.data?.attributes?.status !== "pending" || carrierCalls.some((c) => c.includes(NUM.cursor));
  }).catch(() => note("the carrier with the repeated cursor was not called"));
  expect(/^\/carriers$/, hostile("c-cursor"), "carrier's repeated cursor in its last error");

  browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  for (const bypassCSP of [true, false]) {
    console.log(`- visiting every console page with CSP ${bypassCSP ? "off (bypassCSP)" : "on"}`);
    runs.push([bypassCSP, await visit(browser, bypassCSP)]);
  }
} catch (error) {
  fail(String(error?.stack ?? error));
} finally {
  await browser?.close();
  server.kill();
  carrier.close();
  receiver.close();
}

console.log("\ncoverage (field: accepted / refused corpus entries):");
for (const [field, { accepted, refused }] of Object.entries(coverage))
  console.log(`  ${field}: ${accepted.size} accepted${refused.size ? `, ${refused.size} refused (${[...refused].join(" ")})` : ""}`);
for (const [bypassCSP, { seen }] of runs) {
  if (!bypassCSP) continue;
  const markers = Object.keys(seen);
  console.log(`visible as text (CSP off): ${markers.length} markers`);
  if (verbose) for (const [marker, pages] of Object.entries(seen)) console.log(`  ${marker}: ${[...pages].join("; ")}`);
}
if (notes.length && verbose) console.log(`notes:\n  ${notes.join("\n  ")}`);
console.log(`time: ${((Date.now() - started) / 1000).toFixed(1)} s`);
if (failures.length) {
  console.error(`FAILED (${failures.length}):\n${[...new Set(failures)].join("\n")}`);
  process.exit(1);
}
console.log("security e2e: ok");
