/**
 * The five checks of `npm run smoke`, in order. Two logins per run and nothing else that
 * writes: the protected calls track a parcel number that is never issued, so they read only.
 */
import { ACCESS_TOKEN_TYPE, REFRESH_TOKEN_TYPE } from '../../lib/tokens/claims.ts';
import { type Answer, jsonObject, mediaType, type Outcome, type Requester, summarize } from './http.ts';
import { jwtProblem, tamperSignature } from './jwt.ts';

/** 14 digits, as tracking requires, but never issued: issued parcel numbers start with 1 to 9. */
export const MISSING_PARCEL_NUMBER = '00000000000000';

export type Verdict = 'pass' | 'fail' | 'skip';

export interface CheckResult {
  readonly name: string;
  readonly verdict: Verdict;
  /** The HTTP status, null without an answer. */
  readonly status: number | null;
  /** Milliseconds until the answer or the failure, null when skipped. */
  readonly ms: number | null;
  readonly detail: string;
}

export interface CheckContext {
  /** The API root, ending in /api/v1. */
  readonly api: string;
  readonly username: string;
  readonly password: string;
  readonly request: Requester;
  readonly now: () => Date;
  /** Told every token received, so that no output line can contain one. */
  readonly secret: (value: string) => void;
}

type Judgement = { readonly pass: boolean; readonly detail: string };
const pass = (detail: string): Judgement => ({ pass: true, detail });
const fail = (detail: string): Judgement => ({ pass: false, detail });

const judged = (name: string, outcome: Outcome, judge: (answer: Answer) => Judgement): CheckResult => {
  if (outcome.kind === 'error') {
    return { name, verdict: 'fail', status: null, ms: outcome.ms, detail: outcome.message };
  }
  const { pass: passed, detail } = judge(outcome.answer);
  return { name, verdict: passed ? 'pass' : 'fail', status: outcome.answer.status, ms: outcome.ms, detail };
};

const skipped = (name: string, detail: string): CheckResult => ({
  name,
  verdict: 'skip',
  status: null,
  ms: null,
  detail,
});

const unexpected = (expected: number, answer: Answer) => {
  const hint =
    answer.status === 403 || answer.status === 404
      ? '; is --base-url the stage address (with its stage)?'
      : '';
  return `expected ${expected}, got ${answer.status} (${summarize(answer)})${hint}`;
};

/** The JSON object of a 200 application/json answer, or why it is not one. */
function okJson(answer: Answer): { readonly body: Record<string, unknown> } | { readonly failed: Judgement } {
  if (answer.status !== 200) return { failed: fail(unexpected(200, answer)) };
  const body = jsonObject(answer);
  if (typeof body === 'string') return { failed: fail(body) };
  if (mediaType(answer) !== 'application/json') {
    return { failed: fail(`content-type is ${mediaType(answer) || 'missing'}, not application/json`) };
  }
  return { body };
}

const tokenProblem = (body: Record<string, unknown>) =>
  jwtProblem('token', body.token, ACCESS_TOKEN_TYPE) ??
  jwtProblem('refreshToken', body.refreshToken, REFRESH_TOKEN_TYPE);

const ISO_8601 = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)$/;

const inHours = (ms: number) =>
  `${Math.floor(ms / 3_600_000)} h ${Math.floor((ms % 3_600_000) / 60_000)} min`;

export async function* runChecks(ctx: CheckContext): AsyncGenerator<CheckResult> {
  const credentials = { username: ctx.username, password: ctx.password };
  const bodies: Record<string, unknown>[] = [];
  const logIn = async (path: string) => {
    const outcome = await ctx.request({ method: 'POST', url: `${ctx.api}${path}`, body: credentials });
    if (outcome.kind === 'answer') {
      const body = jsonObject(outcome.answer);
      if (typeof body !== 'string') {
        for (const key of ['token', 'refreshToken']) if (typeof body[key] === 'string') ctx.secret(body[key]);
        if (outcome.answer.status === 200) bodies.push(body);
      }
    }
    return outcome;
  };

  const login = await logIn('/login');
  yield judged('login', login, (answer) => {
    const json = okJson(answer);
    if ('failed' in json) return json.failed;
    const { body } = json;
    const problem = tokenProblem(body);
    return problem === null
      ? pass(`token ${ACCESS_TOKEN_TYPE}, refreshToken ${REFRESH_TOKEN_TYPE}`)
      : fail(problem);
  });

  const refused = login.kind === 'answer' && [401, 429].includes(login.answer.status);
  if (refused) {
    yield skipped(
      'login-extended',
      `not tried: login was refused (${login.answer.status}); another attempt would count towards the lockout`,
    );
  } else {
    const extended = await logIn('/login-extended');
    yield judged('login-extended', extended, (answer) => {
      const json = okJson(answer);
      if ('failed' in json) return json.failed;
      const { body } = json;
      const problem = tokenProblem(body);
      if (problem !== null) return fail(problem);
      if (body.userName !== ctx.username) return fail('userName is not SMOKE_USERNAME');
      if (typeof body.depotCode !== 'string') {
        return fail(
          body.depotCode === null
            ? "depotCode is null: the test user's customer has no pickup address with a depot code"
            : 'depotCode is not a string',
        );
      }
      const expireAt = body.expireAt;
      if (typeof expireAt !== 'string' || !ISO_8601.test(expireAt) || Number.isNaN(Date.parse(expireAt))) {
        return fail('expireAt is not an ISO 8601 timestamp');
      }
      const left = Date.parse(expireAt) - ctx.now().getTime();
      if (left <= 0) return fail(`expireAt ${expireAt} is not in the future`);
      return pass(`depotCode ${JSON.stringify(body.depotCode)}, expireAt in ${inHours(left)}`);
    });
  }

  const pick = (key: string) => bodies.map((body) => body[key]).find((value) => typeof value === 'string');
  const accessToken = pick('token');
  const refreshToken = pick('refreshToken');
  const tracking = `${ctx.api}/tracking/${MISSING_PARCEL_NUMBER}`;
  const track = (bearer: string) => ctx.request({ method: 'GET', url: tracking, bearer });

  if (typeof accessToken !== 'string') yield skipped('access token allowed', 'no access token from a login');
  else {
    yield judged('access token allowed', await track(accessToken), (answer) => {
      if (answer.status === 401 || answer.status === 403) {
        return fail(`the authorizer refused a fresh access token (${summarize(answer)})`);
      }
      if (answer.status !== 404) return fail(unexpected(404, answer));
      const body = jsonObject(answer);
      if (typeof body === 'string') return fail(body);
      if (
        mediaType(answer) !== 'application/problem+json' ||
        body.type !== 'urn:parcel-auth:problem:not-found'
      ) {
        return fail(`404, but not the function's not-found problem+json (${summarize(answer)})`);
      }
      return pass("past the authorizer: the function's 404 not-found");
    });
  }

  const refusedBy = (what: string) => (answer: Answer) => {
    if (answer.status === 401) return pass('401 from the authorizer');
    if (answer.status === 404 || (answer.status >= 200 && answer.status < 300)) {
      return fail(`the authorizer let ${what} through (${answer.status})`);
    }
    return fail(unexpected(401, answer));
  };

  if (typeof refreshToken !== 'string')
    yield skipped('refresh token refused', 'no refresh token from a login');
  else yield judged('refresh token refused', await track(refreshToken), refusedBy('a refresh token'));

  const tampered = typeof accessToken === 'string' ? tamperSignature(accessToken) : null;
  if (tampered === null) yield skipped('tampered token refused', 'no access token with a signature to alter');
  else yield judged('tampered token refused', await track(tampered), refusedBy('a tampered token'));
}
