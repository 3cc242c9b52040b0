/**
 * Section 11 of docs/PERFORMANCE.md: a platform's grants against their floors, and beside
 * node-oidc-provider on the same embedded DynamoDB (dev/bench/platform.ts).
 */
import { ms, SAMPLE_HEADER, sampleRow, table, times } from './report-format.ts';
import type { PlatformResult } from './results.ts';

/** The grants timed beside the peer, as the report names them. */
export const PEER_GRANTS = {
  clientCredentials: 'client credentials grant',
  exchange: 'code exchange',
  refresh: 'refresh',
} as const;

/** What the throttle's counting costs a grant: the bare authentication less its read alone. */
export const throttleCountingUs = ({ samples }: PlatformResult) =>
  samples.authentication.medianUs - samples.clientRead.medianUs;

/** Ours over HTTP ÷ the peer's, for each grant: as measured, and less the throttle's counting. */
export function peerRatios(result: PlatformResult) {
  const counting = throttleCountingUs(result);
  const { samples } = result;
  const pairs = {
    clientCredentials: [samples.httpClientCredentials, samples.peerClientCredentials],
    exchange: [samples.httpExchange, samples.peerExchange],
    refresh: [samples.httpRefresh, samples.peerRefresh],
  } as const;
  return Object.fromEntries(
    Object.entries(pairs).map(([grant, [ours, theirs]]) => [
      grant,
      {
        measured: ours.medianUs / theirs.medianUs,
        withoutCounting: (ours.medianUs - counting) / theirs.medianUs,
      },
    ]),
  ) as Record<keyof typeof pairs, { measured: number; withoutCounting: number }>;
}

export function platformSection(result: PlatformResult): string {
  const { samples } = result;
  const ratios = peerRatios(result);
  const derived = [
    ['Code exchange ÷ its floor', times(samples.exchange.medianUs / samples.exchangeFloor.medianUs)],
    ['Code exchange − its floor (own work)', ms(samples.exchange.medianUs - samples.exchangeFloor.medianUs)],
    ['Refresh ÷ its floor', times(samples.refresh.medianUs / samples.refreshFloor.medianUs)],
    ['Refresh − its floor (own work)', ms(samples.refresh.medianUs - samples.refreshFloor.medianUs)],
    ['The throttle’s counting (bare authentication − its GetItem)', ms(throttleCountingUs(result))],
    ...(Object.keys(PEER_GRANTS) as (keyof typeof PEER_GRANTS)[]).flatMap((key) => [
      [`Ours ÷ node-oidc-provider, ${PEER_GRANTS[key]}`, times(ratios[key].measured)],
      [
        `(Ours − the throttle’s counting) ÷ node-oidc-provider, ${PEER_GRANTS[key]}`,
        times(ratios[key].withoutCounting),
      ],
    ]),
  ];
  return [
    '## 11. A platform’s grants, and node-oidc-provider beside them (embedded DynamoDB on loopback)',
    '',
    '`POST /api/v1/oauth/token` with `grant_type=authorization_code` (a fresh code and its PKCE',
    'verifier) and `grant_type=refresh_token` (a connection’s current refresh token), each',
    'against the same work made bare; then ours and node-oidc-provider over HTTP through one',
    'client, each with its platform, codes and refresh tokens in the same embedded DynamoDB:',
    '[how it is measured](performance-design.md#a-platforms-grants-and-the-peer).',
    '',
    table(SAMPLE_HEADER, [
      sampleRow('Token handler, code exchange (form body, HTTP Basic)', samples.exchange),
      sampleRow(
        'Floor: the bare authentication, the code’s spend, the connection’s read, the session’s write, two signs',
        samples.exchangeFloor,
      ),
      sampleRow('Token handler, a connection’s refresh', samples.refresh),
      sampleRow(
        'Floor: the bare authentication, one jwtVerify, the connection’s read, the rotation’s write, two signs',
        samples.refreshFloor,
      ),
      sampleRow('The client authentication made bare (two steps, five requests)', samples.authentication),
      sampleRow('One consistent GetItem of the platform’s client item', samples.clientRead),
      sampleRow('Ours over HTTP, client credentials grant', samples.httpClientCredentials),
      sampleRow('node-oidc-provider over HTTP, client credentials grant', samples.peerClientCredentials),
      sampleRow('Ours over HTTP, code exchange', samples.httpExchange),
      sampleRow('node-oidc-provider over HTTP, code exchange', samples.peerExchange),
      sampleRow('Ours over HTTP, refresh', samples.httpRefresh),
      sampleRow('node-oidc-provider over HTTP, refresh', samples.peerRefresh),
    ]),
    '',
    table(['Derived from the medians', 'Value'], derived),
    '',
  ].join('\n');
}
