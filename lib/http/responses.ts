import type { QuotaState } from '../quota.ts';

/** Every answer is `no-store` unless it says otherwise: they carry tokens or a customer's shipments. */
export const BASE_HEADERS = { 'Cache-Control': 'no-store', Pragma: 'no-cache' } as const;

export interface Reply {
  readonly status: 200 | 201 | 204;
  readonly body: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  /** Seconds any cache may keep the answer; without it the answer is `no-store`. */
  readonly publicMaxAge?: number;
  /** What is left of the endpoint's published limits after this request (the RateLimit field). */
  readonly quota?: readonly QuotaState[];
}

export const ok = (body: unknown, quota?: readonly QuotaState[]): Reply => ({ status: 200, body, quota });
export const cacheable = (body: unknown, seconds: number): Reply => ({
  status: 200,
  body,
  publicMaxAge: seconds,
});
export const noContent = (): Reply => ({ status: 204, body: undefined });
export const created = (body: unknown, location: string): Reply => ({
  status: 201,
  body,
  headers: { Location: location },
});

export const jsonResponse = (statusCode: number, contentType: string, body: unknown, headers = {}) => ({
  statusCode,
  headers: { 'Content-Type': contentType, ...BASE_HEADERS, ...headers },
  body: JSON.stringify(body),
});
