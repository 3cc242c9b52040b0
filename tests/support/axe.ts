/** axe-core's audit of a page in the browser tests: the serious and critical violations, named. */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE_SOURCE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly nodes: readonly { readonly target: readonly string[] }[];
}
interface AxeGlobal {
  readonly axe: {
    run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }>;
  };
}

let source: Promise<string> | undefined;

/** The serious and critical violations axe-core finds on the page as it is now. */
export async function seriousViolations(on: Page) {
  source ??= readFile(AXE_SOURCE, 'utf8');
  // Evaluated by the DevTools protocol, which the page's CSP does not govern: a <script> tag
  // added to the page (page.addScriptTag) is inline script, which the CSP refuses.
  await on.evaluate(await source);
  const { violations } = await on.evaluate(() =>
    (globalThis as unknown as AxeGlobal).axe.run(globalThis, { resultTypes: ['violations'] }),
  );
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      nodes: violation.nodes.map((node) => node.target.join(' ')),
    }));
}
