/**
 * A fetch for libraries that take one (oauth4webapi's `customFetch`, aws-jwt-verify's fetcher):
 * every answer they get is kept, and held to docs/openapi.yaml after the test. Not in the fetch
 * itself: what a custom fetch throws, a library reports as its own error, without ours.
 */
import { assertDocumented, type ObservedResponse } from './openapi.ts';

export interface AnswerLog {
  /** A fetch that keeps every answer; the answer is returned unread. */
  readonly fetch: (url: string, options: RequestInit & { readonly method: string }) => Promise<Response>;
  /** Keeps an answer got otherwise: the body parsed as JSON, else its text. */
  observe(method: string, url: string, response: Response): Promise<ObservedResponse>;
  /** The last answer kept. */
  last(): ObservedResponse;
  /** Holds every answer kept since the last call to docs/openapi.yaml (vitest's afterEach). */
  assertDocumented(): void;
}

export function answerLog(): AnswerLog {
  const answers: ObservedResponse[] = [];
  let checked = 0;

  async function observe(method: string, url: string, response: Response): Promise<ObservedResponse> {
    const text = await response.clone().text();
    let body: unknown = text === '' ? undefined : text;
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON: the contract check sees the raw text.
    }
    const observed = {
      method,
      path: new URL(url).pathname,
      status: response.status,
      contentType: response.headers.get('content-type'),
      body,
      headers: response.headers,
    };
    answers.push(observed);
    return observed;
  }

  return {
    async fetch(url, options) {
      const response = await fetch(url, options);
      await observe(options.method, url, response);
      return response;
    },
    observe,
    last() {
      const answer = answers.at(-1);
      if (answer === undefined) throw new Error('no answer yet');
      return answer;
    },
    assertDocumented() {
      const pending = answers.slice(checked);
      checked = answers.length;
      for (const answer of pending) assertDocumented(answer);
    },
  };
}
