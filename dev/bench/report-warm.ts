/**
 * The warm calls against their floors: the authorizer (section 1), the login functions
 * (section 2), the client credentials grant and token introspection (section 9).
 */
import { ms, SAMPLE_HEADER, sampleRow, table, times, us } from './report-format.ts';
import type { AuthorizerResult, GrantResult, LoginResult } from './results.ts';

const AUTHORIZER_LABEL: Record<string, string> = {
  '30s': 'revocation cache 30s (production: state read once per user per 30 s)',
  '0s': 'revocation cache 0s (every call reads the user with one GetItem)',
};

export function authorizerSection(results: readonly AuthorizerResult[]): string {
  const parts = results.map((result) => {
    const { handler, jose, joseMetrics, floor } = result.samples;
    const rows = [
      sampleRow('Real handler, REQUEST event', handler, us),
      sampleRow('Bare jose `jwtVerify` (same token, key, options)', jose, us),
      sampleRow(
        'Bare jose `jwtVerify` + the EMF line of an allowed call (Powertools, same stdout)',
        joseMetrics,
        us,
      ),
      sampleRow('Floor: bare node:crypto Ed25519 verify', floor, us),
    ];
    const ratios = [
      ['Handler ÷ (jose + EMF line)', times(handler.medianUs / joseMetrics.medianUs)],
      ['Handler ÷ jose', times(handler.medianUs / jose.medianUs)],
      ['Handler ÷ floor', times(handler.medianUs / floor.medianUs)],
      ['jose ÷ floor', times(jose.medianUs / floor.medianUs)],
    ];
    return [
      `### ${AUTHORIZER_LABEL[result.revocationCacheTtl] ?? `revocation cache ${result.revocationCacheTtl}`}`,
      '',
      table(SAMPLE_HEADER, rows),
      '',
      table(['Ratio of medians', 'Value'], ratios),
    ].join('\n');
  });
  return ['## 1. Authorizer, warm', '', ...parts.flatMap((part) => [part, ''])].join('\n');
}

/** `requests`: DynamoDB requests per login (section 3), to take their floor out of the overhead. */
export function loginSection(results: readonly LoginResult[], requests: number | undefined): string {
  const parts = results.map((result) => {
    const { login, loginExtended, compare, getItem, floor, knownSourceLogin, knownSourceFloor } =
      result.samples;
    const rows = [
      sampleRow('Login handler', login, ms),
      sampleRow('Login-extended handler', loginExtended, ms),
      sampleRow('bcryptjs `compare` alone (same password and hash)', compare, ms),
      sampleRow('One DynamoDB GetItem on loopback (same client settings)', getItem, ms),
      sampleRow('Floor: the compare between the two DynamoDB steps, made bare', floor, ms),
      sampleRow('Login handler from a known source, the name locked by strangers', knownSourceLogin, ms),
      sampleRow(
        'Known-source floor: the compare between the known-source path’s requests, made bare',
        knownSourceFloor,
        ms,
      ),
    ];
    const derived = [
      ['Login ÷ floor', times(login.medianUs / floor.medianUs)],
      ['Login-extended ÷ floor', times(loginExtended.medianUs / floor.medianUs)],
      ['Login − floor (own work)', ms(login.medianUs - floor.medianUs)],
      ['Login-extended − floor (own work)', ms(loginExtended.medianUs - floor.medianUs)],
      ['Login ÷ compare', times(login.medianUs / compare.medianUs)],
      ['Login-extended ÷ compare', times(loginExtended.medianUs / compare.medianUs)],
      ['Login − compare (overhead)', ms(login.medianUs - compare.medianUs)],
      ['Login-extended − compare (overhead)', ms(loginExtended.medianUs - compare.medianUs)],
      ...(requests === undefined
        ? []
        : [
            [
              `Login − compare − ${requests} × GetItem (own work beyond bcrypt and DynamoDB)`,
              ms(login.medianUs - compare.medianUs - requests * getItem.medianUs),
            ],
          ]),
      ['Known-source login ÷ floor', times(knownSourceLogin.medianUs / floor.medianUs)],
      ['Known-source login ÷ its floor', times(knownSourceLogin.medianUs / knownSourceFloor.medianUs)],
      [
        'Known-source login − its floor (own work)',
        ms(knownSourceLogin.medianUs - knownSourceFloor.medianUs),
      ],
      ['Known-source login ÷ login', times(knownSourceLogin.medianUs / login.medianUs)],
      ['Known-source login − login (the known-source path)', ms(knownSourceLogin.medianUs - login.medianUs)],
    ];
    return [
      `### bcrypt cost ${result.cost}${result.cost === 10 ? ' (production)' : ''}`,
      '',
      table(SAMPLE_HEADER, rows),
      '',
      table(['Derived from the medians', 'Value'], derived),
    ].join('\n');
  });
  return [
    '## 2. Login and login-extended, warm (embedded DynamoDB on loopback)',
    '',
    'Each against the same work made bare, and a login from a source the name knows while strangers',
    'have locked the name, beside the login and against its own floor:',
    '[the known-source path](performance-design.md#the-known-source-path).',
    '',
    ...parts.flatMap((part) => [part, '']),
  ].join('\n');
}

export function grantSection(result: GrantResult): string {
  const {
    grant,
    secretCheck,
    getItem,
    sign,
    floor,
    introspect,
    verify,
    introspectFloor,
    knownSourceGrant,
    knownSourceFloor,
    lastUseGrant,
    lastUseFloor,
    keyGrant,
    keyGrantFloor,
    dpopCall,
    dpopFloor,
  } = result.samples;
  const bare = secretCheck.medianUs + getItem.medianUs + sign.medianUs;
  const derived = [
    ['Grant ÷ floor', times(grant.medianUs / floor.medianUs)],
    ['Grant − floor (own work)', ms(grant.medianUs - floor.medianUs)],
    ['Grant ÷ (secret check + one GetItem + sign)', times(grant.medianUs / bare)],
    // The counters' requests are conditional writes, dearer on the embedded DynamoDB than a read.
    [
      "Floor − (secret check + one GetItem + sign): the throttle's four UpdateItems",
      ms(floor.medianUs - bare),
    ],
    ['Introspection ÷ its floor', times(introspect.medianUs / introspectFloor.medianUs)],
    ['Introspection − its floor (own work)', ms(introspect.medianUs - introspectFloor.medianUs)],
    ['Known-source grant ÷ floor', times(knownSourceGrant.medianUs / floor.medianUs)],
    ['Known-source grant ÷ its floor', times(knownSourceGrant.medianUs / knownSourceFloor.medianUs)],
    ['Known-source grant − its floor (own work)', ms(knownSourceGrant.medianUs - knownSourceFloor.medianUs)],
    ['Known-source grant ÷ grant', times(knownSourceGrant.medianUs / grant.medianUs)],
    ['Known-source grant − grant (the known-source path)', ms(knownSourceGrant.medianUs - grant.medianUs)],
    ['First grant of the hour ÷ its floor', times(lastUseGrant.medianUs / lastUseFloor.medianUs)],
    ['First grant of the hour − its floor (own work)', ms(lastUseGrant.medianUs - lastUseFloor.medianUs)],
    ['First grant of the hour ÷ grant', times(lastUseGrant.medianUs / grant.medianUs)],
    ['First grant of the hour − grant (the last-use write)', ms(lastUseGrant.medianUs - grant.medianUs)],
    ['private_key_jwt grant ÷ its floor', times(keyGrant.medianUs / keyGrantFloor.medianUs)],
    ['private_key_jwt grant − its floor (own work)', ms(keyGrant.medianUs - keyGrantFloor.medianUs)],
    ['private_key_jwt grant ÷ the secret’s grant', times(keyGrant.medianUs / grant.medianUs)],
    ['private_key_jwt grant − the secret’s grant (a key’s cost)', ms(keyGrant.medianUs - grant.medianUs)],
    ['DPoP call ÷ its floor', times(dpopCall.medianUs / dpopFloor.medianUs)],
    ['DPoP call − its floor (own work)', ms(dpopCall.medianUs - dpopFloor.medianUs)],
  ];
  return [
    '## 9. Client credentials grant and token introspection, warm (embedded DynamoDB on loopback)',
    '',
    '`POST /api/v1/oauth/token` with the client’s id and secret by HTTP Basic, and',
    '`POST /api/v1/oauth/introspect` of the token it issued (active, its client’s state in the',
    'revocation cache), each against the same work made bare:',
    '[how it is measured](performance-design.md#the-client-credentials-grant). Beside them, the grant',
    'from a source the client knows while strangers have locked the client, against its own floor:',
    '[the known-source path](performance-design.md#the-known-source-path); and the first grant of',
    'a secret’s hour, which writes the secret’s [last use](clients.md#last-use) beside the sign,',
    'against the floor with that write beside its sign; and a client of keys’ `private_key_jwt`',
    'grant, against the floor with the assertion’s jwtVerify and its `jti`’s conditional write',
    'in place of the secret check ([keys](clients.md#keys-instead-of-secrets)); and a protected',
    'call with a DPoP-bound token of the client (the authorizer’s handler, then the protected',
    'function’s proof check), against two jose verifies and the proof’s conditional write',
    '([tokens bound to a key](clients.md#tokens-bound-to-a-key)).',
    '',
    table(SAMPLE_HEADER, [
      sampleRow('Token handler, client credentials grant (form body, HTTP Basic)', grant),
      sampleRow('Secret check alone: SHA-256 and `timingSafeEqual` with two stored digests', secretCheck),
      sampleRow('One consistent GetItem of the client on loopback (same client settings)', getItem),
      sampleRow('One jose sign of the same token (same key)', sign),
      sampleRow(
        'Floor: the secret check between the grant’s two DynamoDB steps made bare, then the sign',
        floor,
      ),
      sampleRow('Introspection handler, the grant’s token (form body, HTTP Basic)', introspect),
      sampleRow('One jose jwtVerify of the token (the authorizer’s options)', verify),
      sampleRow(
        'Introspection floor: the same two DynamoDB steps and secret check, then the verify',
        introspectFloor,
      ),
      sampleRow('Token handler from a known source, the client locked by strangers', knownSourceGrant),
      sampleRow(
        'Known-source floor: the secret check between the known-source path’s requests made bare, then the sign',
        knownSourceFloor,
      ),
      sampleRow(
        'Token handler, the first grant of its secret’s hour (its last use due, and written)',
        lastUseGrant,
      ),
      sampleRow(
        'First-of-the-hour floor: the floor with the last use’s conditional UpdateItem beside the sign',
        lastUseFloor,
      ),
      sampleRow('Token handler, private_key_jwt grant (an Ed25519 assertion, two keys live)', keyGrant),
      sampleRow(
        'private_key_jwt floor: the two DynamoDB steps around the assertion’s jwtVerify and its jti’s conditional UpdateItem, then the sign',
        keyGrantFloor,
      ),
      sampleRow(
        'A call with a DPoP-bound token: the authorizer’s handler, then the protected function’s proof check (an ES256 proof)',
        dpopCall,
      ),
      sampleRow(
        'DPoP floor: jwtVerify of the token, jwtVerify of the proof with its embedded key, its jti’s conditional UpdateItem',
        dpopFloor,
      ),
    ]),
    '',
    table(['Derived from the medians', 'Value'], derived),
    '',
  ].join('\n');
}
