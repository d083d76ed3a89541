// Parse every ```mermaid block of the Markdown files named on the command line with Mermaid's own parser.
// Prints one line per invalid block and a summary; exit 0 when all parse, 1 otherwise, 2 on a usage error.
import { readFileSync } from "node:fs";
import { JSDOM } from "jsdom";

const dom = new JSDOM("<!doctype html><html><body></body></html>");
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import("mermaid");
mermaid.initialize({ startOnLoad: false });

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: node check.mjs FILE.md...");
  process.exit(2);
}
let blocks = 0;
let invalid = 0;
for (const file of files) {
  const text = readFileSync(file, "utf8");
  for (const match of text.matchAll(/^```mermaid\n([\s\S]*?)\n```$/gm)) {
    blocks++;
    try {
      await mermaid.parse(match[1]);
    } catch (error) {
      invalid++;
      console.log(`${file}: invalid mermaid block ${blocks}: ${String(error.message || error).split("\n").join(" ")}`);
    }
  }
}
console.log(`${blocks} mermaid block(s), ${invalid} invalid`);
process.exit(invalid ? 1 : 0);
