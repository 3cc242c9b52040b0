/**
 * The recent login's length, RECENT_LOGIN_SECONDS (lib/errors.ts), where the docs state it: the
 * API description's one sentence and docs/administrators.md, each in minutes, and the
 * `recent-login-required` examples of docs/openapi.yaml, which are the refusal's own detail;
 * and the administration refusals' examples beside them.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REFUSALS } from '../../lib/customer/administration.ts';
import { AppError, RECENT_LOGIN_SECONDS } from '../../lib/errors.ts';
import { problemResponse } from '../../lib/http/problems.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(resolve(ROOT, file), 'utf8').replace(/\s+/g, ' ');
const minutes = RECENT_LOGIN_SECONDS / 60;

describe('the recent login’s length in the docs', () => {
  it('is RECENT_LOGIN_SECONDS wherever docs/openapi.yaml and docs/administrators.md state it in minutes', () => {
    const stated = ['docs/openapi.yaml', 'docs/administrators.md'].flatMap((file) =>
      [...read(file).matchAll(/(?:within the last |RECENT_LOGIN_SECONDS` \()(\d+) minutes/g)].map(
        ([, value]) => `${file}: ${value}`,
      ),
    );
    expect(stated.length).toBeGreaterThanOrEqual(2);
    expect(stated).toEqual(stated.map((entry) => entry.replace(/\d+$/, String(minutes))));
  });

  it('shows in docs/openapi.yaml’s examples the detail the refusal sends', () => {
    const { detail } = JSON.parse(problemResponse(new AppError('RECENT_LOGIN_REQUIRED')).body) as {
      detail: string;
    };
    const examples = [
      ...read('docs/openapi.yaml').matchAll(/detail: '(This action needs a recent login[^']*)'/g),
    ];
    expect(examples.length).toBeGreaterThan(0);
    expect(examples.map(([, example]) => example)).toEqual(examples.map(() => detail));
  });
});

describe('the administration refusals in docs/openapi.yaml', () => {
  it('show the details the self-service API sends when an end would leave none, another is under way, or a secret is added to a client of keys', () => {
    const openapi = readFileSync(resolve(ROOT, 'docs/openapi.yaml'), 'utf8');
    expect(openapi).toContain(`detail: '${REFUSALS.lastAdministrator}'`);
    expect(openapi).toContain(`detail: '${REFUSALS.endInProgress}'`);
    expect(openapi).toContain(`detail: '${REFUSALS.otherCredentialKind}'`);
  });
});
