/**
 * The audit trail's command of the admin CLI (`audit list`); what it prints is ops/admin/audit.ts.
 */
import type { Command as Program } from 'commander';
import { CustomerIdSchema } from '../../lib/accounts/repository.ts';
import { group, sub } from './help.ts';
import { AuditLimitSchema, type Command, once, valid } from './parse.ts';

export function addAuditCommands(program: Program, run: (command: Command) => void): void {
  const AUDIT =
    'Audit trail (every change of a credential by an operator, who is $AUDIT_ACTOR or else the\n' +
    "operating system's user, and every failed authentication of an existing API client: docs/admin.md)";
  const audit = group(program, 'audit', AUDIT, 'read the audit trail');
  sub(
    audit,
    'list',
    AUDIT,
    'the newest events first, as JSON Lines: at, customerId, type, actor (operator:<name> or ' +
      'client:<clientId>), source (operator or api), sourceIp, clientId, secretId, username, ' +
      'reason, as the event has them',
  )
    .option(
      '--customer <customerId>',
      "only the customer's events (one query; without it, a scan of every customer's)",
      once('customer', valid(CustomerIdSchema, '--customer')),
    )
    .option(
      '--limit <n>',
      'at most n events, 1 to 10000 (default 100)',
      once('limit', valid(AuditLimitSchema, '--limit')),
    )
    .action((options: { customer?: string; limit?: string }) =>
      run({ name: 'audit list', customerId: options.customer, limit: Number(options.limit ?? 100) }),
    );
}
