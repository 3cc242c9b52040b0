/** An in-memory UserStatusReader for authorizer unit tests: tests set the states, and count reads. */
import type { UserStatus, UserStatusReader } from '../../lib/users/repository.ts';

export function memoryStatuses(options: { failFor?: string } = {}) {
  const statuses = new Map<string, UserStatus>();
  let reads = 0;
  const reader: UserStatusReader = {
    async findStatus(username) {
      reads += 1;
      if (username === options.failFor) throw new Error('DynamoDB unreachable');
      return statuses.get(username) ?? null;
    },
  };
  return { statuses, reader, reads: () => reads };
}
