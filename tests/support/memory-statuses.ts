/** An in-memory UserStatusReader for authorizer unit tests: tests set the states, and count reads. */
import { AppError } from '../../lib/errors.ts';
import type { UserStatus, UserStatusReader } from '../../lib/revocation/revocation.ts';

/** `failFor`: a username whose read fails as the DynamoDB reader's does when DynamoDB is unreachable. */
export function memoryStatuses(options: { failFor?: string } = {}) {
  /** A user's state; no revoked sessions unless a test names some. */
  const statuses = new Map<string, Omit<UserStatus, 'revokedSessions'> & Partial<UserStatus>>();
  let reads = 0;
  const reader: UserStatusReader = {
    async findStatus(username) {
      reads += 1;
      if (username === options.failFor) {
        throw new AppError('DEPENDENCY_UNAVAILABLE', { cause: new Error('DynamoDB unreachable') });
      }
      const status = statuses.get(username);
      return status === undefined ? null : { revokedSessions: new Set(), ...status };
    },
  };
  return { statuses, reader, reads: () => reads };
}
