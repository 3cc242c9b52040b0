/** An in-memory ClientRepository for unit tests, with the DynamoDB store's rules (tests/support/stores.ts checks both alike). */
import {
  type ClientRecord,
  type ClientRepository,
  type CustomerClient,
  isPlatform,
  newCustomerClient,
  newPlatformClient,
  type PlatformClient,
} from '../../lib/clients/clients.ts';
import {
  LAST_USE_PRECISION_MS,
  liveSecrets,
  planSecretAddition,
  secretRemovalRefusal,
} from '../../lib/clients/secrets.ts';
import { AppError } from '../../lib/errors.ts';
import { redirectUrisAfter } from '../../lib/platforms/redirect-uris.ts';
import type { ConnectionStatusReader } from '../../lib/revocation/revocation.ts';
import {
  type ClientTokenRevoker,
  MAX_REVOKED_TOKENS,
  revocationCutoff,
} from '../../lib/revocation/revocation.ts';
import { type Clock, epochSeconds, systemClock } from '../../lib/time.ts';

export interface MemoryClients extends ClientRepository, ClientTokenRevoker {
  readonly records: Map<string, ClientRecord>;
  /** Client reads so far (findClient and findClientStatus). */
  reads(): number;
  /** Last-use writes so far that wrote (recordUse answering true). */
  useWrites(): number;
}

/**
 * `failFor`: that client's reads fail as an unreachable DynamoDB; `failUseWrites`: every
 * recordUse rejects so.
 */
export function memoryClients(
  options: { clock?: Clock; failFor?: string; failUseWrites?: boolean } = {},
): MemoryClients {
  const clock = options.clock ?? systemClock;
  const records = new Map<string, ClientRecord>();
  /** Each client's revoked tokens: jti → exp, as the client item's `revokedTokens`. */
  const revokedTokens = new Map<string, Map<string, number>>();
  let reads = 0;
  let useWrites = 0;
  const noSuchClient = () => new AppError('NOT_FOUND', { reason: 'no-such-client' });
  const get = (clientId: string) => {
    const record = records.get(clientId);
    if (record === undefined) throw noSuchClient();
    return record;
  };
  const put = (
    record: ClientRecord,
    changes: Partial<Pick<ClientRecord, 'enabled' | 'revokedBefore' | 'secrets'>> & { name?: string },
  ) =>
    records.set(record.clientId, { ...record, ...changes, updatedAt: clock().toISOString() } as ClientRecord);
  const read = (clientId: string) => {
    reads += 1;
    if (clientId === options.failFor)
      throw new AppError('DEPENDENCY_UNAVAILABLE', { cause: new Error('DynamoDB unreachable') });
    return records.get(clientId) ?? null;
  };
  return {
    records,
    reads: () => reads,
    useWrites: () => useWrites,
    async findClient(clientId) {
      return read(clientId);
    },
    async recordUse(clientId, secretId, at) {
      if (options.failUseWrites === true)
        throw new AppError('DEPENDENCY_UNAVAILABLE', { cause: new Error('DynamoDB unreachable') });
      const record = records.get(clientId);
      const secret = record?.secrets.find((live) => live.id === secretId);
      if (record === undefined || secret === undefined) return false;
      const due = at.getTime() - LAST_USE_PRECISION_MS;
      if (secret.lastUsedAt !== undefined && Date.parse(secret.lastUsedAt) > due) return false;
      const lastUsedAt = at.toISOString();
      // As the store: the client's is the latest of its secrets', and updatedAt stays.
      records.set(clientId, {
        ...record,
        secrets: record.secrets.map((live) => (live.id === secretId ? { ...live, lastUsedAt } : live)),
        lastUsedAt:
          record.lastUsedAt !== undefined && record.lastUsedAt > lastUsedAt ? record.lastUsedAt : lastUsedAt,
      });
      useWrites += 1;
      return true;
    },
    async findClientStatus(clientId) {
      const record = read(clientId);
      return record === null
        ? null
        : {
            enabled: record.enabled,
            revokedBefore: record.revokedBefore,
            secretIds: new Set(liveSecrets(record.secrets, clock()).map((secret) => secret.id)),
            revokedTokens: new Set(revokedTokens.get(clientId)?.keys()),
          };
    },
    async revokeClientToken(clientId, jti, until) {
      if (!records.has(clientId)) return 'revoked';
      const listed = revokedTokens.get(clientId) ?? new Map<string, number>();
      const now = epochSeconds(clock());
      for (const [id, exp] of listed) if (id !== jti && exp < now) listed.delete(id);
      if (!listed.has(jti) && listed.size >= MAX_REVOKED_TOKENS) return 'full';
      listed.set(jti, until);
      revokedTokens.set(clientId, listed);
      return 'revoked';
    },
    async createClient(client) {
      if (records.has(client.clientId))
        throw new AppError('ALREADY_EXISTS', { detail: 'a client with this id exists' });
      const record = newCustomerClient(client, clock().toISOString());
      records.set(client.clientId, record);
      return record;
    },
    async createPlatform(platform) {
      if (records.has(platform.clientId)) throw new AppError('ALREADY_EXISTS', { reason: 'client-exists' });
      const record = newPlatformClient(platform, clock().toISOString());
      records.set(platform.clientId, record);
      return record;
    },
    async listClients(customerId) {
      return [...records.values()]
        .filter((record): record is CustomerClient => !isPlatform(record))
        .filter((record) => customerId === undefined || record.customerId === customerId)
        .sort((a, b) => a.clientId.localeCompare(b.clientId));
    },
    async listPlatforms() {
      return [...records.values()].filter(isPlatform).sort((a, b) => a.clientId.localeCompare(b.clientId));
    },
    async changeRedirectUris(clientId, change) {
      const record = records.get(clientId);
      if (record === undefined || !isPlatform(record)) throw noSuchClient();
      const changed: PlatformClient = {
        ...record,
        platform: { redirectUris: redirectUrisAfter(record.platform.redirectUris, change) },
        updatedAt: clock().toISOString(),
      };
      records.set(clientId, changed);
      return changed;
    },
    async exportClients() {
      return [...records.values()].sort((a, b) => a.clientId.localeCompare(b.clientId));
    },
    async setClientEnabled(clientId, enabled) {
      const record = get(clientId);
      const cutoff = Math.max(revocationCutoff(clock()), record.revokedBefore + 1);
      put(record, enabled ? { enabled } : { enabled, revokedBefore: cutoff });
    },
    async renameClient(clientId, name) {
      put(get(clientId), { name });
    },
    async removeClient(clientId) {
      get(clientId);
      records.delete(clientId);
      revokedTokens.delete(clientId);
    },
    async addClientSecret(clientId, secret, { expireOthersAt } = {}) {
      const before = get(clientId);
      if (before.secrets.some((stored) => stored.id === secret.id))
        throw new AppError('ALREADY_EXISTS', { reason: 'secret-exists' });
      const now = clock();
      // The rules of every store; as the DynamoDB one, the expired pruned, updatedAt moved past the one read.
      const plan = planSecretAddition(before.secrets, now, expireOthersAt);
      if (plan.refused !== undefined) throw new AppError('CONFLICT', { reason: plan.refused });
      const { kept } = plan;
      const after: ClientRecord = {
        ...before,
        secrets: [...kept, secret],
        updatedAt: new Date(Math.max(now.getTime(), Date.parse(before.updatedAt) + 1)).toISOString(),
      };
      records.set(clientId, after);
      return { before, after };
    },
    async removeClientSecret(clientId, secretId, options = {}) {
      const record = get(clientId);
      const reason = secretRemovalRefusal(record.secrets, secretId, clock(), options);
      if (reason !== undefined)
        throw new AppError(reason === 'no-such-secret' ? 'NOT_FOUND' : 'CONFLICT', { reason });
      put(record, { secrets: record.secrets.filter((secret) => secret.id !== secretId) });
    },
  };
}

/** A revocation check's connections where a test has no platform: no connection exists. */
export const noConnections: ConnectionStatusReader = { findConnectionStatus: async () => null };
